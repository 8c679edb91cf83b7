import { parsePermissions } from '../../src/modules/accounts/key-permissions';
import { CliApi, CliHarness, expectRefused, startCliApi } from '../helpers/cli';

/** Issue 20: `keys create --restricted`, the permissions in `keys list`, and `keys roll`, as an operator runs them. */
describe('operator CLI: restricted and rolled keys', () => {
  const cli = new CliHarness();
  let api: CliApi;
  let email: string;

  const keyId = async (secret: string) =>
    (await cli.db.query(`select id from api_keys where secret_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')`, [secret])).rows[0]?.id as string;
  const listed = (id: string) => {
    const result = cli.run('keys', 'list', '--email', email);
    expect(result.status).toBe(0);
    return result.stdout
      .split('\n')
      .find((line) => line.startsWith(id))
      ?.split('\t');
  };

  beforeAll(async () => {
    await cli.start();
    api = await startCliApi(cli.databaseUrl);
    email = cli.uniqueEmail('restricted');
    cli.createAccount(email);
  });
  afterAll(async () => {
    await api?.stop();
    await cli.stop();
  });

  it('keys create --restricted prints an rk_ key that can do only what it names; keys list shows its permissions', async () => {
    const result = cli.run('keys', 'create', '--email', email, '--type', 'test', '--name', 'Reporting', '--restricted', 'leads=read, deals=write');
    expect(result.status).toBe(0);
    const secret = result.stdout.trim();
    expect(secret).toMatch(/^rk_test_[A-Za-z0-9]{32}$/);
    expect(result.stderr).toContain('restricted test key');
    expect(result.stderr).toContain('leads=read,deals=write');
    expect(result.stderr).not.toContain(secret.slice(8));

    const id = await keyId(secret);
    expect(listed(id)).toEqual([id, 'Reporting', 'test', `rk_test_…${secret.slice(-4)}`, 'leads=read,deals=write', expect.any(String), '-', '-']);
    const row = (await cli.db.query('select permissions from api_keys where id = $1', [id])).rows[0];
    expect(row.permissions).toEqual(parsePermissions('leads=read,deals=write'));
    expect(row.permissions.proposals).toBe('none');

    expect((await api.call('/v1/leads', secret)).status).toBe(200);
    const refused = await api.call('/v1/leads', secret, { method: 'POST', body: JSON.stringify({ company: 'CLI Co', contact_email: 'cli@co.test' }) });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ type: 'permission_error', code: 'permission_denied' });
    expect((await api.call('/v1/deals', secret, { method: 'POST', body: JSON.stringify({ name: 'CLI deal', value: 10 }) })).status).toBe(201);
  });

  it('refuses an unknown resource or level, or an empty list, with one line and exit code 2', async () => {
    const create = (permissions: string) => cli.run('keys', 'create', '--email', email, '--type', 'live', '--name', 'Bad', '--restricted', permissions);
    expectRefused(create('contacts=read'), /--restricted: unknown resource "contacts".*leads, deals, proposals/, 2);
    expectRefused(create('leads=admin'), /--restricted: unknown level "admin" for leads: use none, read or write/, 2);
    expectRefused(create('leads'), /--restricted: "leads" is not resource=level/, 2);
    expectRefused(create(','), /--restricted: name at least one permission/, 2);
    const count = await cli.db.query(`select count(*)::int as n from api_keys k join accounts a on a.id = k.account_id where a.email = $1 and k.name = 'Bad'`, [
      email,
    ]);
    expect(count.rows[0].n).toBe(0);
  });

  it('keys roll prints a new value for the same key; the old one works until it expires, then 401', async () => {
    const original = cli.run('keys', 'create', '--email', email, '--type', 'live', '--name', 'Sync', '--restricted', 'leads=read').stdout.trim();
    const id = await keyId(original);
    const before = listed(id);

    const rolled = cli.run('keys', 'roll', '--id', id, '--expires-in-hours', '24');
    expect(rolled.status).toBe(0);
    const secret = rolled.stdout.trim();
    expect(secret).toMatch(/^rk_live_[A-Za-z0-9]{32}$/);
    expect(secret).not.toBe(original);
    expect(rolled.stderr).toMatch(new RegExp(`rolled ${id} "Sync": the old value works until \\d{4}-`));
    expect(rolled.stderr).not.toContain(secret.slice(8));
    expect(await keyId(secret)).toBe(id);
    // Same id, name, type and permissions; the list shows the new value's last 4.
    expect(listed(id)).toEqual([id, 'Sync', 'live', `rk_live_…${secret.slice(-4)}`, 'leads=read', before![5], expect.any(String), '-']);
    for (const key of [secret, original]) expect((await api.call('/v1/leads', key)).status).toBe(200);

    const now = cli.run('keys', 'roll', '--id', id);
    expect(now.status).toBe(0);
    expect(now.stderr).toContain('the old value is refused from now on');
    const latest = now.stdout.trim();
    expect((await api.call('/v1/leads', latest)).status).toBe(200);
    for (const key of [secret, original]) {
      const refused = await api.call('/v1/leads', key);
      expect(refused.status).toBe(401);
      expect(refused.body.error.type).toBe('authentication_error');
    }
  });

  it('keys roll refuses a bad expiry, an unknown id and a revoked key', async () => {
    expectRefused(cli.run('keys', 'roll', '--id', 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV'), /No such API key/, 1);
    expectRefused(
      cli.run('keys', 'roll', '--id', 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--expires-in-hours=-1'),
      /--expires-in-hours must be a whole number from 0 to 168/,
      2,
    );
    expectRefused(cli.run('keys', 'roll', '--id', 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--expires-in-hours', '169'), /from 0 to 168, got "169"/, 2);
    expectRefused(cli.run('keys', 'roll'), /--id is required/, 2);
    const secret = cli.run('keys', 'create', '--email', email, '--type', 'test', '--name', 'Old').stdout.trim();
    const id = await keyId(secret);
    expect(cli.run('keys', 'revoke', '--id', id).status).toBe(0);
    expectRefused(cli.run('keys', 'roll', '--id', id), /is revoked and cannot be rolled/, 1);
  });
});
