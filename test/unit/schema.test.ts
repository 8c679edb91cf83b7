import { readFileSync } from 'node:fs';
import path from 'node:path';
import { printSortedSchema } from '../../src/graphql/schema';
import { createSchema } from '../../src/app/schema';

describe('schema.graphql', () => {
  it('matches the schema the code builds (run `npm run schema` after changing types)', async () => {
    const committed = readFileSync(path.resolve(__dirname, '../../schema.graphql'), 'utf8');
    expect(printSortedSchema(await createSchema())).toBe(committed);
  });
});
