import { DocumentNode, visit } from 'graphql';
import { ApiError } from '../../common/api-error';
import type { OperationCheck } from './operation-check';
import { requestError } from '../request-error';

/** Why PostgreSQL cannot keep a text: U+0000, or a lone UTF-16 surrogate (not Unicode text at all). */
function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the character U+0000';
  // With the u flag a surrogate class matches only unpaired halves; pairs are whole code points.
  if (/\p{Surrogate}/u.test(text)) return 'must be valid Unicode text (it holds a lone surrogate, U+D800 to U+DFFF)';
  return undefined;
}

/** Where a value holds text PostgreSQL cannot keep (in a string or an object key), as a path and the reason, or undefined. */
function unstorableTextAt(value: unknown, path: Array<string | number>): { path: Array<string | number>; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { path, problem } : undefined;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unstorableTextAt(item, [...path, i]);
      if (found) return found;
    }
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const problem = textProblem(key);
      if (problem) return { path, problem };
      const found = unstorableTextAt(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Refuses variables holding text PostgreSQL cannot keep, naming the path inside the variable
 * (`company`, `metadata.a`), the name a client sent.
 */
export function assertStorableText(variables: Record<string, unknown>): void {
  const found = unstorableTextAt(variables, []);
  if (!found) return;
  const param = (found.path.length > 1 ? found.path.slice(1) : found.path).join('.');
  throw requestError(new ApiError('parameter_invalid', `${param} ${found.problem}`, { param }));
}

/** Documents already walked and found clean: Apollo hands the same parsed document to every request that sends the same text. */
const checkedDocuments = new WeakSet<DocumentNode>();

/**
 * PostgreSQL text cannot hold U+0000, and a lone surrogate (JSON allows "\ud800") is no Unicode
 * at all: text columns would keep U+FFFD in its place, jsonb refuses it, and validators such as
 * isEmail throw on it, so such input would fail deep inside as a 500 or be stored altered.
 * Refused before any operation runs, in its variables and in the string literals of its document.
 */
export const textCheck: OperationCheck = ({ document, variables }) => {
  assertStorableText(variables);
  if (checkedDocuments.has(document)) return;
  visit(document, {
    StringValue(node) {
      const problem = textProblem(node.value);
      if (problem) throw requestError(new ApiError('parameter_invalid', `String values ${problem}`));
    },
  });
  checkedDocuments.add(document);
};
