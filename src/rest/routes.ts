import { MODULES } from '../modules';

/**
 * The REST API: one row per /v1 route of the spec, declared by the module that owns it. A row names the GraphQL root field it runs;
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
  /** Success status; 200 unless said otherwise. */
  status?: number;
  /** The operation answers a FileDownload: send its bytes with Content-Type, Content-Disposition and ETag. */
  file?: boolean;
  /** For routes whose status depends on the answer (health: 503 when degraded). */
  statusFrom?: (data: Record<string, unknown>) => number;
  /** Error statuses beyond those every route of its kind answers (502 when it calls a provider). */
  errors?: number[];
}

/** The route table: every module's rows, in the order of src/modules/index.ts. */
export const ROUTES: readonly RestRoute[] = MODULES.flatMap((module) => module.routes ?? []);
