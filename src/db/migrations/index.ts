import { MigrationObject } from '@mikro-orm/core';
import { Migration20261122035452 } from './Migration20261122035452';

/** Every migration, in order. A new migration is generated with `npm run migration:create` and listed here. */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261122035452', class: Migration20261122035452 },
];
