import type { Knex } from '@mikro-orm/knex';

/** A delivery claimed for one attempt (a lean row, not an entity). */
export interface Claim {
  id: string;
  event_id: string;
  webhook_id: string;
  attempt_count: number;
  account_id: string;
  livemode: boolean;
}

export interface ClaimLimits {
  /** Claims wanted: this dispatcher's free slots. */
  limit: number;
  /** Attempts in flight at one endpoint, across every instance. */
  perEndpoint: number;
  /** Attempts in flight for one account and mode, across every instance. */
  perAccount: number;
  /** How long a claim holds its row (the attempt's deadline plus a margin). */
  leaseSeconds: number;
}

/**
 * Claims are decided one at a time across instances: the bounds are counted from committed rows,
 * so two dispatchers deciding at once could each see room for the same endpoint. A claim takes
 * milliseconds; settling an attempt does not take this lock.
 */
const CLAIM_LOCK = 'webhook-claims';

/**
 * The fair claim, in one statement after the lock (docs/DESIGN.md, "Events and webhooks"). `pending_hooks` is
 * a skip scan: one index probe per webhook with pending work, whatever its backlog. `accounts` keeps only the
 * first `limit` accounts (fewest attempts in flight, then least recently served): no later one can win a slot.
 * `units` numbers each account's possible attempts so its endpoints take turns within its bound. `served` skips
 * locked rows too: a claim never waits for a settling attempt, so it cannot deadlock with one, and a missed
 * turn only loosens a tie-break.
 */
// Named bindings (:limit…), so no "::" casts below: knex would read them as bindings.
const CLAIM_SQL = `
with recursive pending_hooks (webhook_id, due_at) as (
  (select webhook_id, next_attempt_at from webhook_deliveries
    where status = 'pending' order by webhook_id, next_attempt_at limit 1)
  union all
  select following.webhook_id, following.next_attempt_at
    from pending_hooks previous
    cross join lateral (
      select webhook_id, next_attempt_at from webhook_deliveries
       where status = 'pending' and webhook_id > previous.webhook_id
       order by webhook_id, next_attempt_at limit 1) following
),
in_flight as materialized (
  select webhook_id, account_id, livemode from webhook_deliveries
   where leased_at is not null and status = 'pending' and next_attempt_at > now()
),
endpoints as materialized (
  select w.id as webhook_id, w.account_id, w.livemode, w.last_claimed_at,
    cast((select count(*) from in_flight f where f.webhook_id = w.id) as int) as endpoint_busy
  from pending_hooks p
  -- Lateral, so each candidate looks its webhook up by key instead of the planner joining every webhook.
  cross join lateral (select id, account_id, livemode, last_claimed_at, backoff_until from webhooks where id = p.webhook_id) w
  where p.due_at <= now() and (w.backoff_until is null or w.backoff_until <= now())
),
accounts as materialized (
  select a.account_id, a.livemode, busy.n as account_busy, served.at as served_at
  from (select distinct account_id, livemode from endpoints where endpoint_busy < :perEndpoint) a
  cross join lateral (select cast(count(*) as int) as n from in_flight f where f.account_id = a.account_id and f.livemode = a.livemode) busy
  cross join lateral (select max(s.last_claimed_at) as at from webhooks s where s.account_id = a.account_id and s.livemode = a.livemode) served
  where busy.n < :perAccount
  order by busy.n, served.at nulls first, a.account_id, a.livemode
  limit :limit
),
ready as materialized (
  select e.*, a.account_busy, a.served_at, due.takeable
  from endpoints e join accounts a using (account_id, livemode)
  cross join lateral (
    select cast(count(*) as int) as takeable from (
      select 1 from webhook_deliveries d
       where d.webhook_id = e.webhook_id and d.status = 'pending' and d.next_attempt_at <= now()
       limit :perEndpoint - e.endpoint_busy) rows) due
  where e.endpoint_busy < :perEndpoint
),
units as (
  select r.*, row_number() over (
      partition by r.account_id, r.livemode
      order by turn, r.endpoint_busy, r.last_claimed_at nulls first, r.webhook_id) as account_turn
  from ready r cross join lateral generate_series(1, r.takeable) turn
),
picked as (
  select webhook_id, cast(count(*) as int) as take from (
    select webhook_id from units
     where account_turn <= :perAccount - account_busy
     order by account_busy + account_turn, served_at nulls first, account_id, livemode
     limit :limit) chosen
  group by webhook_id
),
claimed as (
  update webhook_deliveries
     set attempt_count = attempt_count + 1, leased_at = now(),
         next_attempt_at = now() + make_interval(secs => :leaseSeconds), updated_at = now()
   where id in (
     select due.id from picked cross join lateral (
       select id from webhook_deliveries
        where webhook_id = picked.webhook_id and status = 'pending' and next_attempt_at <= now()
        order by next_attempt_at limit picked.take
        for update skip locked) due)
  returning id, event_id, webhook_id, attempt_count, account_id, livemode
),
served as (
  update webhooks set last_claimed_at = now()
   where id in (select id from webhooks where id in (select webhook_id from claimed) for update skip locked)
)
select * from claimed`;

/**
 * Claims up to `limit` due deliveries fairly: at most `perEndpoint` attempts in flight per
 * endpoint and `perAccount` per account and mode, counted across every instance sharing the
 * database; endpoints backed off are skipped; accounts take turns. Each claim counts an attempt
 * and holds its row for the lease.
 */
export async function claimFairly(knex: Knex, limits: ClaimLimits): Promise<Claim[]> {
  if (limits.limit <= 0) return [];
  // Most polls find nothing due: one probe of the due index answers them without the lock or the claim's planning.
  const due = await knex.raw<{ rows: unknown[] }>(`select 1 from webhook_deliveries where status = 'pending' and next_attempt_at <= now() limit 1`);
  if (due.rows.length === 0) return [];
  return knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [CLAIM_LOCK]);
    const result = await trx.raw<{ rows: Claim[] }>(CLAIM_SQL, { ...limits });
    return result.rows;
  });
}
