/**
 * Input text as it is stored: trimmed, blank text is no value (null), and fields named in
 * `special` get their own treatment instead (lower-cased e-mail, upper-cased currency).
 */
export function normalizedText<T extends object>(fields: T, special: Record<string, (trimmed: string) => string> = {}): T {
  const out: Record<string, unknown> = { ...(fields as Record<string, unknown>) };
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value !== 'string') continue;
    const trimmed = value.trim();
    out[name] = special[name] ? special[name](trimmed) : trimmed === '' ? null : trimmed;
  }
  return out as T;
}
