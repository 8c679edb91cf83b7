import { EntityManager } from '@mikro-orm/postgresql';
import { createServiceFactory } from '../app/composition';
import { createSchema } from '../app/schema';
import { ensureEncryptionKey, loadConfig } from '../config';
import { makeDemoData, SeedOptions } from '../modules/demo/demo-data';
import { PriorLeadScorer } from '../modules/scoring/prior-model';

/** `demo seed`: the web app's demo data (src/modules/demo/demo-data.ts), with services the command line builds itself. */
export async function seedAccount(em: EntityManager, options: Omit<SeedOptions, 'servicesFor'>): Promise<{ leads: number; deals: number }> {
  const config = loadConfig();
  ensureEncryptionKey(config);
  const servicesFor = createServiceFactory({ config, scorer: new PriorLeadScorer() }, await createSchema());
  return makeDemoData(em, { ...options, servicesFor });
}
