import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLSchema } from 'graphql';
import type { RateLimitKind } from '../http/metrics';
import type { Quota } from '../limits/quota';
import { createCostCheck } from './checks/cost-limit';
import type { OperationCheck, OperationRequest } from './checks/operation-check';
import { quotaCharge } from './checks/quota-charge';
import { textCheck } from './checks/text-guard';

export type { OperationCheck, OperationRequest };
import type { RequestContext } from './context';

/**
 * Every check an operation passes before anything of it runs, in order: its text, its cost, its
 * charge. One list, run by the Apollo plugin below for /graphql and by prepared operations for
 * REST, so no check can be added to one surface and forgotten on the other.
 */
export function operationChecks(schema: GraphQLSchema, quota: Quota, onRejected?: (kind: RateLimitKind) => void): OperationCheck[] {
  return [textCheck, createCostCheck(schema), quotaCharge(quota, onRejected)];
}

/**
 * Runs the checks in order on one request, the same object for each; it waits only for a check
 * that returns a promise (the charge), so the synchronous ones (text, cost) make no promise and
 * take no turn of the microtask queue.
 */
export async function runChecks(checks: readonly OperationCheck[], request: OperationRequest): Promise<void> {
  for (const check of checks) {
    const pending = check(request);
    if (pending) await pending;
  }
}

/** The checks on every operation sent to /graphql, once its document is known and before it runs. */
export function operationChecksPlugin(checks: readonly OperationCheck[]): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document, operationName, contextValue, response }) {
          const setHeader = (name: string, value: string) => response.http.headers.set(name, value);
          await runChecks(checks, { document, operationName, variables: request.variables ?? {}, context: contextValue, setHeader });
        },
      };
    },
  };
}
