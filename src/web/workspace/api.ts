// The workspace is a GraphQL client of /graphql, signed in by the session cookie; the CSRF token
// (from the page's meta tag) travels in a header a cross-site page cannot set.

/** An error the API answered with; `param` names the offending input field, when there is one. */
export class ApiProblem extends Error {
  constructor(
    message: string,
    readonly param?: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

interface GraphQLError {
  message: string;
  extensions?: { param?: string; errorCode?: string; code?: string };
}

function csrfToken(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';
}

export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken() },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiProblem('The server cannot be reached; check the connection and try again.');
  }
  if (response.status === 401 || response.status === 403) throw new ApiProblem('Your session has ended; reload the page to sign in again.');
  let result: { data?: T; errors?: GraphQLError[] };
  try {
    result = (await response.json()) as typeof result;
  } catch {
    throw new ApiProblem(`The server answered ${response.status}; try again.`);
  }
  const [error] = result.errors ?? [];
  if (error || !result.data) {
    // A field's name: `input.value` and `value` both point at the value field.
    const param = error?.extensions?.param?.replace(/^input\./, '');
    throw new ApiProblem(error?.message ?? `The server answered ${response.status}.`, param, error?.extensions?.errorCode);
  }
  return result.data;
}
