import type { EntityManager } from '@mikro-orm/postgresql';
import { customFieldIndexName } from '../../db/custom-field-index';
import type { CustomField } from './field.entity';

/** The table a field's values live in. */
export const tableOf = (field: Pick<CustomField, 'objectType'>): string => (field.objectType === 'lead' ? 'leads' : 'deals');

/**
 * A unique field's own partial unique index, over its value within the account and mode (a partial index of that account's rows): the
 * database, not a read before the write, keeps two records from holding one value (a race cannot
 * slip between). Made in the transaction that defines the field; values already stored twice make
 * it fail, answered as a conflict. Keys are snake_case (checked by the input), so they are safe
 * inside the quoted identifiers and literals below.
 */
export async function createUniqueIndex(em: EntityManager, field: CustomField): Promise<void> {
  const name = customFieldIndexName(field.objectType, field.key, field.id);
  const account = field.account.id.replace(/'/g, "''");
  await em.execute(
    `create unique index "${name}" on "${tableOf(field)}" (("fields" -> '${field.key}')) where "account_id" = '${account}' and "livemode" = ${field.livemode} and ("fields" -> '${field.key}') is not null`,
  );
}

export async function dropUniqueIndex(em: EntityManager, field: CustomField): Promise<void> {
  await em.execute(`drop index if exists "${customFieldIndexName(field.objectType, field.key, field.id)}"`);
}
