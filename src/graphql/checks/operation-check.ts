import type { DocumentNode } from 'graphql';
import type { RequestContext } from '../context';

/** One operation about to run, on /graphql or as a REST route's prepared operation. */
export interface OperationRequest {
  document: DocumentNode;
  operationName?: string | null;
  variables: Record<string, unknown>;
  context: RequestContext;
  /** Sets a header of the answer (the X-RateLimit-* of a charge). */
  setHeader(name: string, value: string): void;
}

/** A check that refuses an operation before it runs, by throwing a request error (graphql/request-error.ts). */
export type OperationCheck = (request: OperationRequest) => void | Promise<void>;
