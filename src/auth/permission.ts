import type { GraphQLField, GraphQLSchema } from 'graphql';
import { Extensions, MiddlewareFn } from 'type-graphql';
import { ApiError } from '../common/api-error';
import type { RequestContext } from '../graphql/context';
import { allows, RequiredPermission } from '../modules/accounts/key-permissions';

const PERMISSION_EXTENSION = 'permission';

/**
 * Declares what a Query or Mutation root field needs of a restricted key (`rk_`): a resource at a
 * level (`'deals:write'`), or `'public'` for a field that reads no account data. Kept in the field's
 * GraphQL extensions, so the check, the declaration test and REST (whose routes run root fields)
 * all read it from the schema. Every root field declares one: the schema refuses to build without.
 */
export const RequiresPermission = (permission: RequiredPermission): MethodDecorator & PropertyDecorator => Extensions({ [PERMISSION_EXTENSION]: permission });

export function permissionOf(field: GraphQLField<unknown, unknown>): RequiredPermission | undefined {
  return field.extensions?.[PERMISSION_EXTENSION] as RequiredPermission | undefined;
}

/** The root fields (as `Query.leads`) that declare no permission. */
export function undeclaredPermissions(schema: GraphQLSchema): string[] {
  return [schema.getQueryType(), schema.getMutationType()].flatMap((root) =>
    Object.values(root?.getFields() ?? {})
      .filter((field) => !permissionOf(field))
      .map((field) => `${root!.name}.${field.name}`),
  );
}

/**
 * type-graphql's global middleware: the one place restricted keys are checked. It runs before a
 * field's arguments are validated and before its own middlewares (operation limits), and refuses
 * only that field (FORBIDDEN on GraphQL, 403 permission_denied on REST), so the other root fields
 * of a document are answered. Root fields must declare a permission; a nested field that reaches
 * another resource (`Deal.proposals`) declares its own, other nested fields go with their root.
 * Unrestricted keys and the web app's session pass at once.
 */
export const permissionCheck: MiddlewareFn<RequestContext> = ({ info, context }, next) => {
  const permissions = context.auth.key?.permissions;
  if (!permissions) return next();
  const parent = info.parentType;
  const required = permissionOf(parent.getFields()[info.fieldName]);
  const isRoot = parent === info.schema.getQueryType() || parent === info.schema.getMutationType();
  if (!required && !isRoot) return next();
  // A root field without a declaration cannot be in a schema that built (createSchema checks): refuse anyway.
  if (!required || !allows(permissions, required)) {
    throw new ApiError('permission_denied', `This key lacks the ${required ?? 'unknown'} permission this request needs.`);
  }
  return next();
};
