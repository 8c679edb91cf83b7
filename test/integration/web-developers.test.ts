import { Browser, chromium, Page } from 'playwright-core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { LOCAL_RECEIVERS, startTestApp, TestApp } from '../helpers/app';
import { CHROMIUM_ARGS, CHROMIUM_INSTALL_TIMEOUT_MS, chromiumPath } from '../helpers/chromium';
import { WebhookReceiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';
import { screenshot, tableRows } from '../helpers/web';
import { expectSoundPage, newPerson, openAs, OpenPage, Person, restAs, VIEWPORTS } from '../helpers/workspace';

/**
 * The Developers section's Webhooks, Events and Request logs pages, driven in Chromium at a laptop's
 * and a phone's size. A loopback receiver plays the endpoint (the app allows private URLs, as in
 * local development); a second app on the same database keeps the address guard on, to show its
 * refusal on the URL field. Everything the pages show is checked against the API read over REST
 * or GraphQL with the person's key. Pictures go to docs/screenshots with UPDATE_SCREENSHOTS=1.
 */

/** The little of the DOM that page functions here use (the project compiles without lib "dom"). */
interface DomElement {
  id: string;
  className: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  closest(selector: string): DomElement | null;
}
declare const document: { activeElement: DomElement | null };

interface ApiWebhook {
  id: string;
  url: string;
  events: string[];
  status: string;
}
interface ApiAttempt {
  event_id: string;
  response_status: number | null;
  succeeded: boolean;
  attempt_number: number;
}
interface ApiEvent {
  id: string;
  type: string;
  data: { object: { id: string } };
}
interface ListOf<T> {
  data: T[];
  next_cursor: string | null;
}

let app: TestApp;
/** The same service with WEBHOOK_ALLOW_PRIVATE_URLS=false, on the same database. */
let guarded: TestApp;
let browser: Browser;
let receiver: WebhookReceiver;

beforeAll(async () => {
  const executablePath = chromiumPath();
  receiver = await new WebhookReceiver().start();
  app = await startTestApp({ env: LOCAL_RECEIVERS, webhooks: { retrySchedule: [0] }, requestLogs: { flushIntervalMs: 50 } });
  guarded = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' } });
  await app.reset();
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}, CHROMIUM_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await guarded?.close();
  await app?.close();
  await receiver?.stop();
});

/** Presses Tab until `matches` holds for the focused element (a keyboard user's way to a control). */
async function tabTo(page: Page, what: string, matches: (element: { id: string; value: string | null; type: string | null; text: string }) => boolean) {
  for (let presses = 0; presses < 80; presses++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const element = document.activeElement;
      return {
        id: element?.id ?? '',
        value: element?.getAttribute('value') ?? null,
        type: element?.getAttribute('type') ?? null,
        text: (element?.textContent ?? '').trim(),
      };
    });
    if (matches(focused)) return;
  }
  throw new Error(`Tab never reached ${what}`);
}

describe.each(VIEWPORTS)('the Developers pages at $width×$height', (viewport) => {
  const { label } = viewport;
  let person: Person;
  let open: OpenPage;
  let page: Page;
  let rest: ReturnType<typeof restAs>;
  /** The subscription made through the page, and the secret the page showed once. */
  let made: { id: string; secret: string };

  beforeAll(async () => {
    person = await newPerson(app, `dev-${label}`);
    rest = restAs(app, person.key);
    open = await openAs(browser, app, person, viewport);
    page = open.page;
  });
  afterAll(() => open?.context.close());

  it('refuses a loopback URL with the address guard’s own error on the URL field, and makes nothing', async () => {
    const refused = await openAs(browser, guarded, person, viewport);
    try {
      await refused.page.goto(`${guarded.baseUrl}/developers/webhooks`);
      await refused.page.getByText('No webhook endpoints yet.').waitFor();
      await refused.page.getByRole('button', { name: 'Add an endpoint' }).click();
      await refused.page.getByLabel('Endpoint URL').fill(receiver.url());
      await refused.page.getByRole('checkbox', { name: 'lead.created' }).check();
      await refused.page.getByRole('button', { name: 'Add endpoint' }).click();
      const url = refused.page.locator('#new-webhook-url');
      await waitFor('the URL field to be marked invalid', async () => (await url.getAttribute('aria-invalid')) === 'true');
      const shown = await refused.page.locator(`#${await url.getAttribute('aria-describedby')}`).textContent();
      // The same request over REST: the page shows the API's own message for the url parameter.
      const api = await guarded.request('POST', '/v1/webhooks', { key: person.key, body: { url: receiver.url(), events: ['lead.created'] } });
      expect([api.status, api.body.error.code, api.body.error.param]).toEqual([400, 'url_not_allowed', 'url']);
      expect(shown).toBe(api.body.error.message);
      expect(await refused.page.evaluate(() => document.activeElement?.id)).toBe('new-webhook-url');

      // No event chosen: the API's error is tied to the events group.
      await refused.page.getByRole('checkbox', { name: 'lead.created' }).uncheck();
      await refused.page.getByLabel('Endpoint URL').fill('https://93.184.216.34/hook');
      await refused.page.getByRole('button', { name: 'Add endpoint' }).click();
      const group = refused.page.getByRole('group', { name: 'Events to send' });
      await waitFor('the events group to name its error', async () => Boolean(await group.getAttribute('aria-describedby')));
      const eventsError = await refused.page.locator(`#${await group.getAttribute('aria-describedby')}`).textContent();
      const noEvents = await guarded.request('POST', '/v1/webhooks', { key: person.key, body: { url: 'https://93.184.216.34/hook', events: [] } });
      expect([noEvents.status, noEvents.body.error.param]).toEqual([400, 'events']);
      expect(eventsError).toBe(noEvents.body.error.message);
      expect((await rest<ListOf<ApiWebhook>>('GET', '/v1/webhooks')).data).toEqual([]);

      // The boxes offered are the names the API accepts, as its own error for an unknown one lists them.
      const unknown = await guarded.request('POST', '/v1/webhooks', { key: person.key, body: { url: 'https://93.184.216.34/hook', events: ['nope.nothing'] } });
      expect([unknown.status, unknown.body.error.param]).toEqual([400, 'events']);
      const accepted = (/: (.*)$/.exec(unknown.body.error.message)![1] as string).split(', ');
      const offered = await group.locator('input[type=checkbox]').evaluateAll((boxes: DomElement[]) => boxes.map((box) => box.getAttribute('value')));
      expect([...offered].sort()).toEqual([...accepted].sort());
      expect(offered).toContain('*');
      expect(offered).not.toContain('webhook.test');
    } finally {
      await refused.context.close();
    }
  });

  it('creates a webhook by keyboard alone and shows its signing secret once, focused', async () => {
    await page.goto(`${app.baseUrl}/developers/webhooks`);
    await page.getByText('No webhook endpoints yet.').waitFor();
    await expectSoundPage(open);
    await tabTo(page, 'the Add an endpoint button', (f) => f.id === 'add-webhook');
    await page.keyboard.press('Enter');
    await waitFor('the URL field to take focus', async () => (await page.evaluate(() => document.activeElement?.id)) === 'new-webhook-url');
    await page.keyboard.type(receiver.url(`/hook-${label}`));
    await page.keyboard.press('Tab');
    await page.keyboard.type('Keyboard endpoint');
    await tabTo(page, 'the lead.created box', (f) => f.type === 'checkbox' && f.value === 'lead.created');
    await page.keyboard.press('Space');
    await tabTo(page, 'the deal.won box', (f) => f.type === 'checkbox' && f.value === 'deal.won');
    await page.keyboard.press('Space');
    await tabTo(page, 'the Add endpoint button', (f) => f.text === 'Add endpoint');
    await page.keyboard.press('Enter');

    const secretBox = page.locator('.secret-once');
    await secretBox.waitFor();
    expect(await page.evaluate(() => document.activeElement?.className)).toContain('secret-once');
    expect(await secretBox.textContent()).toMatch(/only time the signing secret is shown/);
    const secret = (await page.locator('#webhook-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await expect(page.getByRole('button', { name: 'Copy secret' }).isVisible()).resolves.toBe(true);

    const webhooks = (await rest<ListOf<ApiWebhook>>('GET', '/v1/webhooks')).data;
    expect(webhooks).toHaveLength(1);
    expect(webhooks[0]).toMatchObject({
      url: receiver.url(`/hook-${label}`),
      events: ['lead.created', 'deal.won'],
      status: 'enabled',
      description: 'Keyboard endpoint',
    });
    made = { id: webhooks[0].id, secret };
    await waitFor('the list to show the endpoint', async () => (await tableRows(page, 'table[aria-label="Webhook endpoints"]')).length === 1);
    const [row] = await tableRows(page, 'table[aria-label="Webhook endpoints"]');
    expect(row.slice(0, 4)).toEqual([webhooks[0].url, 'Keyboard endpoint', 'lead.created, deal.won', 'Enabled']);
    await expectSoundPage(open);
    await screenshot(page, `webhooks-${label}`);

    await page.reload();
    await page.locator('table[aria-label="Webhook endpoints"]').waitFor();
    expect(await page.locator('.secret-once').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
  });

  it('sends a test event signed with that secret, shows its delivery, and resends it', async () => {
    await page.goto(`${app.baseUrl}/developers/webhooks/${made.id}`);
    await page.getByRole('button', { name: 'Send test event' }).click();
    const test = await waitFor('the receiver to get the test event', () =>
      receiver.requests.find((request) => request.path === `/hook-${label}` && JSON.parse(request.body).type === 'webhook.test'),
    );
    // The secret the page showed verifies the delivery's signature.
    const body = new StandardWebhook(made.secret).verify(test.body, test.headers as Record<string, string>) as { id: string };
    expect(body.id).toBe(test.headers['webhook-id']);
    const eventId = body.id;

    const attemptRows = () => tableRows(page, 'table[aria-label="Delivery attempts"]');
    await waitFor('the page to list the attempt', async () => (await attemptRows()).some((row) => row[0] === eventId));
    const attempts = async () => (await rest<ListOf<ApiAttempt>>('GET', `/v1/webhooks/${made.id}/attempts`)).data;
    const expectRowsMatchApi = async () => {
      const api = await attempts();
      const shown = await attemptRows();
      expect(shown.map((row) => row.slice(0, 4))).toEqual(
        api.map((a) => [a.event_id, a.succeeded ? 'Succeeded' : 'Failed', String(a.response_status ?? 'No answer'), `#${a.attempt_number}`]),
      );
    };
    await expectRowsMatchApi();
    expect((await attempts())[0]).toMatchObject({ event_id: eventId, response_status: 200, succeeded: true });
    // The answer's body is behind a disclosure.
    await page.getByText('Response body').first().click();
    await expect(page.locator('pre.snippet').first().textContent()).resolves.toBe('ok');

    await page
      .getByRole('button', { name: `Resend ${eventId}` })
      .first()
      .click();
    await waitFor('the receiver to get the event again', () => receiver.requests.filter((request) => request.headers['webhook-id'] === eventId).length === 2);
    await waitFor('the page to list the second attempt', async () => (await attemptRows()).filter((row) => row[0] === eventId).length === 2);
    await expectRowsMatchApi();
    await expectSoundPage(open);
    await screenshot(page, `webhook-${label}`);
  });

  it('edits, disables and enables the endpoint, rolls its secret, and deletes it after asking', async () => {
    await page.goto(`${app.baseUrl}/developers/webhooks/${made.id}`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByLabel('Description').fill('Renamed endpoint');
    await page.getByRole('checkbox', { name: 'deal.won' }).uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Renamed endpoint').waitFor();
    expect(await rest<ApiWebhook>('GET', `/v1/webhooks/${made.id}`)).toMatchObject({ description: 'Renamed endpoint', events: ['lead.created'] });

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect((await rest<ApiWebhook>('GET', `/v1/webhooks/${made.id}`)).status).toBe('disabled');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    expect((await rest<ApiWebhook>('GET', `/v1/webhooks/${made.id}`)).status).toBe('enabled');

    await page.getByRole('button', { name: 'Roll secret' }).click();
    await page.locator('.secret-once').waitFor();
    const rolled = (await page.locator('#webhook-secret').textContent())!.trim();
    expect(rolled).toMatch(/^whsec_/);
    expect(rolled).not.toBe(made.secret);
    // Deliveries are signed with the new secret now.
    await rest('POST', '/v1/leads', { company: `Rolled ${label}`, contact_email: `rolled-${label}-${Date.now()}@acme.test` });
    const delivered = await waitFor('the lead.created delivery', () =>
      receiver.requests.find((request) => request.path === `/hook-${label}` && JSON.parse(request.body).data.object.company === `Rolled ${label}`),
    );
    expect(() => new StandardWebhook(rolled).verify(delivered.body, delivered.headers as Record<string, string>)).not.toThrow();
    made.secret = rolled;
  });

  it('lists the events as GET /v1/events does, filtered by type and paged, each with its JSON and deliveries', async () => {
    for (let n = 0; n < 21; n++) await rest('POST', '/v1/leads', { company: `Events ${label} ${n}`, contact_email: `ev${n}-${label}-${Date.now()}@acme.test` });
    const firstPage = await rest<ListOf<ApiEvent>>('GET', '/v1/events?limit=20');
    expect(firstPage.next_cursor).not.toBeNull();
    const secondPage = await rest<ListOf<ApiEvent>>('GET', `/v1/events?limit=20&cursor=${encodeURIComponent(firstPage.next_cursor!)}`);

    await page.goto(`${app.baseUrl}/developers/events`);
    const shownIds = () =>
      page.locator('table[aria-label="Events"] a[data-event-id]').evaluateAll((links: DomElement[]) => links.map((a) => a.getAttribute('data-event-id')));
    await waitFor('the events to be listed', async () => (await shownIds()).length === 20);
    expect(await shownIds()).toEqual(firstPage.data.map((event) => event.id));
    const rows = await tableRows(page, 'table[aria-label="Events"]');
    expect(rows.map((row) => row.slice(0, 2))).toEqual(firstPage.data.map((event) => [event.type, event.data.object?.id ?? '—']));
    await expectSoundPage(open);
    await screenshot(page, `events-${label}`);

    await page.getByRole('button', { name: 'Next' }).click();
    await waitFor('the second page', async () => (await shownIds())[0] === secondPage.data[0].id);
    expect(await shownIds()).toEqual(secondPage.data.map((event) => event.id));
    await page.getByRole('button', { name: 'Previous' }).click();
    await waitFor('the first page again', async () => (await shownIds())[0] === firstPage.data[0].id);

    await page.getByLabel('Type').selectOption('webhook.test');
    const tests = await rest<ListOf<ApiEvent>>('GET', '/v1/events?type=webhook.test');
    expect(tests.data.length).toBeGreaterThan(0);
    await waitFor('the filtered list', async () => JSON.stringify(await shownIds()) === JSON.stringify(tests.data.map((event) => event.id)));

    // A lead.created event: its JSON is the API's, and its delivery to the endpoint is listed.
    const event = firstPage.data.find((candidate) => candidate.type === 'lead.created')!;
    await waitFor('the event to be delivered', () => receiver.requests.some((request) => request.headers['webhook-id'] === event.id));
    await page.goto(`${app.baseUrl}/developers/events/${event.id}`);
    const json = page.locator('pre.json');
    await json.waitFor();
    const shown = JSON.parse((await json.textContent())!) as Record<string, unknown>;
    const graphql = await app.graphql('query ($id: ID!) { event(id: $id) { id type apiVersion livemode createdAt data } }', { id: event.id }, person.key);
    expect(shown).toEqual(graphql.body.data.event);
    expect(shown.data).toEqual((await rest<ApiEvent>('GET', `/v1/events/${event.id}`)).data);
    await expect(page.locator('main h1').textContent()).resolves.toBe('lead.created');
    const deliveries = await waitFor('the event’s deliveries', async () => {
      const found = await tableRows(page, 'table[aria-label="Attempts to send this event"]');
      return found.length > 0 && found;
    });
    const apiAttempts = (await rest<ListOf<ApiAttempt>>('GET', `/v1/webhooks/${made.id}/attempts?limit=100`)).data.filter((a) => a.event_id === event.id);
    expect(deliveries.map((row) => row.slice(0, 4))).toEqual(
      apiAttempts.map((a) => [a.event_id, receiver.url(`/hook-${label}`), a.succeeded ? 'Succeeded' : 'Failed', String(a.response_status)]),
    );
    await expectSoundPage(open);
    await screenshot(page, `event-${label}`);
  });

  it('deletes the endpoint only once confirmed', async () => {
    await page.goto(`${app.baseUrl}/developers/webhooks/${made.id}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect((await rest<ListOf<ApiWebhook>>('GET', '/v1/webhooks')).data.map((w) => w.id)).toEqual([made.id]);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.waitForURL(`${app.baseUrl}/developers/webhooks`);
    await page.getByText('No webhook endpoints yet.').waitFor();
    expect((await rest<ListOf<ApiWebhook>>('GET', '/v1/webhooks')).data).toEqual([]);
  });

  it('shows why the service disabled an endpoint, in the list and on its page', async () => {
    receiver.answer = (request) => (request.path === `/gone-${label}` ? { status: 410, body: 'gone' } : { status: 200, body: 'ok' });
    const gone = await rest<ApiWebhook>('POST', '/v1/webhooks', { url: receiver.url(`/gone-${label}`), events: ['lead.created'] });
    await rest('POST', '/v1/leads', { company: `Gone ${label}`, contact_email: `gone-${label}-${Date.now()}@acme.test` });
    const disabled = await waitFor('the service to disable the endpoint', async () => {
      const webhook = await rest<ApiWebhook & { disabled_reason: string | null }>('GET', `/v1/webhooks/${gone.id}`);
      return webhook.status === 'disabled' && webhook;
    });
    expect(disabled.disabled_reason).toBeTruthy();
    await page.goto(`${app.baseUrl}/developers/webhooks`);
    await page.locator('table[aria-label="Webhook endpoints"]').waitFor();
    const [row] = await tableRows(page, 'table[aria-label="Webhook endpoints"]');
    expect(row[3]).toBe(`Disabled ${disabled.disabled_reason}`);
    await page.goto(`${app.baseUrl}/developers/webhooks/${gone.id}`);
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    await expect(page.locator('dl.facts').textContent()).resolves.toContain(disabled.disabled_reason!);
    await expect(page.getByRole('button', { name: 'Send test event' }).isDisabled()).resolves.toBe(true);
    const [attempt] = await tableRows(page, 'table[aria-label="Delivery attempts"]');
    expect(attempt.slice(1, 3)).toEqual(['Failed', '410']);
    await rest('DELETE', `/v1/webhooks/${gone.id}`);
  });

  it('shows the requests made with the key, with an errors-only filter', async () => {
    // A person of their own, so the only failed request of the account is the 404 below.
    const logger = await newPerson(app, `logs-${label}`);
    const logsOpen = await openAs(browser, app, logger, viewport);
    try {
      const logsPage = logsOpen.page;
      await logsPage.goto(`${app.baseUrl}/developers/logs`);
      await logsPage.getByText('appear here within seconds').waitFor();
      expect(await logsPage.locator('.empty').textContent()).toMatch(/kept 7 days/);

      const calls = [
        { method: 'POST', path: '/v1/leads', route: '/v1/leads', body: { company: 'Logged', contact_email: `logged-${label}-${Date.now()}@acme.test` } },
        { method: 'GET', path: '/v1/leads?limit=5', route: '/v1/leads' },
        { method: 'GET', path: '/v1/leads/lead_doesnotexist', route: '/v1/leads/:id' },
      ];
      const sent: Array<{ method: string; route: string; status: number; requestId: string }> = [];
      for (const call of calls) {
        const response = await app.request(call.method, call.path, { key: logger.key, body: call.body });
        sent.push({ ...call, status: response.status, requestId: response.headers.get('x-request-id')! });
      }
      expect(sent.map((call) => call.status)).toEqual([201, 200, 404]);

      const table = 'table[aria-label="Request logs"]';
      const rowOf = (rows: string[][], requestId: string) => rows.find((row) => row[3] === requestId);
      const rows = await waitFor('the page to show the three requests', async () => {
        await logsPage.getByRole('button', { name: 'Refresh the request logs' }).click();
        const shown = await tableRows(logsPage, table).catch(() => []);
        return sent.every((call) => rowOf(shown, call.requestId)) && shown;
      });
      const logged = (await app.graphql('{ requestLogs(filter: { limit: 100 }) { data { requestId keyPrefix } } }', {}, logger.key)).body.data.requestLogs
        .data as Array<{
        requestId: string;
        keyPrefix: string | null;
      }>;
      const keyPrefix = logged.find((log) => log.requestId === sent[0].requestId)!.keyPrefix;
      expect(keyPrefix).toMatch(/^sk_test_/);
      for (const call of sent)
        expect(rowOf(rows, call.requestId)!.slice(0, 5)).toEqual([call.method, call.route, String(call.status), call.requestId, keyPrefix]);
      // Newest first: the 404 was the last of the three.
      const order = sent.map((call) => rows.findIndex((row) => row[3] === call.requestId));
      expect([...order].sort((a, b) => b - a)).toEqual(order);
      await expectSoundPage(logsOpen);
      await screenshot(logsPage, `request-logs-${label}`);

      await logsPage.getByLabel('Errors only (status 400 and above)').check();
      await waitFor('only the failed request', async () => {
        const shown = await tableRows(logsPage, table);
        return shown.length === 1 && shown[0][3] === sent[2].requestId;
      });
      const errors = await app.graphql('{ requestLogs(filter: { errors: true }) { data { requestId status } } }', {}, logger.key);
      expect(errors.body.data.requestLogs.data).toEqual([{ requestId: sent[2].requestId, status: 404 }]);
      await expectSoundPage(logsOpen);
    } finally {
      await logsOpen.context.close();
    }
  });
});
