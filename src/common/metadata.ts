import { registerDecorator, ValidationOptions } from 'class-validator';

export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 };

/** Why a metadata object is not acceptable, or undefined when it is (CONTRACT §1). */
export function metadataProblem(value: unknown, allowNullValues: boolean): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be an object of string keys to string values';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > METADATA_LIMITS.keys) return `must have at most ${METADATA_LIMITS.keys} keys`;
  for (const [key, item] of entries) {
    if (key.length === 0 || key.length > METADATA_LIMITS.keyLength) return `keys must be 1 to ${METADATA_LIMITS.keyLength} characters`;
    if (item === null && allowNullValues) continue;
    if (typeof item !== 'string') return `value of "${key}" must be a string${allowNullValues ? ' (or null to remove it)' : ''}`;
    if (item.length > METADATA_LIMITS.valueLength) return `value of "${key}" must be at most ${METADATA_LIMITS.valueLength} characters`;
  }
  return undefined;
}

/** Validates a `metadata` input; on updates, `null` values remove keys. */
export function IsMetadata(options: { allowNullValues: boolean }, validationOptions?: ValidationOptions) {
  return (target: object, propertyName: string) => {
    registerDecorator({
      name: 'isMetadata',
      target: target.constructor,
      propertyName,
      constraints: [options],
      options: validationOptions,
      validator: {
        validate: (value: unknown) => metadataProblem(value, options.allowNullValues) === undefined,
        defaultMessage: (args) => `${args?.property} ${metadataProblem(args?.value, options.allowNullValues)}`,
      },
    });
  };
}

/** Applies a metadata patch: keys with null are removed, others set. */
export function mergeMetadata(current: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
  const next = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** The merged object must still respect the key limit. */
export function metadataSizeProblem(merged: Record<string, string>): string | undefined {
  return Object.keys(merged).length > METADATA_LIMITS.keys ? `metadata must have at most ${METADATA_LIMITS.keys} keys` : undefined;
}
