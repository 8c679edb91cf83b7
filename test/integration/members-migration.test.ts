import { Client } from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { appOrmConfig } from '../../src/app/orm';
import { serverUrl, workerDatabaseUrl } from '../helpers/database';

/**
 * The members migration (Migration20261207200000) on a database as the previous release left it:
 * an account that is one person (e-mail, password hash, verification on the account row) with a
 * session and an e-mailed link becomes an account whose first owner is that person, with the
 * session and link now theirs, and the account row without the password. And back down again.
 */
describe('the members migration', () => {
  const BEFORE = 'Migration20261207130000';
  let url: string;
  let orm: MikroORM;
  let db: Client;

  beforeAll(async () => {
    // A database of its own, made afresh: the worker's shared one is already migrated.
    const base = await workerDatabaseUrl('_members_migration');
    const name = new URL(base).pathname.slice(1);
    const admin = new Client({ connectionString: serverUrl() });
    await admin.connect();
    await admin.query(`drop database if exists ${admin.escapeIdentifier(name)} with (force)`);
    await admin.query(`create database ${admin.escapeIdentifier(name)}`);
    await admin.end();
    url = base;
    orm = await MikroORM.init(appOrmConfig({ clientUrl: url, poolMax: 2 }));
    await orm.getMigrator().up({ to: BEFORE });
    db = new Client({ connectionString: url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await orm?.close();
  });

  it('makes each account login its first owner, keeps sign-ins, and goes back down', async () => {
    const body = '0123456789ABCDEFGHJKMNPQRS';
    await db.query(
      `insert into accounts (id, name, email, plan, password_hash, email_verified_at, created_at, updated_at)
       values ($1, 'Old Co', 'old@co.test', 'starter', 'scrypt$old-hash', now(), now(), now())`,
      [`acct_${body}`],
    );
    await db.query(
      `insert into web_sessions (token_hash, account_id, csrf_token, livemode, created_at, expires_at) values ('session-hash', $1, 'csrf', false, now(), now() + interval '1 day')`,
      [`acct_${body}`],
    );
    await db.query(
      `insert into account_email_tokens (token_hash, account_id, purpose, created_at, expires_at) values ('link-hash', $1, 'reset_password', now(), now() + interval '1 hour')`,
      [`acct_${body}`],
    );

    await orm.getMigrator().up();
    const { rows: users } = await db.query('select id, email, name, password_hash, email_verified_at from users');
    expect(users).toEqual([{ id: `usr_${body}`, email: 'old@co.test', name: 'Old Co', password_hash: 'scrypt$old-hash', email_verified_at: expect.any(Date) }]);
    const { rows: members } = await db.query('select account_id, user_id, role, status from members');
    expect(members).toEqual([{ account_id: `acct_${body}`, user_id: `usr_${body}`, role: 'owner', status: 'active' }]);
    expect((await db.query('select user_id from web_sessions')).rows).toEqual([{ user_id: `usr_${body}` }]);
    expect((await db.query('select user_id, account_id from account_email_tokens')).rows).toEqual([{ user_id: `usr_${body}`, account_id: `acct_${body}` }]);
    const columns = (await db.query(`select column_name from information_schema.columns where table_name = 'accounts'`)).rows.map((row) => row.column_name);
    expect(columns).not.toContain('password_hash');

    await orm.getMigrator().down({ to: BEFORE });
    expect((await db.query('select password_hash from accounts')).rows).toEqual([{ password_hash: 'scrypt$old-hash' }]);
    expect((await db.query(`select to_regclass('users') as users`)).rows).toEqual([{ users: null }]);
  });
});
