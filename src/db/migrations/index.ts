import { readdirSync } from 'node:fs';
import path from 'node:path';
import { MigrationObject } from '@mikro-orm/core';

/**
 * Every migration beside this file, in the order of their names (the time they were made): a file
 * `npm run migration:create` writes needs no listing. The classes are loaded here, not found by
 * MikroORM's glob, so the same list serves the compiled service (dist/, .js) and the tests (.ts).
 */
export const migrations: MigrationObject[] = readdirSync(__dirname)
  .filter((file) => /^Migration\d{14}\.(js|ts)$/.test(file))
  .sort()
  .map((file) => {
    const name = file.replace(/\.(js|ts)$/, '');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file found at run time, .ts under the tests and .js in dist/
    const loaded = require(path.join(__dirname, file)) as Record<string, MigrationObject['class']>;
    return { name, class: loaded[name] };
  });
