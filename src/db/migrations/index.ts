import { MigrationObject } from '@mikro-orm/core';
import { Migration20261122035452 } from './Migration20261122035452';
import { Migration20261122041947 } from './Migration20261122041947';
import { Migration20261122042751 } from './Migration20261122042751';
import { Migration20261122051814 } from './Migration20261122051814';
import { Migration20261122054007 } from './Migration20261122054007';
import { Migration20261122054811 } from './Migration20261122054811';
import { Migration20261122060813 } from './Migration20261122060813';
import { Migration20261122062545 } from './Migration20261122062545';
import { Migration20261122095255 } from './Migration20261122095255';
import { Migration20261122095624 } from './Migration20261122095624';
import { Migration20261123100000 } from './Migration20261123100000';
import { Migration20261123110000 } from './Migration20261123110000';

/** Every migration, in order. A new migration is generated with `npm run migration:create` and listed here. */
export const migrations: MigrationObject[] = [
  { name: 'Migration20261122035452', class: Migration20261122035452 },
  { name: 'Migration20261122041947', class: Migration20261122041947 },
  { name: 'Migration20261122042751', class: Migration20261122042751 },
  { name: 'Migration20261122051814', class: Migration20261122051814 },
  { name: 'Migration20261122054007', class: Migration20261122054007 },
  { name: 'Migration20261122054811', class: Migration20261122054811 },
  { name: 'Migration20261122060813', class: Migration20261122060813 },
  { name: 'Migration20261122062545', class: Migration20261122062545 },
  { name: 'Migration20261122095255', class: Migration20261122095255 },
  { name: 'Migration20261122095624', class: Migration20261122095624 },
  { name: 'Migration20261123100000', class: Migration20261123100000 },
  { name: 'Migration20261123110000', class: Migration20261123110000 },
];
