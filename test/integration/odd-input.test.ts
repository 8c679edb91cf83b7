import { LOCAL_RECEIVERS, startTestApp } from '../helpers/app';

/**
 * Odd JSON values (null, arrays, NUL, huge and tiny numbers, operator-looking objects) in every field
 * of the proposal, agent and webhook routes: each answer is a success or a 4xx in the contract's
 * error shape, never a 5xx (CONTRACT §3).
 */
it('answers odd input to the proposal, agent and webhook routes with 2xx or a 4xx error, never 5xx', async () => {
  const app = await startTestApp({ env: LOCAL_RECEIVERS });
  try {
    const o = await app.createAccount();
    const deal = await app.request('POST', '/v1/deals', { key: o.testKey, body: { name: 'D', value: 10 } });
    const agent = await app.request('POST', '/v1/agents', { key: o.testKey, body: { name: 'A', type: 'lead_qualifier' } });
    const odd: unknown[] = [
      null,
      [],
      'x',
      0,
      -1,
      1e308,
      true,
      {},
      { a: null },
      '\u0000',
      'x'.repeat(10000),
      [1, 2],
      { $gt: '' },
      -0.0001,
      1.23456789,
      'P-2026-000001',
    ];
    const routes: Array<[string, string, (v: unknown) => unknown]> = [
      ['POST', '/v1/proposals', (v) => ({ deal_id: deal.body.id, line_items: v })],
      ['POST', '/v1/proposals', (v) => ({ deal_id: v })],
      ['POST', '/v1/proposals', (v) => ({ deal_id: deal.body.id, discount_percent: v, tax_percent: v })],
      ['POST', '/v1/proposals', (v) => ({ deal_id: deal.body.id, line_items: [{ description: v, quantity: v, unit_price: v }] })],
      ['POST', '/v1/proposals', (v) => ({ deal_id: deal.body.id, valid_days: v, notes: v, title: v, metadata: v })],
      ['POST', '/v1/agents', (v) => ({ name: v, type: 'deal_follow_up', config: v })],
      ['POST', '/v1/agents', (v) => ({ name: 'x', type: 'deal_follow_up', config: { idle_days: v } })],
      ['POST', '/v1/agents', (v) => ({ name: 'x', type: 'proposal_drafter', config: { notes: v, valid_days: v } })],
      ['POST', `/v1/agents/${agent.body.id}/deploy`, (v) => ({ config: v })],
      ['POST', `/v1/agents/${agent.body.id}/deploy`, (v) => ({ config: { qualify_at: v, deal_value: v, open_deal: v } })],
      ['POST', '/v1/webhooks', (v) => ({ url: v, events: v })],
      ['POST', '/v1/webhooks', (v) => ({ url: 'http://127.0.0.1:1/x', events: ['*'], description: v })],
      ['PUT', '/v1/webhooks/wh_00000000000000000000000000', (v) => ({ url: v })],
    ];
    const bad: string[] = [];
    for (const [method, path, body] of routes) {
      for (const v of odd) {
        const r = await app.request(method, path, { key: o.testKey, body: body(v) });
        const shaped =
          r.status < 400 ||
          (r.status < 500 && typeof r.body?.error?.code === 'string' && typeof r.body.error.message === 'string' && /^req_/.test(r.body.error.request_id));
        if (r.status >= 500 || !shaped) bad.push(`${method} ${path} ${JSON.stringify(body(v)).slice(0, 120)} -> ${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    for (const q of ['window=1h', 'window=', 'window=24h&window=7d', 'window[]=x', 'x=1']) {
      const r = await app.request('GET', `/v1/agents/${agent.body.id}/metrics?${q}`, { key: o.testKey });
      if (r.status >= 500) bad.push(`metrics ${q} -> ${r.status}`);
    }
    for (const id of ['prop_x', 'prop_00000000000000000000000000', '%00', 'prop_' + 'Z'.repeat(26)]) {
      const r = await app.request('GET', `/v1/proposals/${id}/pdf`, { key: o.testKey });
      if (r.status >= 500) bad.push(`pdf ${id} -> ${r.status}`);
    }
    expect(bad).toEqual([]);
  } finally {
    await app.close();
  }
});
