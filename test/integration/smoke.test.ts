import { startTestApp, TestApp } from '../helpers/app';

describe('smoke', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('creates and lists a lead', async () => {
    const { testKey } = await app.createAccount();
    const created = await app.request('POST', '/v1/leads', { key: testKey, body: { company: 'Acme', contact_email: 'a@acme.test' } });
    expect(created.status).toBe(201);
    const list = await app.request('GET', '/v1/leads', { key: testKey });
    expect(list.body.data.map((l: { id: string }) => l.id)).toEqual([created.body.id]);
  });
});
