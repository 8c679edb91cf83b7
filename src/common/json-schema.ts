/**
 * JSON Schema for the rules an input class enforces beyond its fields' decorators: a rule across
 * fields (credentials that depend on the provider) is written once as a schema, which the service
 * checks against and the OpenAPI document shows (src/rest/openapi/schema-builder.ts applies it).
 */
export type JsonSchema = Record<string, unknown>;

/** An input class, as class-validator and type-graphql key their metadata. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- class-validator and type-graphql key their metadata by Function
export type InputClass = Function;

/**
 * Turns the schema built from an input type's fields (REST names) into the full one; `resolve`
 * reads a `#/components/schemas/…` reference the fields' schemas hold (built already).
 */
export type SchemaRefinement = (schema: JsonSchema, resolve: (reference: string) => JsonSchema) => JsonSchema;

const refinements = new Map<InputClass, SchemaRefinement>();

/** Class decorator: the input's document schema is `refine(the schema of its fields)`. */
export function RefineSchema(refine: SchemaRefinement): ClassDecorator {
  return (target) => {
    refinements.set(target, refine);
  };
}

export const schemaRefinement = (target: InputClass): SchemaRefinement | undefined => refinements.get(target);
