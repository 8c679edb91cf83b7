import type { ApolloServerPlugin } from '@apollo/server';
import {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  getDirectiveValues,
  getLocation,
  getNamedType,
  getOperationAST,
  getVariableValues,
  GraphQLField,
  GraphQLFormattedError,
  GraphQLIncludeDirective,
  GraphQLNamedType,
  GraphQLSchema,
  GraphQLSkipDirective,
  isInterfaceType,
  isObjectType,
  Kind,
  OperationDefinitionNode,
  parse,
  SelectionNode,
  SelectionSetNode,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { Request, Response } from 'express';
import { Extensions, MiddlewareFn } from 'type-graphql';
import { ApiError } from '../common/api-error';
import { isPlainObject } from '../common/objects';
import type { RequestContext } from '../graphql/context';
import { type Authenticated, callerPermissions } from '../modules/accounts/api-key.service';
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
  const permissions = callerPermissions(context.auth);
  if (!permissions) return next();
  const parent = info.parentType;
  const isRoot = parent === info.schema.getQueryType() || parent === info.schema.getMutationType();
  const refused = refusal(permissions, parent.getFields()[info.fieldName], isRoot);
  if (refused) throw refused;
  return next();
};

/**
 * Whether `@skip`/`@include` leave a field out, with the operation's coerced variables (defaults
 * applied). A directive that cannot be evaluated (a variable the request lacks) counts as keeping
 * the field: it is judged, and execution answers the variable's error as it would for any key.
 */
function isSkipped(node: SelectionNode, variables: Record<string, unknown>): boolean {
  try {
    return getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true || getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if === false;
  } catch {
    return false;
  }
}

/** A root field of an operation that a key may not run, and why. */
export interface RefusedField {
  /** Its response key (alias or name): the path of its error. */
  responseKey: string;
  error: ApiError;
  /** The field that needs the permission: the root field itself, or one it selects. */
  node: FieldNode;
}

/**
 * The root fields of `operation` that a key with `permissions` may not run, by response key: those that need a
 * permission it lacks or select, at any depth, a field that does. The whole root field is refused, so a mutation
 * never writes and then hides the change behind a refused field (docs/DECISIONS.md, "Every field is judged").
 * Fields left out by `@skip`/`@include` (on the coerced `variables`) are not judged; an invalid document is left
 * to validation.
 */
export function refusedRootFields(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  permissions: KeyPermissions,
): Map<string, RefusedField> {
  const root = schema.getRootType(operation.operation);
  const refused = new Map<string, RefusedField>();
  if (!root) return refused;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);

  /** Each field node of a selection set with the type it is selected on, through fragments (not twice on one path). */
  const eachField = (
    selectionSet: SelectionSetNode,
    parent: GraphQLNamedType,
    onField: (node: FieldNode, parent: GraphQLNamedType) => boolean,
    spread: ReadonlySet<string> = new Set(),
  ): boolean => {
    for (const selection of selectionSet.selections) {
      if (isSkipped(selection, variables)) continue;
      if (selection.kind === Kind.FIELD) {
        if (onField(selection, parent)) return true;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type && eachField(selection.selectionSet, type, onField, spread)) return true;
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        const type = fragment && schema.getType(fragment.typeCondition.name.value);
        if (!fragment || !type || spread.has(name)) continue;
        if (eachField(fragment.selectionSet, type, onField, new Set(spread).add(name))) return true;
      }
    }
    return false;
  };

  /** The first field under `node` (itself included) that the key may not run. */
  const firstRefusal = (node: FieldNode, parent: GraphQLNamedType, isRoot: boolean): { error: ApiError; node: FieldNode } | undefined => {
    // Introspection (__typename, __schema, __type) reads no account data.
    if (node.name.value.startsWith('__')) return undefined;
    const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[node.name.value] : undefined;
    if (!field) return undefined;
    const error = refusal(permissions, field, isRoot);
    if (error) return { error, node };
    if (!node.selectionSet) return undefined;
    let found: { error: ApiError; node: FieldNode } | undefined;
    eachField(node.selectionSet, getNamedType(field.type), (child, type) => (found = firstRefusal(child, type, false)) !== undefined);
    return found;
  };

  eachField(operation.selectionSet, root, (node) => {
    const responseKey = node.alias?.value ?? node.name.value;
    if (refused.has(responseKey)) return false;
    const found = firstRefusal(node, root, true);
    if (found) refused.set(responseKey, { responseKey, ...found });
    return false;
  });
  return refused;
}

/**
 * The refusals of a request's operation, or none when they cannot be judged before execution: an
 * unknown operation, or variables that do not coerce (execution then stops before any resolver
 * runs, and answers the variables' errors as it would for any key).
 */
export function refusalsOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
  permissions: KeyPermissions,
): Map<string, RefusedField> {
  const operation = getOperationAST(document, operationName);
  if (!operation) return new Map();
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  if (coerced.errors) return new Map();
  return refusedRootFields(schema, document, operation, coerced.coerced, permissions);
}

/**
 * For /graphql's Idempotency-Key (idempotency.middleware.ts `authorize`): a restricted key's
 * document with any refused field is refused whole, 403 `permission_denied`, before a stored
 * answer is looked at, so that nothing of it runs, nothing is stored, and no stored answer is
 * replayed to a caller not allowed to make the whole request. Without the header the refused root
 * fields are taken out and the others answered (the plugin below). A body or document that does not
 * parse is left to Apollo, which refuses it before anything runs.
 */
export function graphqlRequestRefusal(schema: GraphQLSchema, maxTokens: number) {
  return (req: Request, res: Response): ApiError | undefined => {
    const permissions = callerPermissions(res.locals.auth as Authenticated | undefined);
    const body: unknown = req.body;
    if (!permissions || !isPlainObject(body) || typeof body.query !== 'string') return undefined;
    const { operationName, variables } = body;
    if ((operationName != null && typeof operationName !== 'string') || (variables != null && !isPlainObject(variables))) return undefined;
    let document: DocumentNode;
    try {
      document = parse(body.query, { maxTokens });
    } catch {
      return undefined;
    }
    return refusalsOf(schema, document, operationName, variables, permissions).values().next().value?.error;
  };
}

/** A refusal as the error /graphql lists for its root field (path: the response key; location: the field needing the permission). */
export function refusalAnswer({ responseKey, error, node }: RefusedField): GraphQLFormattedError {
  const locations = node.loc ? [getLocation(node.loc.source, node.loc.start)] : undefined;
  return { message: error.message, locations, path: [responseKey], extensions: { ...error.extensions } };
}

/**
 * On /graphql, the other root fields of a document are answered when one is refused. Root fields
 * are non-null, so a refusal thrown while executing would null the whole `data` (GraphQL's null
 * propagation): the plugin runs the same decision before execution, on every field of the
 * operation, takes the refused root fields out of the document it executes, and adds a FORBIDDEN
 * error for each (path: its response key).
 */
export function permissionPlugin(): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      let refused = new Map<string, RefusedField>();
      return {
        async didResolveOperation(request) {
          const permissions = callerPermissions(request.contextValue.auth);
          const root = request.operation && request.schema.getRootType(request.operation.operation);
          if (!permissions || !root) return;
          refused = refusalsOf(request.schema, request.document, request.operationName, request.request.variables, permissions);
          if (!refused.size) return;
          const typeInfo = new TypeInfo(request.schema);
          const document = visit(
            request.document,
            visitWithTypeInfo(typeInfo, {
              Field(node) {
                if (typeInfo.getParentType() !== root || !refused.has(node.alias?.value ?? node.name.value)) return undefined;
                return null;
              },
            }),
          );
          // Apollo executes the context's document; the one it parsed (and may cache) is left as it was.
          Object.assign(request, { document });
        },
        async willSendResponse({ response }) {
          if (!refused.size || response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          result.errors = [...(result.errors ?? []), ...[...refused.values()].map(refusalAnswer)];
        },
      };
    },
  };
}
