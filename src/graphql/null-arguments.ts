import { GraphQLField, GraphQLInputType, getNamedType, isInputObjectType, isListType, isNonNullType } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { ApiError } from '../common/api-error';
import { NOT_NULL_EXTENSION } from '../common/validation';

/** Per root or field resolver: its input-object arguments and their NotNull fields. */
const notNullFields = new WeakMap<GraphQLField<unknown, unknown>, Array<{ arg: string; fields: string[] }>>();

function notNullOf(field: GraphQLField<unknown, unknown>): Array<{ arg: string; fields: string[] }> {
  let found = notNullFields.get(field);
  if (!found) {
    found = [];
    for (const arg of field.args) {
      const type = getNamedType(arg.type);
      if (!isInputObjectType(type)) continue;
      const fields = Object.values(type.getFields())
        .filter((input) => input.extensions?.[NOT_NULL_EXTENSION] === true)
        .map((input) => input.name);
      if (fields.length) found.push({ arg: arg.name, fields });
    }
    notNullFields.set(field, found);
  }
  return found;
}

/** Removes the fields of input objects sent as null, at every depth (JSON scalars are left as sent). */
function withoutNulls(value: unknown, type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return withoutNulls(value, type.ofType);
  if (value === null || typeof value !== 'object') return value;
  if (isListType(type)) return (value as unknown[]).map((item) => withoutNulls(item, type.ofType));
  if (!isInputObjectType(type)) return value;
  const fields = type.getFields();
  for (const [name, item] of Object.entries(value)) {
    if (item === null) delete (value as Record<string, unknown>)[name];
    else if (fields[name]) withoutNulls(item, fields[name].type);
  }
  return value;
}

/**
 * The one rule for null in arguments (docs/DECISIONS.md, "null"), run around every resolver with arguments
 * before they are converted and validated: an optional argument sent as null is left out (generated clients send
 * `filter: null`); in reads null means left out at every depth; in a mutation's input null clears an update's
 * optional field or takes a create's default, and is refused, naming it, for a NotNull field (common/validation.ts).
 */
export const nullArguments: MiddlewareFn = ({ args, info }, next) => {
  for (const name in args) if (args[name] === null) delete args[name];
  const field = info.parentType.getFields()[info.fieldName];
  if (field && info.parentType !== info.schema.getMutationType()) {
    for (const arg of field.args) if (args[arg.name] !== undefined) withoutNulls(args[arg.name], arg.type);
    return next();
  }
  if (field) {
    for (const { arg, fields } of notNullOf(field)) {
      const value = args[arg] as Record<string, unknown> | undefined;
      if (!value) continue;
      const sent = fields.find((name) => value[name] === null);
      if (sent) throw new ApiError('parameter_invalid', `${sent} cannot be null: leave it out to keep its current value`, { param: sent });
    }
  }
  return next();
};
