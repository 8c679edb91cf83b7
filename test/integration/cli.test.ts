import { createHash } from 'node:crypto';
import type { Client } from 'pg';
import { CliApi, CliHarness, expectRefused, startCliApi } from '../helpers/cli';

const KEY_TEST = /^sk_test_[A-Za-z0-9]{32}$/;
const KEY_LIVE = /^sk_live_[A-Za-z0-9]{32}$/;

describe('operator CLI (node dist/src/cli/main.js)', () => {
  const cli = new CliHarness();
  let db: Client;
  const run = (...args: string[]) => cli.run(...args);
  const runWith = (env: Record<string, string>, ...args: string[]) => cli.runWith(env, ...args);
  const uniqueEmail = (label: string) => cli.uniqueEmail(label);
  const accountRow = (email: string) => cli.accountRow(email);
  const createAccount = (email: string, ...extra: string[]) => cli.createAccount(email, ...extra);

  beforeAll(async () => {
    await cli.start();
    db = cli.db;
  });

  afterAll(() => cli.stop());

  describe('accounts create', () => {
    it('prints the new account id alone on stdout and stores the account', async () => {
      const email = uniqueEmail('Owner');
      const result = run('accounts', 'create', '--email', email, '--name', 'Acme Inc', '--plan', 'professional');
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/^acct_[0-9A-HJKMNP-TV-Z]{26}\n$/);
      expect(result.stderr).toContain('created account');
      const row = await accountRow(email);
      expect(row).toMatchObject({ id: result.stdout.trim(), email: email.toLowerCase(), name: 'Acme Inc', plan: 'professional', custom_limits: null });
    });

    it("defaults to the starter plan and stores its owner's password only as a scrypt hash", async () => {
      const email = uniqueEmail('pw');
      createAccount(email, '--password', 'correct horse battery');
      const row = await accountRow(email);
      expect(row?.plan).toBe('starter');
      const owner = (await db.query('select u.password_hash, m.role from users u join members m on m.user_id = u.id where u.email = $1', [email.toLowerCase()]))
        .rows[0];
      expect(owner.role).toBe('owner');
      expect(owner.password_hash).toMatch(/^scrypt\$/);
      expect(String(owner.password_hash)).not.toContain('correct horse');
    });

    it('refuses a duplicate email with a one-line reason and no SQL', async () => {
      const email = uniqueEmail('dup');
      createAccount(email);
      expectRefused(run('accounts', 'create', '--email', email.toUpperCase(), '--name', 'Again'), /already exists/, 1);
      expect((await db.query('select count(*)::int as n from accounts where email = $1', [email.toLowerCase()])).rows[0].n).toBe(1);
    });
  });

  describe('keys', () => {
    let email: string;
    let testKey: string;
    let liveKey: string;

    beforeAll(() => {
      email = uniqueEmail('keys');
      createAccount(email);
    });

    it('keys create prints the key alone on stdout, and only its hash is stored', async () => {
      const result = run('keys', 'create', '--email', email, '--type', 'test', '--name', 'CI');
      expect(result.status).toBe(0);
      const lines = result.stdout.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[1]).toBe('');
      expect(lines[0]).toMatch(KEY_TEST);
      testKey = lines[0];
      expect(result.stderr).not.toContain(testKey);
      expect(result.stderr).not.toContain(testKey.slice(8));

      const live = run('keys', 'create', '--email', email, '--type', 'live', '--name', 'Production');
      expect(live.status).toBe(0);
      liveKey = live.stdout.trim();
      expect(liveKey).toMatch(KEY_LIVE);

      const rows = (await db.query('select k.* from api_keys k join accounts a on a.id = k.account_id where a.email = $1 order by k.created_at', [email])).rows;
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({
        name: 'CI',
        type: 'test',
        prefix: 'sk_test_',
        last4: testKey.slice(-4),
        secret_hash: createHash('sha256').update(testKey).digest('hex'),
        last_used_at: null,
        revoked_at: null,
      });
      expect(rows[1]).toMatchObject({ name: 'Production', type: 'live', secret_hash: createHash('sha256').update(liveKey).digest('hex') });
      expect(JSON.stringify(rows)).not.toContain(testKey.slice(8));
      expect(JSON.stringify(rows)).not.toContain(liveKey.slice(8));
    });

    it('keys list shows prefix…last4 but never a full key', () => {
      const result = run('keys', 'list', '--email', email);
      expect(result.status).toBe(0);
      const [header, ...rows] = result.stdout.trimEnd().split('\n');
      expect(header.split('\t')).toEqual(['ID', 'NAME', 'TYPE', 'KEY', 'PERMISSIONS', 'CREATED', 'LAST USED', 'REVOKED']);
      expect(rows).toHaveLength(2);
      const byName = Object.fromEntries(rows.map((row) => row.split('\t')).map((cells) => [cells[1], cells]));
      expect(byName.CI[0]).toMatch(/^key_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(byName.CI[2]).toBe('test');
      expect(byName.CI[3]).toBe(`sk_test_…${testKey.slice(-4)}`);
      expect(byName.Production[3]).toBe(`sk_live_…${liveKey.slice(-4)}`);
      expect(byName.CI[4]).toBe('full access');
      expect(byName.CI[7]).toBe('-');
      for (const key of [testKey, liveKey]) {
        expect(result.stdout).not.toContain(key);
        expect(result.stdout).not.toContain(key.slice(8, 20));
        expect(result.stderr).not.toContain(key.slice(8, 20));
      }
    });

    describe('against the API on the same database', () => {
      let api: CliApi;
      const call: CliApi['call'] = (route, key, init) => api.call(route, key, init);

      beforeAll(async () => {
        api = await startCliApi(cli.databaseUrl);
      });
      afterAll(() => api.stop());

      it('the printed keys authenticate, each in its own mode', async () => {
        expect((await call('/v1/health', testKey)).status).toBe(200);
        const made = await call('/v1/leads', liveKey, { method: 'POST', body: JSON.stringify({ company: 'CLI Co', contact_email: 'cli@co.test' }) });
        expect(made.status).toBe(201);
        expect(made.body.livemode).toBe(true);
        expect((await call('/v1/leads', testKey)).body.data).toEqual([]);
      });

      it('keys revoke sets revoked_at and the key stops working at once', async () => {
        const keyId = (await db.query('select id from api_keys where secret_hash = $1', [createHash('sha256').update(testKey).digest('hex')])).rows[0]
          .id as string;
        const result = run('keys', 'revoke', '--id', keyId);
        expect(result.status).toBe(0);
        expect(result.stdout).toBe('');
        expect(result.stderr).toContain(`revoked ${keyId}`);
        const row = (await db.query('select revoked_at from api_keys where id = $1', [keyId])).rows[0];
        expect(row.revoked_at).toBeInstanceOf(Date);
        expect(Date.now() - (row.revoked_at as Date).getTime()).toBeLessThan(60_000);

        const refused = await call('/v1/leads', testKey);
        expect(refused.status).toBe(401);
        expect(refused.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_revoked' });
        expect((await call('/v1/leads', liveKey)).status).toBe(200);

        const listed = run('keys', 'list', '--email', email)
          .stdout.split('\n')
          .find((line) => line.startsWith(keyId));
        expect(listed?.split('\t')[7]).toBe((row.revoked_at as Date).toISOString());
      });
    });

    it('keys revoke of an unknown id exits 1', () => {
      expectRefused(run('keys', 'revoke', '--id', 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV'), /No such API key/, 1);
    });

    it('keys create for an unknown account exits 1', () => {
      expectRefused(run('keys', 'create', '--email', uniqueEmail('ghost'), '--type', 'test', '--name', 'CI'), /No account with email/, 1);
    });
  });

  describe('plans and limits', () => {
    it('accounts set-plan changes the plan', async () => {
      const email = uniqueEmail('plan');
      createAccount(email);
      const result = run('accounts', 'set-plan', '--email', email, '--plan', 'enterprise');
      expect(result.status).toBe(0);
      expect(result.stderr).toMatch(/enterprise/);
      expect((await accountRow(email))?.plan).toBe('enterprise');
    });

    it('accounts set-limits stores contract limits, merges later changes, and --reset returns to the plan', async () => {
      const email = uniqueEmail('limits');
      createAccount(email, '--plan', 'professional');
      let result = run('accounts', 'set-limits', '--email', email, '--per-minute', '5000', '--per-day', 'none');
      expect(result.status).toBe(0);
      expect(result.stderr).toContain('5000/min, no daily cap');
      expect((await accountRow(email))?.custom_limits).toEqual({ perMinute: 5000, perDay: null });

      result = run('accounts', 'set-limits', '--email', email, '--per-day', '250000');
      expect(result.status).toBe(0);
      expect((await accountRow(email))?.custom_limits).toEqual({ perMinute: 5000, perDay: 250000 });

      result = run('accounts', 'set-limits', '--email', email, '--reset');
      expect(result.status).toBe(0);
      expect(result.stderr).toContain('300/min, 100000/day');
      expect((await accountRow(email))?.custom_limits).toBeNull();
    });
  });

  describe('demo seed', () => {
    it("fills the account's chosen mode with scored leads and deals, shows progress on stderr and a summary on stdout", async () => {
      const email = uniqueEmail('seed');
      const accountId = createAccount(email);
      const result = run('demo', 'seed', '--email', email, '--leads', '25', '--seed', '3');
      expect(result.status).toBe(0);
      const summary = /^seeded 25 leads and (\d+) deals \(test mode\) for /.exec(result.stdout.trim());
      expect(summary).not.toBeNull();
      expect(result.stderr).toMatch(/seeding \[#+\] 25\/25 leads/);
      const leads = await db.query('select livemode, score, model_version from leads where account_id = $1', [accountId]);
      expect(leads.rows).toHaveLength(25);
      expect(leads.rows.every((row) => row.livemode === false && row.score >= 0 && row.score <= 100 && row.model_version === 'prior-v1')).toBe(true);
      const deals = await db.query('select count(*)::int as n, count(distinct stage)::int as stages from deals where account_id = $1', [accountId]);
      expect(deals.rows[0].n).toBe(Number(summary![1]));
      expect(deals.rows[0].n).toBeGreaterThan(0);
      // The same services as the API: every lead has its lead.created event.
      const events = await db.query(`select count(*)::int as n from events where account_id = $1 and type = 'lead.created'`, [accountId]);
      expect(events.rows[0].n).toBe(25);
    });

    it('refuses an unknown mode or a missing account with one line', () => {
      expectRefused(run('demo', 'seed', '--email', 'nobody-seed@acme.test'), /No account with email/, 1);
      expectRefused(run('demo', 'seed', '--email', 'x@acme.test', '--mode', 'prod'), /--mode must be test or live/, 2);
    });
  });

  describe('members', () => {
    const person = () => uniqueEmail('person');
    let account: string;
    beforeAll(() => {
      account = uniqueEmail('team');
      createAccount(account);
    });

    it('members invite prints the id and the link; list, set-role and remove change what the API shows', async () => {
      const email = person();
      const invited = run('members', 'invite', '--email', email, '--account-email', account, '--role', 'admin', '--name', 'Ada');
      expect(invited.status).toBe(0);
      expect(invited.stdout).toMatch(/^usr_[0-9A-HJKMNP-TV-Z]{26}\n$/);
      expect(invited.stderr).toMatch(/invited .* as admin; .*\/invitations\/accept\?token=[A-Za-z0-9_-]{43}/);

      const [header, ...rows] = run('members', 'list', '--account-email', account).stdout.trimEnd().split('\n');
      expect(header.split('\t')).toEqual(['ID', 'EMAIL', 'NAME', 'ROLE', 'STATUS', 'LAST SEEN']);
      const byEmail = Object.fromEntries(rows.map((row) => row.split('\t')).map((cells) => [cells[1], cells]));
      expect(byEmail[email.toLowerCase()]).toEqual([invited.stdout.trim(), email.toLowerCase(), 'Ada', 'admin', 'invited', '-']);
      expect(byEmail[account.toLowerCase()].slice(3, 5)).toEqual(['owner', 'active']);

      // The operator may make owners, which a key may not.
      expect(run('members', 'set-role', '--email', email, '--account-email', account, '--role', 'owner').status).toBe(0);
      expect(run('members', 'remove', '--email', email, '--account-email', account).status).toBe(0);
      const row = (await db.query('select m.role, m.status from members m join users u on u.id = m.user_id where u.email = $1', [email.toLowerCase()])).rows[0];
      expect(row).toEqual({ role: 'owner', status: 'deactivated' });
    });

    it('refuses with one line: an unknown role, an unknown member, the last owner', () => {
      expectRefused(run('members', 'invite', '--email', person(), '--account-email', account, '--role', 'boss'), /--role must be owner, admin, member, viewer/);
      expectRefused(run('members', 'remove', '--email', person(), '--account-email', account), /No member of this account signs in with/, 1);
      expectRefused(run('members', 'remove', '--email', account, '--account-email', account), /at least one active owner/, 1);
      expectRefused(run('members', 'list', '--account-email', 'nobody@acme.test'), /No account with email/, 1);
    });
  });

  describe('bad arguments', () => {
    let email: string;
    beforeAll(() => {
      email = uniqueEmail('bad');
      createAccount(email);
    });

    it('an unknown command', () => {
      expectRefused(run('accounts', 'delete', '--email', email), /unknown command "accounts delete"/, 2);
      expectRefused(run('frobnicate'), /unknown command "frobnicate"/, 2);
    });

    it('a missing required option', () => {
      expectRefused(run('accounts', 'create', '--name', 'Acme'), /--email is required/, 2);
      expectRefused(run('accounts', 'create', '--email', uniqueEmail('noname')), /--name is required/, 2);
      expectRefused(run('keys', 'create', '--email', email, '--type', 'test'), /--name is required/, 2);
      expectRefused(run('keys', 'revoke'), /--id is required/, 2);
      expectRefused(run('accounts', 'set-plan', '--email', email), /--plan is required/, 2);
    });

    it('an option given without its value', () => {
      expectRefused(run('accounts', 'create', '--name', 'Acme', '--email'), /email/, 2);
    });

    it('a bad --type or --plan', async () => {
      expectRefused(run('keys', 'create', '--email', email, '--type', 'bogus', '--name', 'CI'), /--type must be test or live/, 2);
      const fresh = uniqueEmail('badplan');
      expectRefused(run('accounts', 'create', '--email', fresh, '--name', 'Acme', '--plan', 'bogus'), /--plan must be starter, professional or enterprise/, 2);
      expect(await accountRow(fresh)).toBeUndefined();
      expectRefused(run('accounts', 'set-plan', '--email', email, '--plan', 'platinum'), /--plan must be/, 2);
      expect((await accountRow(email))?.plan).toBe('starter');
    });

    it('an unknown flag or a stray argument', () => {
      expectRefused(run('accounts', 'create', '--email', uniqueEmail('flag'), '--name', 'Acme', '--bogus'), /Unknown option '--bogus'/, 2);
      expectRefused(run('keys', 'list', '--email', email, 'extra'), /extra/, 2);
    });

    it('bad limits', async () => {
      expectRefused(run('accounts', 'set-limits', '--email', email), /give --per-minute, --per-day or --reset/, 2);
      expectRefused(run('accounts', 'set-limits', '--email', email, '--per-minute', '0'), /--per-minute must be a positive integer/, 2);
      expectRefused(run('accounts', 'set-limits', '--email', email, '--per-minute', 'lots'), /--per-minute must be a positive integer/, 2);
      expectRefused(run('accounts', 'set-limits', '--email', email, '--per-day=-5'), /--per-day must be a positive integer/, 2);
      expectRefused(run('accounts', 'set-limits', '--email', email, '--reset', '--per-minute', '10'), /--reset cannot be combined/, 2);
      expect((await accountRow(email))?.custom_limits).toBeNull();
    });

    it('an invalid email', () => {
      expectRefused(run('accounts', 'create', '--email', 'not-an-email', '--name', 'Acme'), /email must be an email address/, 1);
    });

    it('a bad configuration', () => {
      const result = runWith({ DATABASE_URL: 'mysql://user:secret@db/app' }, 'keys', 'list', '--email', email);
      expect(result.status).not.toBe(0);
      expect(result.stderr.trim()).toBe('error: DATABASE_URL must use postgres: or postgresql:, got mysql:');
    });

    it('no command prints the help and exits non-zero', () => {
      const result = run();
      expect(result.status).not.toBe(0);
      expect(result.stdout).toContain('keys create --email');
      expect(run('--help').status).toBe(0);
    });
  });
});
