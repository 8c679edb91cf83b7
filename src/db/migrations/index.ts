import { MigrationObject } from '@mikro-orm/core';
import { Migration20261122035452 } from './Migration20261122035452';
import { Migration20261122041947 } from './Migration20261122041947';
import { Migration20261122042751 } from './Migration20261122042751';

/** Every migration, in order. A new migration is generated with `npm run migration:create` and listed here. */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261122035452', class: Migration20261122035452 },
  { name: 'Migration20261122041947', class: Migration20261122041947 },
  { name: 'Migration20261122042751', class: Migration20261122042751 },
];
