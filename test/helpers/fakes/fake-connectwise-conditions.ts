/**
 * The `conditions` and `childConditions` query parameters of ConnectWise PSA's REST API, as its
 * Developer Guide describes them: `path operator value` clauses joined by `and` / `or` (either
 * case) and grouped with parentheses. A path walks into references with `/` (`company/id`,
 * `status/name`); values are "double-quoted strings" (a `\"` inside one is a quote), numbers,
 * true/false, null, or [date-times] in square brackets. Operators: = != < <= > >= (string
 * comparisons ignore case, as on a site's default SQL Server collation), `contains`, `like` (`%`
 * is any run of characters) and `in (…)`, each of which `not` may precede. Something else is a
 * 400, as a site answers.
 */

type Value = string | number | boolean | null;
type Node = { kind: 'clause'; path: string[]; operator: string; negated: boolean; value: Value | Value[] } | { kind: 'and' | 'or'; left: Node; right: Node };

export class ConditionsError extends Error {}

const OPERATORS = ['<=', '>=', '!=', '=', '<', '>'];

class Parser {
  private at = 0;
  constructor(private readonly text: string) {}

  parse(): Node {
    const node = this.or();
    this.space();
    if (this.at < this.text.length) throw new ConditionsError(`unexpected text at ${this.at}: ${this.text.slice(this.at, this.at + 20)}`);
    return node;
  }

  private or(): Node {
    let left = this.and();
    while (this.word('or')) left = { kind: 'or', left, right: this.and() };
    return left;
  }

  private and(): Node {
    let left = this.term();
    while (this.word('and')) left = { kind: 'and', left, right: this.term() };
    return left;
  }

  private term(): Node {
    this.space();
    if (this.text[this.at] === '(') {
      this.at++;
      const node = this.or();
      this.expect(')');
      return node;
    }
    const path = this.path();
    const negated = this.word('not');
    for (const word of ['contains', 'like', 'in']) {
      if (this.word(word)) return { kind: 'clause', path, operator: word, negated, value: word === 'in' ? this.list() : this.value() };
    }
    this.space();
    const operator = OPERATORS.find((candidate) => this.text.startsWith(candidate, this.at));
    if (!operator || negated) throw new ConditionsError(`expected an operator after ${path.join('/')}`);
    this.at += operator.length;
    return { kind: 'clause', path, operator, negated: false, value: this.value() };
  }

  private path(): string[] {
    this.space();
    const match = /^[A-Za-z_][A-Za-z0-9_/]*/.exec(this.text.slice(this.at));
    if (!match) throw new ConditionsError(`expected a field at ${this.at}`);
    this.at += match[0].length;
    return match[0].split('/');
  }

  private list(): Value[] {
    this.expect('(');
    const values: Value[] = [this.value()];
    for (this.space(); this.text[this.at] === ','; this.space()) {
      this.at++;
      values.push(this.value());
    }
    this.expect(')');
    return values;
  }

  private value(): Value {
    this.space();
    const rest = this.text.slice(this.at);
    if (rest.startsWith('"')) {
      let out = '';
      for (let i = 1; i < rest.length; i++) {
        if (rest[i] === '\\' && i + 1 < rest.length) out += rest[++i];
        else if (rest[i] === '"') {
          this.at += i + 1;
          return out;
        } else out += rest[i];
      }
      throw new ConditionsError('unterminated string');
    }
    const date = /^\[([^\]]+)\]/.exec(rest);
    if (date) {
      this.at += date[0].length;
      return date[1];
    }
    const literal = /^(true|false|null|-?\d+(\.\d+)?)\b/i.exec(rest);
    if (!literal) throw new ConditionsError(`expected a value at ${this.at}`);
    this.at += literal[0].length;
    const word = literal[0].toLowerCase();
    return word === 'true' ? true : word === 'false' ? false : word === 'null' ? null : Number(literal[0]);
  }

  private word(word: string): boolean {
    this.space();
    const match = new RegExp(`^${word}(?![A-Za-z0-9_])`, 'i').exec(this.text.slice(this.at));
    if (!match) return false;
    this.at += match[0].length;
    return true;
  }

  private expect(char: string): void {
    this.space();
    if (this.text[this.at] !== char) throw new ConditionsError(`expected ${char} at ${this.at}`);
    this.at++;
  }

  private space(): void {
    while (this.text[this.at] === ' ') this.at++;
  }
}

function read(record: unknown, path: string[]): unknown {
  let value = record;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    const entry = Object.entries(value).find(([name]) => name.toLowerCase() === key.toLowerCase());
    value = entry?.[1];
  }
  return value;
}

const comparable = (value: unknown): unknown => (typeof value === 'string' ? value.toLowerCase() : value);

function compare(actual: unknown, operator: string, expected: Value | Value[]): boolean {
  const [a, b] = [comparable(actual ?? null), Array.isArray(expected) ? expected.map(comparable) : comparable(expected)];
  switch (operator) {
    case '=':
      return a === b;
    case '!=':
      return a !== b;
    case 'in':
      return (b as unknown[]).includes(a);
    case 'contains':
      return typeof a === 'string' && typeof b === 'string' && a.includes(b);
    case 'like': {
      if (typeof a !== 'string' || typeof b !== 'string') return false;
      const pattern = b.split('%').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      return new RegExp(`^${pattern.join('.*')}$`, 's').test(a);
    }
    default: {
      if (a === null || b === null) return false;
      const [x, y] = [a as number | string, b as number | string];
      return operator === '<' ? x < y : operator === '<=' ? x <= y : operator === '>' ? x > y : x >= y;
    }
  }
}

function evaluate(node: Node, record: unknown): boolean {
  if (node.kind !== 'clause') {
    return node.kind === 'and' ? evaluate(node.left, record) && evaluate(node.right, record) : evaluate(node.left, record) || evaluate(node.right, record);
  }
  const outcome = compare(read(record, node.path), node.operator, node.value);
  return node.negated ? !outcome : outcome;
}

/** The records a `conditions` expression selects (all of them without one). */
export function matching<T>(records: T[], conditions: string | null): T[] {
  if (!conditions?.trim()) return records;
  const tree = new Parser(conditions).parse();
  return records.filter((record) => evaluate(tree, record));
}

/**
 * `childConditions`: clauses on a list the record holds (`communicationItems/value="…"`); a record
 * is kept when one element of the list satisfies the whole expression.
 */
export function matchingChildren<T>(records: T[], childConditions: string | null): T[] {
  if (!childConditions?.trim()) return records;
  const tree = new Parser(childConditions).parse();
  const list = firstPath(tree)[0];
  return records.filter((record) => {
    const children = read(record, [list]);
    if (!Array.isArray(children)) return false;
    return children.some((child) => evaluate(tree, { [list]: child }));
  });
}

function firstPath(node: Node): string[] {
  return node.kind === 'clause' ? node.path : firstPath(node.left);
}

/** One page of a list, by ConnectWise's `page` (from 1) and `pageSize` (default 25, at most 1000). */
export function page<T>(records: T[], query: URLSearchParams): T[] {
  const size = Math.min(1000, Math.max(1, Number(query.get('pageSize') ?? 25) || 25));
  const number = Math.max(1, Number(query.get('page') ?? 1) || 1);
  return records.slice((number - 1) * size, number * size);
}
