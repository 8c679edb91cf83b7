import { SingleBar } from 'cli-progress';
import { EntityManager } from '@mikro-orm/postgresql';
import { tenantFork } from '../../db/tenant';
import type { ServiceFactory } from '../module';
import { Account } from '../accounts/account.entity';
import { DealCreateInput } from '../deals/deal.inputs';
import { DealStage } from '../deals/deal-stage';
import { LeadCreateInput } from '../leads/lead.inputs';
import { seededRandom } from '../../common/random';
import { validInput } from '../../common/validation';

const NAMES = [
  'Northwind',
  'Contoso',
  'Fabrikam',
  'Globex',
  'Initech',
  'Umbrella',
  'Stark',
  'Wayne',
  'Tyrell',
  'Cyberdyne',
  'Hooli',
  'Vandelay',
  'Acme',
  'Wonka',
  'Soylent',
  'Oscorp',
  'Aperture',
  'Gringotts',
  'Monarch',
  'Pied Piper',
];
const SUFFIXES = ['Systems', 'Health', 'Logistics', 'Partners', 'Labs', 'Manufacturing', 'Financial', 'Retail Group', 'GmbH', 'Analytics'];
const INDUSTRIES = ['Software', 'Healthcare', 'Financial services', 'Manufacturing', 'Retail', 'Professional services', 'Logistics', 'Education', null];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'NL', 'JP', 'CA', 'AU'];
const SOURCES = ['referral', 'inbound', 'website', 'event', 'partner', 'outbound', 'purchased_list'];
const FIRST = ['Ada', 'Grace', 'Alan', 'Linus', 'Margaret', 'Ken', 'Barbara', 'Dennis', 'Frances', 'Tim', 'Hedy', 'Jean'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Torvalds', 'Hamilton', 'Thompson', 'Liskov', 'Ritchie', 'Allen', 'Berners-Lee', 'Lamarr', 'Sammet'];
const STAGES = [DealStage.prospecting, DealStage.qualification, DealStage.proposal, DealStage.negotiation, DealStage.closed_won, DealStage.closed_lost];

export interface SeedOptions {
  account: Account;
  livemode: boolean;
  leads: number;
  seed: number;
  /** Progress on a terminal (a bar) or in logs (a line every tenth); none when absent (the web app's demo data). */
  progress?: NodeJS.WriteStream;
  /** The services the data is made with (the running app's, or the command line's own). */
  servicesFor: ServiceFactory;
}

/**
 * Fills an account with realistic leads (scored by the same services as the API, with their
 * events) and deals for about 40 % of them across every stage, so the dashboard, the docs and the
 * webhooks have something to show. Returns what it made.
 */
export async function makeDemoData(em: EntityManager, options: SeedOptions): Promise<{ leads: number; deals: number }> {
  const { servicesFor } = options;
  const next = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const bar = options.progress
    ? new SingleBar({
        format: 'seeding [{bar}] {value}/{total} leads · {deals} deals · ETA {eta}s',
        stream: options.progress,
        noTTYOutput: true,
        notTTYSchedule: 2000,
        barCompleteChar: '#',
        barIncompleteChar: '.',
      })
    : undefined;
  bar?.start(options.leads, 0, { deals: 0 });
  let deals = 0;
  const run = Date.now().toString(36);
  for (let i = 0; i < options.leads; i++) {
    const scoped = tenantFork(em, { accountId: options.account.id, livemode: options.livemode });
    const services = servicesFor(scoped);
    const company = `${pick(NAMES)} ${pick(SUFFIXES)}`;
    const domain = `${company.toLowerCase().replace(/[^a-z]+/g, '')}.example`;
    const [first, last] = [pick(FIRST), pick(LAST)];
    const lead = await services.leads.create(
      await validInput(LeadCreateInput, {
        company,
        contactEmail: next() < 0.15 ? `${first}.${last}.${run}${i}@gmail.com`.toLowerCase() : `${first}.${last}.${run}${i}@${domain}`.toLowerCase(),
        contactName: `${first} ${last}`,
        industry: pick(INDUSTRIES),
        employees: Math.floor(3 + next() ** 2 * 6000),
        website: next() < 0.7 ? `https://www.${domain}` : null,
        country: pick(COUNTRIES),
        source: pick(SOURCES),
      }),
    );
    if (next() < 0.4) {
      await services.deals.create(
        await validInput(DealCreateInput, {
          name: `${company}: ${pick(['rollout', 'renewal', 'expansion', 'pilot', 'migration'])}`,
          leadId: lead.id,
          value: Math.round((1_000 + next() ** 2 * 120_000) * 100) / 100,
          stage: pick(STAGES),
          expectedCloseDate: new Date(Date.now() + Math.floor(next() * 120) * 86_400_000).toISOString().slice(0, 10),
          owner: `${pick(FIRST)} ${pick(LAST)}`,
        }),
      );
      deals += 1;
    }
    bar?.update(i + 1, { deals });
  }
  bar?.stop();
  return { leads: options.leads, deals };
}
