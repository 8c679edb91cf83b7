/**
 * One graphql for PostGraphile, imported before it. PostGraphile 4 needs a single instance of
 * graphql 15 (16 is not supported: graphile/crystal#1583), and the project's own graphql is 16, so
 * npm leaves PostGraphile's packages three copies (postgraphile's 15, graphile-build-pg's 15, and
 * the root's 16 for graphql-parse-resolve-info). Types made by one fail the checks of another
 * ("Cannot use GraphQLList … from another module or realm") and every query errors. This process
 * runs PostGraphile and nothing else, so every `graphql` it loads is sent to postgraphile's copy.
 */
import Module from 'node:module';
import path from 'node:path';

const postgraphileDir = path.dirname(require.resolve('postgraphile/package.json'));
const graphqlDir = path.dirname(require.resolve('graphql/package.json', { paths: [postgraphileDir] }));

// Node's CommonJS resolver: internal, so not in its typings, but the one place every require passes.
const loader = Module as unknown as { _resolveFilename(request: string, ...rest: unknown[]): string };
const resolve = loader._resolveFilename;
loader._resolveFilename = function (request, ...rest) {
  const graphql = request === 'graphql' || request.startsWith('graphql/');
  return resolve.call(this, graphql ? path.join(graphqlDir, request.slice('graphql'.length)) : request, ...rest);
};
