import { createHash } from 'node:crypto';

/**
 * The unique index of one unique custom field (issue 68): `cfu_<object>_<key>_<8 hex of the field's
 * id>`, at most 58 characters (PostgreSQL keeps 63). The name carries the object and key, so a
 * violation is answered naming `fields.<key>` (database-errors.ts) without a lookup.
 */
export const customFieldIndexName = (object: string, key: string, fieldId: string): string =>
  `cfu_${object}_${key}_${createHash('sha256').update(fieldId).digest('hex').slice(0, 8)}`;

const NAME = /^cfu_(lead|deal)_([a-z][a-z0-9_]*)_[0-9a-f]{8}$/;

/** The object and key a unique custom field's index names, or undefined for another index. */
export function customFieldOfIndex(name: string): { object: string; key: string } | undefined {
  const match = NAME.exec(name);
  return match ? { object: match[1], key: match[2] } : undefined;
}
