import type { MiddlewareFn } from 'type-graphql';
import type { RequestContext } from './context';

/**
 * Each root field (a REST route's operation, a GraphQL document's top-level fields) runs in one of
 * its account's root-field slots on this instance (src/limits/account-gate.ts), after the
 * permission check and before its arguments are read: a document of 25 aggregates runs them a few
 * at a time, in its own account's line.
 */
export const rootFieldSlot: MiddlewareFn<RequestContext> = ({ info, context }, next) => {
  const parent = info.parentType;
  if (parent !== info.schema.getQueryType() && parent !== info.schema.getMutationType()) return next();
  return context.accountGate.rootField(context.auth, next, context.signal);
};
