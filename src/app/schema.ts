import type { GraphQLSchema } from 'graphql';
import { buildApiSchema } from '../graphql/schema';
import { RESOLVERS } from './modules';

/** The API's schema: every module's resolvers (src/app/modules.ts). */
export const createSchema = (): Promise<GraphQLSchema> => buildApiSchema(RESOLVERS);
