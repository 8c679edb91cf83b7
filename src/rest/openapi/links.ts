import { RestRoute } from '../routes';

type JsonSchema = Record<string, unknown>;

const VERBS: Record<string, string> = { GET: 'Retrieve', PUT: 'Update', DELETE: 'Delete' };

/**
 * OpenAPI links from a create (`POST /v1/things`, 201) to what takes the new object's id: the
 * routes of `/v1/things/:id` (retrieve, update, delete), each by operationId with
 * `id: $response.body#/id`. Derived from the route table, so a new resource gets its links.
 */
export function createLinks(route: RestRoute, routes: readonly RestRoute[]): Record<string, JsonSchema> | undefined {
  if (route.method !== 'POST' || route.status !== 201 || route.path.includes(':')) return undefined;
  const targets = routes.filter((other) => other.path === `${route.path}/:id` && VERBS[other.method]);
  if (!targets.length) return undefined;
  return Object.fromEntries(
    targets.map((target) => [
      `${VERBS[target.method]}Created`,
      {
        operationId: target.operation.field,
        parameters: { id: '$response.body#/id' },
        description: `${target.summary}: the object this request created (its id).`,
      },
    ]),
  );
}

/** A link from a page to the next one: the same operation (and filters) with `cursor: $response.body#/next_cursor`. */
export function pageLinks(route: RestRoute, queryParameters: readonly string[]): Record<string, JsonSchema> | undefined {
  if (!queryParameters.includes('cursor')) return undefined;
  return {
    NextPage: {
      operationId: route.operation.field,
      parameters: { cursor: '$response.body#/next_cursor' },
      description: 'The next page (send the same filters); only while has_more is true.',
    },
  };
}
