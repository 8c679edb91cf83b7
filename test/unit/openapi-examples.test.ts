import { createSchema } from '../../src/app/schema';
import { buildOpenApi, DEFAULT_SERVER_URL } from '../../src/rest/openapi';
import { EVENTS, ROUTES } from '../../src/app/modules';
import { OpenApiSchemas } from '../helpers/openapi-schemas';

/**
 * Every operation has an example request (each parameter, the body) and an example response, and
 * every example is valid by the schema beside it (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses):
 * they are derived from the schemas (src/rest/openapi/examples.ts), so a new route has them too.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document

let doc: Json;
let schemas: OpenApiSchemas;

beforeAll(async () => {
  doc = buildOpenApi(await createSchema(), ROUTES, { version: '0.0.0', serverUrl: DEFAULT_SERVER_URL, events: EVENTS });
  schemas = new OpenApiSchemas(doc);
});

const operations = () =>
  ROUTES.map((route) => ({
    key: `${route.method} ${route.path}`,
    route,
    op: doc.paths[route.path.replace(/:(\w+)/g, '{$1}')][route.method.toLowerCase()],
  }));

describe('examples', () => {
  it('has an example for each parameter and body, valid by its schema', () => {
    for (const { key, op } of operations()) {
      for (const parameter of (op.parameters ?? []).filter((p: Json) => !p.$ref)) {
        expect([key, parameter.name, 'example' in parameter]).toEqual([key, parameter.name, true]);
        expect([key, parameter.name, schemas.problem(parameter.schema, parameter.example)]).toEqual([key, parameter.name, undefined]);
      }
      const body = op.requestBody?.content['application/json'];
      if (body) expect([key, schemas.problem(body.schema, body.example)]).toEqual([key, undefined]);
      if (body) expect([key, body.example]).not.toEqual([key, undefined]);
    }
  });

  it('has an example response for each operation, valid by its schema', () => {
    for (const { key, route, op } of operations()) {
      const success = op.responses[String(route.status ?? 200)];
      if (route.file) continue; // the PDF's bytes
      const json = success.content['application/json'];
      expect([key, json.example === undefined]).toEqual([key, false]);
      expect([key, schemas.problem(json.schema, json.example)]).toEqual([key, undefined]);
    }
    for (const [name, response] of Object.entries(doc.components.responses as Record<string, Json>)) {
      const json = response.content['application/json'];
      expect([name, schemas.problem(json.schema, json.example)]).toEqual([name, undefined]);
    }
  });

  it('reads like the API: a lead has a lead id, its object name and a realistic email', () => {
    const lead = doc.paths['/v1/leads/{id}'].get.responses['200'].content['application/json'].example;
    expect(lead).toMatchObject({ id: expect.stringMatching(/^lead_/), object: 'lead', contact_email: 'ada@acme-robotics.example' });
    expect(doc.paths['/v1/proposals/{id}'].get.parameters[0].example).toMatch(/^prop_/);
    const connect = doc.paths['/v1/integrations'].post.requestBody.content['application/json'].example;
    expect(connect.credentials).toBeDefined();
  });
});
