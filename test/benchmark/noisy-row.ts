import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { measureNoisyNeighbour, NoisyNeighbourFigures, prepareNoisyAccount } from './noisy-neighbour';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist/src/cli/main.js');

export interface NoisyRowOptions {
  databaseUrl: string;
  redisUrl: string;
  serviceUrl: string;
  noiseS: number;
  /** B's leads (600; the quick run's fewer), on each of which its agent runs before anything is measured. */
  leads: number;
  /** Whether B's noise waits for a window of its own, so that it has its whole quota to spend (up to a minute; not in the quick run). */
  freshWindow: boolean;
  /** Resolves once the database is quiet (runs.ts settle). */
  quiet: () => Promise<void>;
  log: (line: string) => void;
}

/**
 * The noisy-neighbour row (issue 64): two new accounts through the documented CLI (a quiet one with
 * 20 leads, and B, Enterprise on its plan's quota once its data is written), then A's reads beside
 * B's noise (noisy-neighbour.ts). The CLI gets REDIS_URL, so B's new limits reach the service's
 * memory of keys at once.
 */
export async function measureNoisyRow(options: NoisyRowOptions): Promise<NoisyNeighbourFigures> {
  const env = { ...process.env, DATABASE_URL: options.databaseUrl, REDIS_URL: options.redisUrl, LOG_LEVEL: 'warn' };
  const cli = (...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  const tag = Date.now().toString(36);
  const key = (who: string) => {
    const email = `noisy-${who}-${tag}@sales-pipeline.test`;
    cli('accounts', 'create', '--email', email, '--name', `Noisy neighbour ${who}`, '--plan', 'enterprise');
    cli('accounts', 'set-limits', '--email', email, '--per-minute', '100000000');
    return { email, secret: cli('keys', 'create', '--email', email, '--type', 'live', '--name', 'noisy neighbour') };
  };
  const [a, b] = [key('a'), key('b')];
  options.log('noisy neighbour: writing the accounts’ data');
  for (let i = 0; i < 20; i++) {
    const response = await fetch(`${options.serviceUrl}/v1/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ company: `Quiet ${i}`, contact_email: `q${i}-${tag}@quiet.example` }),
    });
    if (response.status !== 201) throw new Error(`noisy neighbour: A's lead answered ${response.status}`);
  }
  const noisy = await prepareNoisyAccount(options.serviceUrl, b.secret, options.leads);
  cli('accounts', 'set-limits', '--email', b.email, '--reset');
  // B's noise starts in a window of its own: writing its data used the last one.
  const deadline = Date.now() + 90_000;
  for (;;) {
    const response = await fetch(`${options.serviceUrl}/v1/health`, { headers: { authorization: `Bearer ${b.secret}` } });
    const remaining = Number(response.headers.get('x-ratelimit-remaining'));
    if (response.headers.get('x-ratelimit-limit') === '1000' && (!options.freshWindow || remaining >= 990)) break;
    if (Date.now() > deadline) throw new Error("noisy neighbour: B's plan quota was not in force within 90 s");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  options.log(`noisy neighbour: ${options.noiseS} s of B's noise in 1 s slices, A reading throughout`);
  return measureNoisyNeighbour({ baseUrl: options.serviceUrl, quietKey: a.secret, noisyKey: b.secret, noisy, noiseS: options.noiseS, quiet: options.quiet });
}
