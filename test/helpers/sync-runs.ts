import type { HttpResponse } from './app';
import { waitFor } from './wait';

/** A sync run as REST shows it. */
export interface SyncRunBody {
  id: string;
  object: string;
  integration_id: string;
  status: 'running' | 'succeeded' | 'failed';
  trigger: string;
  started_at: string;
  finished_at: string | null;
  pushed: number;
  pulled: number;
  failed: number;
  to_push: number;
  error: string | null;
}

type Api = (method: string, path: string, body?: unknown) => Promise<HttpResponse>;

/** Reading and starting an integration's sync runs through REST, waiting on what they show (never on the clock). */
export function syncRuns(api: Api) {
  const runs = async (integrationId: string): Promise<SyncRunBody[]> => (await api('GET', `/v1/integrations/${integrationId}/sync_runs?limit=100`)).body.data;
  /** Waits for no run to be running and the newest to have ended as `status`; returns it. */
  const settled = async (integrationId: string, status: SyncRunBody['status'] = 'succeeded') => {
    const run = await waitFor(`the sync runs of ${integrationId} to settle`, async () => {
      const all = await runs(integrationId);
      return all.length > 0 && all.every((one) => one.status !== 'running') ? all[0] : undefined;
    });
    expect({ status: run.status, error: run.error }).toEqual({ status, error: status === 'succeeded' ? null : expect.any(String) });
    return run;
  };
  /** POST …/sync until it starts a run: one for pending changes may start at any moment (then 409). */
  const startRun = (integrationId: string) =>
    waitFor('a run to start', async () => {
      const answer = await api('POST', `/v1/integrations/${integrationId}/sync`);
      return answer.status === 409 ? undefined : answer;
    });
  /** Starts a run now and waits for it to end. */
  const syncNow = async (integrationId: string, status: SyncRunBody['status'] = 'succeeded') => {
    const started = await startRun(integrationId);
    expect(started.status).toBe(202);
    const run = await waitFor(`run ${started.body.id} to end`, async () =>
      (await runs(integrationId)).find((one) => one.id === started.body.id && one.status !== 'running'),
    );
    expect({ status: run.status, error: run.error }).toEqual({ status, error: status === 'succeeded' ? null : expect.any(String) });
    return run;
  };
  return { runs, settled, startRun, syncNow };
}
