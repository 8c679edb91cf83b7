import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { orphanedOutputs, staleReason } from '../../scripts/build';

/**
 * scripts/build.js decides whether `npm start`, `npm run cli` and the tests compile before they run
 * dist/: never after no change (tsc takes most of a minute), always after one, and again after a
 * build that failed. Checked on a small project in a temporary folder; test/integration/build.test.ts
 * runs tsc on one.
 */
describe('scripts/build.js', () => {
  let root: string;
  const write = (file: string, text = '', ageS = 0) => {
    const full = path.join(root, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, text);
    const when = new Date(Date.now() - ageS * 1000);
    utimesSync(full, when, when);
  };
  /** A finished build, dated `ageS` seconds ago (what build() leaves behind). */
  const finishedBuild = (ageS: number, project = 'tsconfig.build.json') =>
    write(`dist/.build-finished.${project.replace(/\.json$/, '')}`, `${project}\n`, ageS);

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'spa-build-'));
    write('package-lock.json', '{}', 600);
    write('tsconfig.json', JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: '.', strict: true } }), 600);
    write('tsconfig.build.json', JSON.stringify({ extends: './tsconfig.json', include: ['src'] }), 600);
    write('tsconfig.bench.json', JSON.stringify({ extends: './tsconfig.build.json', include: ['src', 'bench'] }), 600);
    write('src/a.ts', 'export const a: number = 1;\n', 600);
    write('src/a.test.ts', '', 600);
    write('src/types.d.ts', '', 600);
    write('bench/b.ts', 'export const b = 2;\n', 600);
    write('dist/src/a.js', '', 300);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is up to date when no source, setting or lockfile changed since a finished build', () => {
    finishedBuild(300);
    expect(staleReason('tsconfig.build.json', root)).toBeUndefined();
  });

  it('compiles when no build has finished', () => {
    expect(staleReason('tsconfig.build.json', root)).toBe('no finished build of tsconfig.build.json in dist/');
  });

  it("keeps one mark per project: a later build of the service's project does not pass for the bench's", () => {
    finishedBuild(400, 'tsconfig.bench.json');
    write('dist/bench/b.js', '', 400);
    write('bench/b.ts', 'export const b = 3;\n', 350);
    finishedBuild(300);
    expect(staleReason('tsconfig.build.json', root)).toBeUndefined();
    expect(staleReason('tsconfig.bench.json', root)).toBe('bench/b.ts changed');
  });

  it('compiles when a source, a tsconfig it reads or the lockfile changed', () => {
    finishedBuild(300);
    write('src/a.ts', 'export const a = 3;\n');
    expect(staleReason('tsconfig.build.json', root)).toBe('src/a.ts changed');
    write('src/a.ts', 'export const a = 3;\n', 600);
    write('tsconfig.json', '{}');
    expect(staleReason('tsconfig.build.json', root)).toBe('tsconfig.json changed');
    write('tsconfig.json', '{}', 600);
    write('package-lock.json', '{}');
    expect(staleReason('tsconfig.build.json', root)).toBe('package-lock.json changed');
  });

  it('compiles when a source has no output, even an old one', () => {
    finishedBuild(300);
    write('src/old.ts', '', 900);
    expect(staleReason('tsconfig.build.json', root)).toBe('src/old.ts is not compiled yet');
  });

  it('leaves a folder with a tsconfig of its own (the web workspace, bundled by build-web.js) to that project', () => {
    finishedBuild(300);
    write('src/web/workspace/tsconfig.json', '{}', 600);
    write('src/web/workspace/api.ts', 'export const b = 2;\n');
    expect(staleReason('tsconfig.build.json', root)).toBeUndefined();
    write('src/other/api.ts', 'export const b = 2;\n');
    expect(staleReason('tsconfig.build.json', root)).toBe('src/other/api.ts changed');
  });

  it('compiles when an output has lost its source, and names every orphan (a file moved into a folder of the same name)', () => {
    finishedBuild(300);
    write('dist/src/gone.js', '', 300);
    write('dist/src/gone.js.map', '', 300);
    write('dist/src/gone.d.ts', '', 300);
    write('dist/src/a/index.js', '', 300);
    write('src/kept.js', '', 600);
    write('dist/src/kept.js', '', 300);
    expect(staleReason('tsconfig.build.json', root)).toMatch(/^dist\/src\/(a\/index\.js|gone\.(js|js\.map|d\.ts)) has no source any more$/);
    expect(orphanedOutputs('tsconfig.build.json', root).sort()).toEqual([
      'dist/src/a/index.js',
      'dist/src/gone.d.ts',
      'dist/src/gone.js',
      'dist/src/gone.js.map',
    ]);
  });

  it('ignores tests and declaration files, and reads what each tsconfig includes', () => {
    finishedBuild(300);
    finishedBuild(300, 'tsconfig.bench.json');
    write('src/a.test.ts');
    write('src/types.d.ts');
    expect(staleReason('tsconfig.build.json', root)).toBeUndefined();
    expect(staleReason('tsconfig.bench.json', root)).toBe('bench/b.ts is not compiled yet');
  });
});
