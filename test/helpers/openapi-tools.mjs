#!/usr/bin/env node
/**
 * Third-party OpenAPI tools for tests, in a separate process because they are ES modules that
 * jest's CommonJS module system cannot load:
 *   node openapi-tools.mjs validate <openapi.json>          prints {"valid", "errors"?, "version"}
 *     (@seriousme/openapi-schema-validator: the official OpenAPI 3.x JSON schemas, with $ref checks)
 *   node openapi-tools.mjs generate <openapi.json> <out.ts>  writes openapi-typescript's `paths` types
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';

const [command, input, output] = process.argv.slice(2);
const document = JSON.parse(readFileSync(input, 'utf8'));

if (command === 'validate') {
  const validator = new Validator();
  const result = await validator.validate(document);
  process.stdout.write(JSON.stringify({ ...result, version: validator.version }));
} else if (command === 'generate') {
  writeFileSync(output, astToString(await openapiTS(document)));
  process.stdout.write(JSON.stringify({ written: output }));
} else {
  process.stderr.write(`unknown command ${command}\n`);
  process.exit(2);
}
