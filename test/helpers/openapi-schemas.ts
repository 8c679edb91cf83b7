import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * JSON Schema 2020-12 (OpenAPI 3.1's dialect) validation of values against schemas of an OpenAPI
 * document, by Ajv with its formats: a schema's `#/components/…` references resolve in the document.
 * `multipleOf: 0.01` (at most 2 decimals) is checked on the number as JSON writes it, as the API
 * reads it: in binary floating point 0.07 / 0.01 is not a whole number, and Ajv's tolerance
 * (`multipleOfPrecision`) gives up on large amounts.
 */
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document

const DOCUMENT_ID = 'https://openapi.invalid/document';
const DECIMALS = 'x-decimal-multipleOf';

/** The schema with each fractional `multipleOf` checked as decimals (DECIMALS). */
const decimals = (schema: Json): Json =>
  JSON.parse(JSON.stringify(schema), (_key, value) =>
    value && typeof value === 'object' && !Array.isArray(value) && typeof value.multipleOf === 'number' && value.multipleOf < 1
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k === 'multipleOf' ? DECIMALS : k, v]))
      : value,
  );

export class OpenApiSchemas {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, multipleOfPrecision: 9 });
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly document: Json) {
    addFormats(this.ajv);
    this.ajv.addKeyword({
      keyword: DECIMALS,
      type: 'number',
      schemaType: 'number',
      validate: (step: number, value: number) => new RegExp(`^-?\\d+(?:\\.\\d{1,${Math.round(-Math.log10(step))}})?$`).test(String(value)),
    });
    this.ajv.addSchema(decimals({ $id: DOCUMENT_ID, components: document.components }));
  }

  /** The value at a `#/…` reference of the document. */
  resolve = (ref: string): Json =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Json, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);

  /** Why `value` is not valid by `schema`, or undefined when it is. */
  problem(schema: Json, value: unknown): string | undefined {
    const key = JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(decimals(JSON.parse(key.replace(/"#\/components\//g, `"${DOCUMENT_ID}#/components/`))));
      this.cache.set(key, validate);
    }
    return validate(value) ? undefined : this.ajv.errorsText(validate.errors);
  }
}
