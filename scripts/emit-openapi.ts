/** Regenerates the committed openapi.json from the route table and the GraphQL types (a test fails when the two differ). */
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSchema } from '../src/app/schema';
import { buildOpenApi, DEFAULT_SERVER_URL } from '../src/rest/openapi';
import { EVENTS, ROUTES } from '../src/app/modules';

const root = path.resolve(__dirname, '../..');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };

createSchema()
  .then((schema) => {
    const file = path.join(root, 'openapi.json');
    writeFileSync(file, `${JSON.stringify(buildOpenApi(schema, ROUTES, { version, serverUrl: DEFAULT_SERVER_URL, events: EVENTS }), null, 2)}\n`);
    console.log(`wrote ${file}`);
  })
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
