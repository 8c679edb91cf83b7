/**
 * The import graph of src/ has no circle (type-only imports count: they are arrows too), so every
 * layer can be loaded, read and tested from below (issue 65). madge reads the graph as TypeScript
 * resolves it; the fixture proves it sees a circle made of type-only imports.
 */
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import madge from 'madge';

const ROOT = path.resolve(__dirname, '../..');

const circlesIn = async (dir: string): Promise<string[][]> =>
  (
    await madge(dir, { fileExtensions: ['ts', 'tsx'], tsConfig: path.join(ROOT, 'tsconfig.json'), detectiveOptions: { ts: { skipTypeImports: false } } })
  ).circular();

describe('the import graph', () => {
  it('has no circle in src', async () => {
    expect(await circlesIn(path.join(ROOT, 'src'))).toEqual([]);
  });

  it('would show a circle of type-only imports', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'import-graph-'));
    try {
      writeFileSync(path.join(dir, 'a.ts'), "import type { B } from './b';\nexport interface A { b: B }\n");
      writeFileSync(path.join(dir, 'b.ts'), "import type { A } from './a';\nexport interface B { a?: A }\n");
      expect(await circlesIn(dir)).toEqual([['a.ts', 'b.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
