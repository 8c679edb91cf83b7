import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { waitFor } from './wait';

/**
 * A real OpenID Provider on loopback (oidc-provider, run by test/helpers/oidc-provider-process.mjs in a
 * process of its own), for the single sign-on tests: discovery, authorization with PKCE, the token
 * and userinfo endpoints and its signing keys are the library's, never written here.
 */
export interface OidcProviderOptions {
  clients: Array<{ client_id: string; client_secret: string; redirect_uris: string[]; token_endpoint_auth_method?: string }>;
  /** Claims answered for a login_hint (by default the hint as a verified e-mail). */
  accounts?: Record<string, Record<string, unknown>>;
  /** The issuer's host name (default 127.0.0.1, where it listens whatever this says). */
  issuerHost?: string;
}

export interface OidcProvider {
  issuer: string;
  /** Where it listens, whatever its issuer says. */
  url: string;
  close(): Promise<void>;
}

const SCRIPT = path.join(__dirname, 'oidc-provider-process.mjs');

export async function startOidcProvider(options: OidcProviderOptions): Promise<OidcProvider> {
  const child: ChildProcess = spawn(process.execPath, [SCRIPT, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await waitFor(`the OpenID provider to listen (stderr: ${errors})`, () => {
    if (child.exitCode !== null) throw new Error(`the OpenID provider exited with ${child.exitCode}: ${errors}`);
    return output.includes('\n') && output.slice(0, output.indexOf('\n'));
  });
  const { issuer, port } = JSON.parse(line) as { issuer: string; port: number };
  return {
    issuer,
    url: `http://127.0.0.1:${port}`,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The cookies of one browser, per host (paths ignored: every cookie of a host is sent back to it),
 * for following a sign-in's redirects by hand with fetch.
 */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  store(url: string, response: Response): void {
    const host = new URL(url).host;
    const cookies = this.byHost.get(host) ?? new Map<string, string>();
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some((attribute) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(attribute));
      if (expired || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    this.byHost.set(host, cookies);
  }

  header(url: string): string {
    const cookies = this.byHost.get(new URL(url).host);
    return cookies ? [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') : '';
  }

  get(url: string, name: string): string | undefined {
    return this.byHost.get(new URL(url).host)?.get(name);
  }

  /** One request with this jar's cookies, redirects not followed. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.store(url, response);
    return response;
  }
}
