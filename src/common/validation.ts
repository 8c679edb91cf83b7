/** For @ValidateIf on partial updates: a field left out is skipped, a field sent as null is checked (and refused where null is not allowed). */
export const sentAndNotUndefined = (_: object, value: unknown): boolean => value !== undefined;

/** A text made of spaces only would be stored empty. */
export const NOT_BLANK = /\S/;
