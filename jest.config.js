/** @type {import('jest').Config} */
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

/**
 * openid-client and the libraries under it (oauth4webapi, jose) ship as ES modules only. Node
 * (20.19 and later) requires them from the compiled CommonJS as they are; jest's CommonJS runtime
 * cannot before Node 24.9, so jest compiles them to CommonJS with swc like our own files.
 */
const ESM_ONLY = ['openid-client', 'oauth4webapi', 'jose'];
const swcEsm = ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } }];

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc, [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: swcEsm },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  setupFiles: ['reflect-metadata'],
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
  maxWorkers: 2,
  // A bound against hangs, not a speed check: tests wait for conditions (test/helpers/timeouts.ts, TEST_TIMEOUT_MS).
  testTimeout: 300_000,
  // Time a worker has to exit after its last file (jest's default: 500 ms, then "A worker process has
  // failed to exit gracefully"). No test leaves anything that keeps a worker alive: checked after
  // every file with process.getActiveResourcesInfo() and at jest's end message, which is how the
  // one leak was found and closed (a webhook receiver's 60 s reply timer). What remained came and
  // went between identical runs on a busy machine, with nothing left running: the exit itself
  // (V8 and libuv teardown of a worker that ran hundreds of tests) outlasting 500 ms.
  workerGracefulExitTimeout: 10_000,
};
