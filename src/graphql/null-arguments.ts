import { GraphQLField, getNamedType, isInputObjectType } from 'graphql';
import type { MiddlewareFn } from 'type-graphql';
import { ApiError } from '../common/errors';
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

/**
 * type-graphql's global middleware for every resolver with arguments, run before they are
 * converted and validated. An optional argument sent as null is the same as one left out (as
 * generated clients send `filter: null` through variables, for instance), so no resolver meets a
 * null it did not ask for; and null for a NotNull field of an input (common/validation.ts) is
 * refused, naming the field, whatever other constraints it has.
 */
export const nullArguments: MiddlewareFn = ({ args, info }, next) => {
  for (const name in args) if (args[name] === null) delete args[name];
  const field = info.parentType.getFields()[info.fieldName];
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
