import { defaultFieldResolver, GraphQLFieldResolver, GraphQLSchema, isObjectType } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { permissionOf } from '../auth/permission';

/**
 * Runs `middlewares` around the resolvers of only the fields they concern: root fields, fields with arguments,
 * and fields with a permission of their own (`Deal.proposals`); type-graphql's global middlewares wrapped every
 * field, so each row of a page ran them for nothing. Wrapped from outside, they still run before type-graphql's
 * own work for the field (its resolver's middlewares, argument validation), as global middlewares did.
 */
export function applyFieldMiddlewares(schema: GraphQLSchema, middlewares: ReadonlyArray<MiddlewareFn<never>>): void {
  const roots = new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(Boolean));
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!roots.has(type) && field.args.length === 0 && !permissionOf(field)) continue;
      field.resolve = withMiddlewares(field.resolve ?? defaultFieldResolver, middlewares);
    }
  }
}

function withMiddlewares(
  resolve: GraphQLFieldResolver<unknown, unknown>,
  middlewares: ReadonlyArray<MiddlewareFn<never>>,
): GraphQLFieldResolver<unknown, unknown> {
  return (root, args, context, info) => {
    const action = { root, args, context, info } as never;
    let index = 0;
    const next = (): Promise<unknown> => {
      const middleware = middlewares[index++];
      return (middleware ? middleware(action, next) : resolve(root, args, context, info)) as Promise<unknown>;
    };
    return next();
  };
}
