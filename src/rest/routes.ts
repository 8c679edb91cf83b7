import type { ErrorCode } from '../common/api-error';

/**
 * The REST API: one row per /v1 route of the spec, declared by the module that owns it (the table: src/app/modules.ts, ROUTES). A row names the GraphQL root field it runs;
 * path parameters become arguments of the same name, and `body` / `query` name the argument that
 * receives the JSON body or the query string. The adapter builds each operation's document from
 * the schema, so a row never repeats a field list.
 */
export interface RestRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  summary: string;
  operation: {
    type: 'query' | 'mutation';
    field: string;
    body?: string;
    query?: string;
  };
  /**
   * The errors this operation's own rules can answer (a referenced id that does not exist, a
   * conflict with the current state, an ineligible object): the document lists their statuses
   * beside those every route of its kind answers (src/rest/openapi/statuses.ts), and the
   * conformance test fails on any status a route answers that its document does not list.
   */
  errors?: ErrorCode[];
  /** Success status; 200 unless said otherwise. */
  status?: number;
  /** The operation answers a FileDownload: send its bytes with Content-Type, Content-Disposition and ETag. */
  file?: boolean;
  /** For routes whose status depends on the answer (health: 503 when degraded). */
  statusFrom?: (data: Record<string, unknown>) => number;
}
