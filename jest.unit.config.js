/**
 * `npm run test:unit`: the tests that need no PostgreSQL, Redis or compiled dist/ (test/unit), in
 * seconds. Without the global setup, which compiles dist/ and starts or finds PostgreSQL; the setup
 * file takes the database settings away, so a test here that asks for one fails instead of quietly
 * needing a server (test/helpers/database.ts says where such a test belongs).
 */
const { globalSetup: _setup, globalTeardown: _teardown, ...base } = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/unit'],
  setupFiles: [...base.setupFiles, '<rootDir>/test/helpers/no-database.js'],
};
