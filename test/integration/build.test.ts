import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { build, staleReason } from '../../scripts/build';

/**
 * scripts/build.js running tsc on a one-file project: it compiles when needed, not again after no
 * change, and a build with type errors (tsc emits anyway) does not pass for a finished one.
 * The decisions alone are in test/unit/build.test.ts.
 */
describe('scripts/build.js with tsc', () => {
  let root: string;
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  };

  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'spa-build-'));
    write('package-lock.json', '{}');
    write('tsconfig.build.json', JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: '.', strict: true }, include: ['src'] }));
    write('src/a.ts', 'export const a: number = 1;\n');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('builds once, not again until a change, and again after a failed build', () => {
    expect(build('tsconfig.build.json', { root, quiet: true })).toBe(true);
    expect(staleReason('tsconfig.build.json', root)).toBeUndefined();
    expect(build('tsconfig.build.json', { root, quiet: true })).toBe(false);

    write('src/a.ts', 'export const a: number = "not a number";\n');
    expect(() => build('tsconfig.build.json', { root, quiet: true })).toThrow();
    expect(staleReason('tsconfig.build.json', root)).toBe('no finished build of tsconfig.build.json in dist/');
  });
});

/**
 * The web workspace (src/web/workspace, Preact TSX bundled by esbuild, which strips types without
 * checking them) has a tsconfig of its own, outside the server's: its types are checked here, so
 * `npm test` fails on a type error in the client as it does in the server.
 */
describe('the web workspace', () => {
  it('type-checks with its own tsconfig', () => {
    const root = path.resolve(__dirname, '..', '..');
    const tsc = require.resolve('typescript/bin/tsc');
    expect(() =>
      execFileSync(process.execPath, [tsc, '--noEmit', '-p', path.join(root, 'src', 'web', 'workspace', 'tsconfig.json')], { cwd: root, stdio: 'pipe' }),
    ).not.toThrow();
  });
});
