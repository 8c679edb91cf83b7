import { EntityManager } from '@mikro-orm/postgresql';
import { AccountService } from '../modules/accounts/account.service';
import { KeyType } from '../modules/accounts/api-key.entity';
import { ApiKeyService, MAX_ROLL_EXPIRY_HOURS } from '../modules/accounts/api-key.service';
import { describePermissions, KeyPermissions, parsePermissions } from '../modules/accounts/key-permissions';
import { isPlan, Plan } from '../modules/accounts/plan';
import { isRole, ROLES } from '../modules/accounts/key-permissions';
import { MemberService } from '../modules/members/member.service';
import { loadConfig } from '../config';
import { tenantFork } from '../db/tenant';
import { createLogger } from '../logger';
import { createMailer } from '../mail/mailer';
import { OPERATOR_ACTOR } from '../modules/security/security-log';
import { seedAccount } from './seed';

/** A mistake in the command line: printed as one line, exit code 2. */
export class UsageError extends Error {}

export type Options = Record<string, string | boolean | undefined>;

export interface Output {
  /** The result a script consumes (a key, a table). */
  out(line: string): void;
  /** Human progress and confirmations. */
  info(line: string): void;
}

export interface CommandSpec {
  usage: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  run(em: EntityManager, options: Options, output: Output): Promise<void>;
}

function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

function plan(value: string): Plan {
  if (!isPlan(value)) throw new UsageError(`--plan must be starter, professional or enterprise, got "${value}"`);
  return value;
}

function positiveInteger(name: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} must be a positive integer, got "${value}"`);
  return Number(value);
}

function restricted(value: string | boolean | undefined): KeyPermissions | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') throw new UsageError('--restricted needs a list such as "leads=read,deals=write"');
  try {
    return parsePermissions(value);
  } catch (error) {
    throw new UsageError(`--restricted: ${(error as Error).message}`);
  }
}

function limitsText(perMinute: number, perDay: number | null): string {
  return `${perMinute}/min, ${perDay === null ? 'no daily cap' : `${perDay}/day`}`;
}

function role(value: string): (typeof ROLES)[number] {
  if (!isRole(value)) throw new UsageError(`--role must be ${ROLES.join(', ')}, got "${value}"`);
  return value;
}

/**
 * The members of the account with --account-email, as the operator (who may make and change
 * owners): invitations go out through SMTP_URL (outside production without it, the log), and the
 * command also prints the link, for an operator who hands it over another way.
 */
async function membersOf(em: EntityManager, options: Options): Promise<{ members: MemberService; accountEmail: string }> {
  const account = await new AccountService(em).byEmail(required(options, 'account-email'));
  const config = loadConfig();
  const logger = createLogger('warn');
  const mailer = createMailer(config.mail, logger, config.isProduction);
  return {
    members: new MemberService(tenantFork(em, { accountId: account.id, livemode: false }), {
      acting: { actor: OPERATOR_ACTOR, request: null },
      mailer,
      publicUrl: config.publicUrl,
      logger,
    }),
    accountEmail: account.email,
  };
}

const OPERATOR = { kind: 'operator' } as const;

/** The operator commands of CONTRACT §14, keyed by "group verb". */
export const COMMANDS: Record<string, CommandSpec> = {
  'demo seed': {
    usage: 'demo seed --email owner@acme.test [--mode test|live] [--leads 200] [--seed 1]   # realistic leads and deals, with progress',
    options: { email: { type: 'string' }, mode: { type: 'string' }, leads: { type: 'string' }, seed: { type: 'string' } },
    async run(em, options, output) {
      const mode = typeof options.mode === 'string' ? options.mode : 'test';
      if (mode !== 'test' && mode !== 'live') throw new UsageError(`--mode must be test or live, got "${mode}"`);
      const leads = typeof options.leads === 'string' ? positiveInteger('leads', options.leads) : 200;
      if (leads > 100_000) throw new UsageError('--leads must be at most 100000');
      const seed = typeof options.seed === 'string' ? positiveInteger('seed', options.seed) : 1;
      const account = await new AccountService(em).byEmail(required(options, 'email'));
      const made = await seedAccount(em, { account, livemode: mode === 'live', leads, seed, progress: process.stderr });
      output.out(`seeded ${made.leads} leads and ${made.deals} deals (${mode} mode) for ${account.email}`);
    },
  },
  'accounts create': {
    usage: 'accounts create --email owner@acme.test --name "Acme" [--plan starter|professional|enterprise] [--password …]',
    options: { email: { type: 'string' }, name: { type: 'string' }, plan: { type: 'string' }, password: { type: 'string' } },
    async run(em, options, output) {
      const account = await new AccountService(em).create({
        email: required(options, 'email'),
        name: required(options, 'name'),
        plan: typeof options.plan === 'string' ? plan(options.plan) : undefined,
        password: typeof options.password === 'string' ? options.password : undefined,
      });
      output.out(account.id);
      output.info(`created account ${account.id} (${account.email}, plan ${account.plan})`);
    },
  },
  'accounts set-plan': {
    usage: 'accounts set-plan --email owner@acme.test --plan professional',
    options: { email: { type: 'string' }, plan: { type: 'string' } },
    async run(em, options, output) {
      const account = await new AccountService(em).setPlan(required(options, 'email'), plan(required(options, 'plan')));
      const limits = account.liveLimits();
      output.info(`${account.email} is on ${account.plan}; live limits now ${limitsText(limits.perMinute, limits.perDay)}`);
    },
  },
  'accounts set-limits': {
    usage: 'accounts set-limits --email owner@acme.test [--per-minute N] [--per-day N|none] [--reset]',
    options: { email: { type: 'string' }, 'per-minute': { type: 'string' }, 'per-day': { type: 'string' }, reset: { type: 'boolean' } },
    async run(em, options, output) {
      const email = required(options, 'email');
      const perMinute = options['per-minute'];
      const perDay = options['per-day'];
      if (options.reset && (perMinute !== undefined || perDay !== undefined)) {
        throw new UsageError('--reset cannot be combined with --per-minute or --per-day');
      }
      if (!options.reset && perMinute === undefined && perDay === undefined) {
        throw new UsageError('give --per-minute, --per-day or --reset');
      }
      const accounts = new AccountService(em);
      const account = options.reset
        ? await accounts.setLimits(email, 'reset')
        : await accounts.setLimits(email, {
            ...(typeof perMinute === 'string' ? { perMinute: positiveInteger('per-minute', perMinute) } : {}),
            ...(typeof perDay === 'string' ? { perDay: perDay === 'none' ? null : positiveInteger('per-day', perDay) } : {}),
          });
      const limits = account.liveLimits();
      output.info(`${account.email}: live limits now ${limitsText(limits.perMinute, limits.perDay)}${options.reset ? ' (plan defaults)' : ''}`);
    },
  },
  'keys create': {
    usage: 'keys create --email owner@acme.test --type test|live --name "CI" [--restricted "leads=read,deals=write"]',
    options: { email: { type: 'string' }, type: { type: 'string' }, name: { type: 'string' }, restricted: { type: 'string' } },
    async run(em, options, output) {
      const type = required(options, 'type');
      if (type !== KeyType.test && type !== KeyType.live) throw new UsageError(`--type must be test or live, got "${type}"`);
      const permissions = restricted(options.restricted);
      const account = await new AccountService(em).byEmail(required(options, 'email'));
      const { key, secret } = await new ApiKeyService(em, { actor: OPERATOR_ACTOR }).create(account, type, required(options, 'name'), permissions);
      output.out(secret);
      const kind = permissions ? `restricted ${type} key (${describePermissions(permissions)})` : `${type} key`;
      output.info(`created ${kind} ${key.id} "${key.name}" for ${account.email}. It is shown only this once; store it now.`);
    },
  },
  'keys list': {
    usage: 'keys list --email owner@acme.test',
    options: { email: { type: 'string' } },
    async run(em, options, output) {
      const account = await new AccountService(em).byEmail(required(options, 'email'));
      const keys = await new ApiKeyService(em).list(account);
      output.out(['ID', 'NAME', 'TYPE', 'KEY', 'PERMISSIONS', 'CREATED', 'LAST USED', 'REVOKED'].join('\t'));
      for (const key of keys) {
        output.out(
          [
            key.id,
            key.name,
            key.type,
            `${key.prefix}…${key.last4}`,
            describePermissions(key.permissions),
            key.createdAt.toISOString(),
            key.lastUsedAt?.toISOString() ?? '-',
            key.revokedAt?.toISOString() ?? '-',
          ].join('\t'),
        );
      }
    },
  },
  'keys roll': {
    usage: `keys roll --id <key id> [--expires-in-hours 0-${MAX_ROLL_EXPIRY_HOURS}]   # a new value; the old one works until it expires (default: at once)`,
    options: { id: { type: 'string' }, 'expires-in-hours': { type: 'string' } },
    async run(em, options, output) {
      const hours = options['expires-in-hours'];
      if (hours !== undefined && (typeof hours !== 'string' || !/^\d+$/.test(hours) || Number(hours) > MAX_ROLL_EXPIRY_HOURS)) {
        throw new UsageError(`--expires-in-hours must be a whole number from 0 to ${MAX_ROLL_EXPIRY_HOURS}, got "${String(hours)}"`);
      }
      const { key, secret } = await new ApiKeyService(em, { actor: OPERATOR_ACTOR }).roll(required(options, 'id'), hours === undefined ? 0 : Number(hours));
      output.out(secret);
      const until = key.previousSecretExpiresAt!;
      const old = until.getTime() <= Date.now() ? 'the old value is refused from now on' : `the old value works until ${until.toISOString()}`;
      output.info(`rolled ${key.id} "${key.name}": ${old}. The new value is shown only this once; store it now.`);
    },
  },
  'keys revoke': {
    usage: 'keys revoke --id <key id>',
    options: { id: { type: 'string' } },
    async run(em, options, output) {
      const key = await new ApiKeyService(em, { actor: OPERATOR_ACTOR }).revoke(required(options, 'id'));
      output.info(`revoked ${key.id} "${key.name}" at ${key.revokedAt?.toISOString()}`);
    },
  },
  'members invite': {
    usage: `members invite --email person@acme.test --account-email owner@acme.test [--role ${ROLES.join('|')}] [--name "Ada"]   # default role: member`,
    options: { email: { type: 'string' }, 'account-email': { type: 'string' }, role: { type: 'string' }, name: { type: 'string' } },
    async run(em, options, output) {
      const chosen = typeof options.role === 'string' ? role(options.role) : 'member';
      const { members, accountEmail } = await membersOf(em, options);
      const { member, link } = await members.invite(
        { email: required(options, 'email'), role: chosen, name: typeof options.name === 'string' ? options.name : undefined },
        OPERATOR,
      );
      output.out(member.userId);
      output.info(`invited ${member.email} to ${accountEmail} as ${member.role}; the e-mailed link works for 7 days, once: ${link}`);
    },
  },
  'members list': {
    usage: 'members list --account-email owner@acme.test',
    options: { 'account-email': { type: 'string' } },
    async run(em, options, output) {
      const { members } = await membersOf(em, options);
      output.out(['ID', 'EMAIL', 'NAME', 'ROLE', 'STATUS', 'LAST SEEN'].join('\t'));
      let cursor: string | undefined;
      do {
        const page = await members.list({ limit: 100, cursor });
        for (const member of page.data) {
          output.out([member.userId, member.email, member.name, member.role, member.status, member.lastSeenAt?.toISOString() ?? '-'].join('\t'));
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    },
  },
  'members set-role': {
    usage: `members set-role --email person@acme.test --account-email owner@acme.test --role ${ROLES.join('|')}`,
    options: { email: { type: 'string' }, 'account-email': { type: 'string' }, role: { type: 'string' } },
    async run(em, options, output) {
      const chosen = role(required(options, 'role'));
      const { members, accountEmail } = await membersOf(em, options);
      const found = await members.byEmail(required(options, 'email'));
      const member = await members.update(found.userId, { role: chosen }, OPERATOR);
      output.info(`${member.email} is now ${member.role} of ${accountEmail}`);
    },
  },
  'members remove': {
    usage:
      'members remove --email person@acme.test --account-email owner@acme.test [--transfer-to other@acme.test]   # deactivates; their sessions end at once',
    options: { email: { type: 'string' }, 'account-email': { type: 'string' }, 'transfer-to': { type: 'string' } },
    async run(em, options, output) {
      const { members, accountEmail } = await membersOf(em, options);
      const found = await members.byEmail(required(options, 'email'));
      const heir = typeof options['transfer-to'] === 'string' ? await members.byEmail(options['transfer-to']) : undefined;
      const member = await members.deactivate(found.userId, OPERATOR, heir?.userId);
      output.info(
        `${member.email} is deactivated in ${accountEmail}; their sessions there have ended${heir ? `, and ${heir.email} owns their leads and deals` : ''}`,
      );
    },
  },
};
