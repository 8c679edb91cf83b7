import type { ApolloServerPlugin } from '@apollo/server';
import {
  FieldNode,
  getDirectiveValues,
  getLocation,
  GraphQLField,
  GraphQLFormattedError,
  GraphQLIncludeDirective,
  GraphQLSchema,
  GraphQLSkipDirective,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { Extensions, MiddlewareFn } from 'type-graphql';
import { ApiError } from '../common/api-error';
import type { RequestContext } from '../graphql/context';
import { allows, KeyPermissions, RequiredPermission } from '../modules/accounts/key-permissions';

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
 * The one decision: whether a key with these permissions may run this field, as the error it gets
 * when not. Root fields must declare a permission; a nested field that reaches another resource
 * (`Deal.proposals`) declares its own, other nested fields go with their root.
 */
function refusal(permissions: KeyPermissions, field: GraphQLField<unknown, unknown> | undefined, isRoot: boolean): ApiError | undefined {
  const required = field && permissionOf(field);
  if (!required && !isRoot) return undefined;
  // A root field without a declaration cannot be in a schema that built (createSchema checks): refuse anyway.
  if (required && allows(permissions, required)) return undefined;
  return new ApiError('permission_denied', `This key lacks the ${required ?? 'unknown'} permission this request needs.`);
}

/**
 * A middleware around every field it concerns (graphql/field-middlewares.ts): REST routes (one root field
 * each, answered 403 permission_denied), nested fields, and anything the plugin below left in a
 * /graphql document. It runs before a field's arguments are validated and before its own
 * middlewares (operation limits). Unrestricted keys and the web app's session pass at once.
 */
export const permissionCheck: MiddlewareFn<RequestContext> = ({ info, context }, next) => {
  const permissions = context.auth.key?.permissions;
  if (!permissions) return next();
  const parent = info.parentType;
  const isRoot = parent === info.schema.getQueryType() || parent === info.schema.getMutationType();
  const refused = refusal(permissions, parent.getFields()[info.fieldName], isRoot);
  if (refused) throw refused;
  return next();
};

function isSkipped(node: FieldNode, variables: Record<string, unknown>): boolean {
  return getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true || getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if === false;
}

/**
 * On /graphql, the other root fields of a document are answered when one is refused. Root fields
 * are non-null, so a refusal thrown while executing would null the whole `data` (GraphQL's null
 * propagation): the plugin runs the same decision before execution, takes the refused root fields
 * out of the document it executes, and adds a FORBIDDEN error for each (path: its response key).
 */
export function permissionPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      const refused = new Map<string, GraphQLFormattedError>();
      return {
        async didResolveOperation(request) {
          const permissions = request.contextValue.auth.key?.permissions;
          const root = request.operation && request.schema.getRootType(request.operation.operation);
          if (!permissions || !root) return;
          const variables = request.request.variables ?? {};
          const typeInfo = new TypeInfo(request.schema);
          const document = visit(
            request.document,
            visitWithTypeInfo(typeInfo, {
              Field(node) {
                // Introspection (__typename, __schema, __type) reads no account data.
                if (typeInfo.getParentType() !== root || node.name.value.startsWith('__') || isSkipped(node, variables)) return undefined;
                const error = refusal(permissions, root.getFields()[node.name.value], true);
                if (!error) return undefined;
                const key = node.alias?.value ?? node.name.value;
                const locations = node.loc ? [getLocation(node.loc.source, node.loc.start)] : undefined;
                if (!refused.has(key)) refused.set(key, { message: error.message, locations, path: [key], extensions: { ...error.extensions } });
                return null;
              },
            }),
          );
          // Apollo executes the context's document; the one it parsed (and may cache) is left as it was.
          if (refused.size) Object.assign(request, { document });
        },
        async willSendResponse({ response }) {
          if (!refused.size || response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          result.errors = [...(result.errors ?? []), ...refused.values()];
        },
      };
    },
  };
}
