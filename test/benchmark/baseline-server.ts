/**
 * The benchmark's baseline: the fastest thing a user could write by hand for the same work, with
 * express 5 and pg and nothing else. Each route does what the service does for it: look the key
 * up by its hash (one SQL join), count the request in Redis (one round trip), run the same SQL on
 * the same indexes, and answer the same JSON. It validates only what it must and has none of the
 * service's layers (GraphQL, ORM, events rendered from the schema, logs, metrics), which is the
 * point: the ratio to it is what those layers cost.
 *
 * Run: node dist/test/benchmark/baseline-server.js (DATABASE_URL, REDIS_URL, PORT).
 */
import { createHash, randomUUID } from 'node:crypto';
import express, { NextFunction, Request, Response } from 'express';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { STAGE_PROBABILITY } from '../../src/modules/deals/deal-stage';
import { PriorLeadScorer } from '../../src/modules/scoring/prior-model';

interface Auth {
  accountId: string;
  livemode: boolean;
}

const PLAN_PER_MINUTE: Record<string, number> = { starter: 60, professional: 300, enterprise: 1_000 };
const LEAD_COLUMNS =
  'id, created_at, updated_at, livemode, company, contact_email, contact_name, industry, employees, website, country, source, status, score, score_label, model_version, scored_at, metadata';
const DEAL_COLUMNS =
  'id, created_at, updated_at, livemode, name, lead_id, value_minor, currency, stage, expected_close_date, owner, metadata, stage_changed_at, co_sell_id, co_sell_status, co_sell_submitted_at, co_sell_decided_at, co_sell_integration_id, co_sell_referral_id, co_sell_status_reason';
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

type Row = Record<string, unknown>;

const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : value);

function leadJson(row: Row) {
  return {
    id: row.id,
    object: 'lead',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    livemode: row.livemode,
    company: row.company,
    contact_email: row.contact_email,
    contact_name: row.contact_name,
    industry: row.industry,
    employees: row.employees,
    website: row.website,
    country: row.country,
    source: row.source,
    status: row.status,
    score: row.score,
    score_label: row.score_label,
    model_version: row.model_version,
    scored_at: iso(row.scored_at),
    metadata: row.metadata,
  };
}

function dealJson(row: Row) {
  return {
    id: row.id,
    object: 'deal',
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    livemode: row.livemode,
    name: row.name,
    lead_id: row.lead_id,
    value: Number(row.value_minor) / 100,
    currency: row.currency,
    stage: row.stage,
    probability: STAGE_PROBABILITY[row.stage as keyof typeof STAGE_PROBABILITY],
    expected_close_date: row.expected_close_date,
    owner: row.owner,
    metadata: row.metadata,
    stage_changed_at: iso(row.stage_changed_at),
    co_sell: row.co_sell_id
      ? {
          id: row.co_sell_id,
          status: row.co_sell_status,
          submitted_at: iso(row.co_sell_submitted_at),
          decided_at: iso(row.co_sell_decided_at),
          integration_id: row.co_sell_integration_id,
          referral_id: row.co_sell_referral_id,
          status_reason: row.co_sell_status_reason,
        }
      : null,
  };
}

/** A time-sortable id like the service's (48-bit time, 80 random bits, Crockford base32). */
function newId(prefix: string): string {
  const hex = Date.now().toString(16).padStart(12, '0') + randomUUID().replace(/-/g, '').slice(0, 20);
  let value = BigInt(`0x${hex}`);
  let body = '';
  for (let i = 0; i < 26; i++) {
    body = CROCKFORD[Number(value & 31n)] + body;
    value >>= 5n;
  }
  return `${prefix}_${body}`;
}

function error(res: Response, status: number, type: string, code: string, message: string) {
  res.status(status).json({ error: { type, code, message } });
}

function cursorOf(row: Row, key: string): string {
  return Buffer.from(JSON.stringify({ s: key, v: iso(row.created_at), i: row.id })).toString('base64url');
}

async function main(): Promise<void> {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const scorer = new PriorLeadScorer();
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));

  // Authentication and the per-minute count: one indexed join and one Redis round trip.
  app.use('/v1', async (req: Request, res: Response, next: NextFunction) => {
    const secret = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!secret) return error(res, 401, 'authentication_error', 'api_key_missing', 'No API key provided.');
    const { rows } = await pool.query({
      name: 'auth',
      text: `select k.type, k.revoked_at, a.id as account_id, a.plan, a.custom_limits
               from api_keys k join accounts a on a.id = k.account_id where k.secret_hash = $1`,
      values: [createHash('sha256').update(secret).digest('hex')],
    });
    const key = rows[0];
    if (!key || key.revoked_at) return error(res, 401, 'authentication_error', 'api_key_invalid', 'Invalid API key provided.');
    const auth: Auth = { accountId: key.account_id, livemode: key.type === 'live' };
    const limit = key.custom_limits?.perMinute ?? PLAN_PER_MINUTE[key.plan];
    const minute = Math.floor(Date.now() / 60_000);
    const counter = `baseline:${auth.accountId}:${auth.livemode}:${minute}`;
    const [[, count]] = (await redis.multi().incr(counter).expire(counter, 60).exec()) as [[null, number]];
    res.set({
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(Math.max(0, limit - count)),
      'X-RateLimit-Reset': String((minute + 1) * 60),
    });
    if (count > limit) return error(res, 429, 'rate_limit_error', 'rate_limit_exceeded', 'Too many requests.');
    res.locals.auth = auth;
    next();
  });

  app.get('/v1/leads/:id', async (req, res) => {
    const auth = res.locals.auth as Auth;
    const { rows } = await pool.query({
      name: 'lead',
      text: `select ${LEAD_COLUMNS} from leads where account_id = $1 and livemode = $2 and id = $3`,
      values: [auth.accountId, auth.livemode, req.params.id],
    });
    if (!rows[0]) return error(res, 404, 'invalid_request_error', 'resource_missing', `No such lead: '${req.params.id}'`);
    res.json(leadJson(rows[0]));
  });

  app.get('/v1/leads', async (req, res) => {
    const auth = res.locals.auth as Auth;
    const limit = Math.min(100, Math.max(1, Number(req.query.limit ?? 20) || 20));
    let after: { v: string; i: string } | undefined;
    if (typeof req.query.cursor === 'string') {
      try {
        after = JSON.parse(Buffer.from(req.query.cursor, 'base64url').toString('utf8'));
      } catch {
        return error(res, 400, 'invalid_request_error', 'parameter_invalid', 'cursor is not valid');
      }
    }
    // The limit in the text, a statement per limit, as the service's pages (src/db/lean.ts,
    // limitInText) and this file's deals: with `limit $n`, PostgreSQL re-plans every execution.
    const fetched = Math.trunc(limit) + 1;
    const { rows } = after
      ? await pool.query({
          name: `leads-after-${fetched}`,
          text: `select ${LEAD_COLUMNS} from leads where account_id = $1 and livemode = $2
                   and (created_at, id) < ($3, $4)
                 order by created_at desc, id desc limit ${fetched}`,
          values: [auth.accountId, auth.livemode, after.v, after.i],
        })
      : await pool.query({
          name: `leads-first-${fetched}`,
          text: `select ${LEAD_COLUMNS} from leads where account_id = $1 and livemode = $2 order by created_at desc, id desc limit ${fetched}`,
          values: [auth.accountId, auth.livemode],
        });
    const hasMore = rows.length > limit;
    const data = rows.slice(0, limit);
    res.json({ object: 'list', data: data.map(leadJson), has_more: hasMore, next_cursor: hasMore ? cursorOf(data[data.length - 1], '-created_at') : null });
  });

  app.post('/v1/leads', async (req, res) => {
    const auth = res.locals.auth as Auth;
    const body = req.body as Record<string, unknown>;
    if (typeof body?.company !== 'string' || !body.company.trim()) {
      return error(res, 400, 'invalid_request_error', 'parameter_missing', 'company is required');
    }
    if (typeof body.contact_email !== 'string' || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(body.contact_email)) {
      return error(res, 400, 'invalid_request_error', 'parameter_invalid', 'contact_email must be an e-mail address');
    }
    const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string).trim() : null);
    const lead = {
      company: body.company.trim(),
      contactEmail: body.contact_email.toLowerCase(),
      contactName: text('contact_name'),
      industry: text('industry'),
      employees: Number.isInteger(body.employees) ? (body.employees as number) : null,
      website: text('website'),
      country: text('country'),
      source: text('source'),
    };
    const client = await pool.connect();
    try {
      // The account's learned model, if any, would score instead of the prior (the service asks the same).
      await client.query({
        name: 'model',
        text: 'select id from lead_models where account_id = $1 and livemode = $2 order by version desc limit 1',
        values: [auth.accountId, auth.livemode],
      });
      const score = scorer.score(lead);
      const now = new Date();
      const id = newId('lead');
      await client.query('begin');
      const { rows } = await client.query({
        name: 'insert-lead',
        text: `insert into leads (id, created_at, updated_at, account_id, livemode, company, contact_email, contact_name, industry,
                 employees, website, country, source, status, score, score_label, score_signals, score_base, model_version, scored_at, metadata)
               values ($1, $2, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'new', $13, $14, $15, $16, $17, $2, '{}')
               returning ${LEAD_COLUMNS}`,
        values: [
          id,
          now,
          auth.accountId,
          auth.livemode,
          lead.company,
          lead.contactEmail,
          lead.contactName,
          lead.industry,
          lead.employees,
          lead.website,
          lead.country,
          lead.source,
          score.score,
          score.label,
          JSON.stringify(score.signals),
          score.baseScore,
          score.modelVersion,
        ],
      });
      const json = leadJson(rows[0]);
      const data = JSON.stringify({ object: json, previous_attributes: {} });
      await client.query({
        name: 'insert-events',
        text: `insert into events (id, created_at, updated_at, account_id, livemode, type, api_version, data)
               values ($1, $3, $3, $4, $5, 'lead.created', 'v1', $6), ($2, $3, $3, $4, $5, 'lead.scored', 'v1', $6)`,
        values: [newId('evt'), newId('evt'), now, auth.accountId, auth.livemode, data],
      });
      await client.query('commit');
      res.status(201).json(json);
    } catch (failure) {
      await client.query('rollback');
      if ((failure as { code?: string }).code === '23505') {
        return error(res, 409, 'invalid_request_error', 'lead_exists', 'A lead with this contact_email already exists');
      }
      throw failure;
    } finally {
      client.release();
    }
  });

  app.get('/v1/deals', async (req, res) => {
    const auth = res.locals.auth as Auth;
    const stages = typeof req.query.stage === 'string' ? req.query.stage.split(',') : null;
    const { rows } = await pool.query({
      name: stages ? 'deals-stage' : 'deals',
      text: stages
        ? `select ${DEAL_COLUMNS} from deals where account_id = $1 and livemode = $2 and stage = any($3) order by created_at desc, id desc limit 21`
        : `select ${DEAL_COLUMNS} from deals where account_id = $1 and livemode = $2 order by created_at desc, id desc limit 21`,
      values: stages ? [auth.accountId, auth.livemode, stages] : [auth.accountId, auth.livemode],
    });
    const hasMore = rows.length > 20;
    const data = rows.slice(0, 20);
    res.json({ object: 'list', data: data.map(dealJson), has_more: hasMore, next_cursor: hasMore ? cursorOf(data[data.length - 1], '-created_at') : null });
  });

  // The stored rendering of a proposal (the service renders on the first request and keeps the bytes).
  app.get('/v1/proposals/:id/pdf', async (req, res) => {
    const auth = res.locals.auth as Auth;
    const { rows } = await pool.query({
      name: 'proposal-pdf',
      text: 'select filename, etag, bytes from proposal_pdfs where account_id = $1 and livemode = $2 and proposal_id = $3',
      values: [auth.accountId, auth.livemode, req.params.id],
    });
    if (!rows[0]) return error(res, 404, 'invalid_request_error', 'resource_missing', `No such proposal: '${req.params.id}'`);
    res.attachment(rows[0].filename);
    res.set({ 'Content-Type': 'application/pdf', ETag: rows[0].etag, 'Cache-Control': 'private, no-cache' });
    res.end(rows[0].bytes);
  });

  app.get('/readyz', (_req, res) => {
    res.json({ status: 'ready' });
  });

  const server = app.listen(Number(process.env.PORT ?? 3100), '127.0.0.1', () => {
    process.stdout.write(`baseline listening on ${JSON.stringify(server.address())}\n`);
  });
  const stop = () => server.close(() => void Promise.all([pool.end(), redis.quit()]).then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
