/** Regenerates the committed schema.graphql from the code (a test fails when the two differ). */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { printSortedSchema } from '../src/graphql/schema';
import { createSchema } from '../src/app/schema';

createSchema()
  .then((schema) => {
    const file = path.resolve(__dirname, '../../schema.graphql');
    writeFileSync(file, printSortedSchema(schema));
    console.log(`wrote ${file}`);
  })
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
