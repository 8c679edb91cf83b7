/**
 * The part of SOQL ("SOQL and SOSL Reference") the fake Salesforce answers, enough for the
 * changes queries of src/modules/integrations/providers/salesforce-mapping.ts:
 *
 *   SELECT f1, f2, … FROM Lead|Opportunity
 *   [WHERE <condition>]           -- comparisons of SystemModstamp or Id with a literal, AND, OR, ( )
 *   [ORDER BY field [ASC|DESC], …]
 *   [LIMIT n]
 *
 * dateTime literals are unquoted ("Date Formats and Date Literals in WHERE": 2026-11-24T06:30:00Z,
 * with optional fractional seconds or a ±hh:mm offset); strings are in single quotes. Anything
 * else is refused the way Salesforce refuses it: 400 MALFORMED_QUERY.
 */

export class SoqlError extends Error {
  constructor(
    readonly errorCode: 'MALFORMED_QUERY' | 'INVALID_FIELD' | 'INVALID_TYPE',
    message: string,
  ) {
    super(message);
  }
}

type Value = number | string;
export type Condition =
  { kind: 'compare'; field: string; op: '=' | '!=' | '>' | '>=' | '<' | '<='; value: Value } | { kind: 'and' | 'or'; left: Condition; right: Condition };

export interface SoqlQuery {
  fields: string[];
  object: string;
  where: Condition | null;
  orderBy: Array<{ field: string; descending: boolean }>;
  limit: number | null;
}

const TOKEN = /\s*(>=|<=|!=|[=<>(),]|'(?:[^'\\]|\\.)*'|[A-Za-z0-9_.:+-]+)/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const start = TOKEN.lastIndex;
    const match = TOKEN.exec(text);
    if (!match) {
      if (/^\s*$/.test(text.slice(start))) break;
      throw new SoqlError('MALFORMED_QUERY', `unexpected token at ${text.slice(start, start + 20)}`);
    }
    tokens.push(match[1]);
  }
  return tokens;
}

const DATETIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?(Z|[+-]\d\d:\d\d)$/;

export function parseSoql(text: string): SoqlQuery {
  const tokens = tokenize(text);
  let at = 0;
  const peek = () => tokens[at]?.toUpperCase();
  const next = () => {
    if (at >= tokens.length) throw new SoqlError('MALFORMED_QUERY', 'unexpected end of query');
    return tokens[at++];
  };
  const expect = (word: string) => {
    const token = next();
    if (token.toUpperCase() !== word) throw new SoqlError('MALFORMED_QUERY', `expecting '${word}', found '${token}'`);
  };

  expect('SELECT');
  const fields = [next()];
  while (peek() === ',') {
    next();
    fields.push(next());
  }
  expect('FROM');
  const object = next();

  const literal = (token: string): Value => {
    if (token.startsWith("'")) return token.slice(1, -1).replace(/\\(.)/g, '$1');
    if (DATETIME.test(token)) return Date.parse(token);
    throw new SoqlError('MALFORMED_QUERY', `unexpected value '${token}': dateTime literals are unquoted ISO 8601, strings are in single quotes`);
  };
  const factor = (): Condition => {
    if (peek() === '(') {
      next();
      const inner = orExpression();
      expect(')');
      return inner;
    }
    const field = next();
    const op = next();
    if (!['=', '!=', '>', '>=', '<', '<='].includes(op)) throw new SoqlError('MALFORMED_QUERY', `unexpected operator '${op}'`);
    return { kind: 'compare', field, op: op as '=', value: literal(next()) };
  };
  const andExpression = (): Condition => {
    let left = factor();
    while (peek() === 'AND') {
      next();
      left = { kind: 'and', left, right: factor() };
    }
    return left;
  };
  const orExpression = (): Condition => {
    let left = andExpression();
    while (peek() === 'OR') {
      next();
      left = { kind: 'or', left, right: andExpression() };
    }
    return left;
  };

  let where: Condition | null = null;
  if (peek() === 'WHERE') {
    next();
    where = orExpression();
  }
  const orderBy: SoqlQuery['orderBy'] = [];
  if (peek() === 'ORDER') {
    next();
    expect('BY');
    for (;;) {
      const field = next();
      let descending = false;
      if (peek() === 'ASC' || peek() === 'DESC') descending = next().toUpperCase() === 'DESC';
      orderBy.push({ field, descending });
      if (peek() !== ',') break;
      next();
    }
  }
  let limit: number | null = null;
  if (peek() === 'LIMIT') {
    next();
    const value = next();
    if (!/^\d+$/.test(value)) throw new SoqlError('MALFORMED_QUERY', `LIMIT must be a number, found '${value}'`);
    limit = Number(value);
  }
  if (at < tokens.length) throw new SoqlError('MALFORMED_QUERY', `unexpected token: '${tokens[at]}'`);
  return { fields, object, where, orderBy, limit };
}

/** A field's value for comparing and ordering: dateTime fields as milliseconds, everything else as it is. */
export type FieldReader = (record: Record<string, unknown>, field: string) => Value | null;

export function matches(condition: Condition, record: Record<string, unknown>, read: FieldReader): boolean {
  if (condition.kind !== 'compare') {
    const left = matches(condition.left, record, read);
    return condition.kind === 'and' ? left && matches(condition.right, record, read) : left || matches(condition.right, record, read);
  }
  const value = read(record, condition.field);
  if (value === null) return condition.op === '!=';
  const wanted = condition.value;
  if (typeof value !== typeof wanted) throw new SoqlError('MALFORMED_QUERY', `value of incorrect type for ${condition.field}`);
  switch (condition.op) {
    case '=':
      return value === wanted;
    case '!=':
      return value !== wanted;
    case '>':
      return value > wanted;
    case '>=':
      return value >= wanted;
    case '<':
      return value < wanted;
    default:
      return value <= wanted;
  }
}

export function compareBy(orderBy: SoqlQuery['orderBy'], read: FieldReader) {
  return (a: Record<string, unknown>, b: Record<string, unknown>): number => {
    for (const { field, descending } of orderBy) {
      const left = read(a, field);
      const right = read(b, field);
      if (left === right) continue;
      // Salesforce puts nulls first in ascending order by default.
      const order = left === null ? -1 : right === null ? 1 : left < right ? -1 : 1;
      return descending ? -order : order;
    }
    return 0;
  };
}

/** Every field a condition names. */
export function conditionFields(condition: Condition | null): string[] {
  if (condition === null) return [];
  if (condition.kind === 'compare') return [condition.field];
  return [...conditionFields(condition.left), ...conditionFields(condition.right)];
}
