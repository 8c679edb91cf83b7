import * as oidc from 'openid-client';
import type { HostResolver } from '../../http/address-guard';
import { outboundRequest } from '../../http/outbound-request';

/**
 * The relying party of single sign-on, over openid-client (the certified library): discovery,
 * the authorization code flow with PKCE (S256), `state` and `nonce`, and the ID token's checks
 * (signature by the issuer's keys, issuer, audience, expiry, nonce) are the library's. What is ours:
 * every request to an issuer goes through the outbound address guard with a deadline
 * (src/http/outbound-request.ts), and failures are put into words a person can act on.
 */

export interface OidcSettings {
  /** SSO_ALLOW_PRIVATE_URLS: issuers on loopback and private addresses, and over plain http. */
  allowPrivateUrls: boolean;
  resolveHost: HostResolver;
  /** SSO_TIMEOUT_MS: the deadline of each request to the issuer. */
  timeoutMs: number;
}

/** What a connection's issuer is reached with. */
export interface IssuerClient {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
}

/** One sign-in's values the answer must match; kept server-side between the redirect and the callback. */
export interface AttemptSecrets extends Record<string, unknown> {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Who the issuer says signed in. */
export interface IssuerClaims {
  subject: string;
  email?: string;
  /** Absent when the issuer does not say (Entra ID sends no email_verified). */
  emailVerified?: boolean;
  name?: string;
}

/** Why the issuer could not be used, in words for the page that refuses the sign-in or the settings. */
export class SsoRefused extends Error {}

const SCOPE = 'openid email profile';
/** Discovery documents and key sets are small; a bigger answer is cut and fails to parse. */
const MAX_ANSWER_CHARS = 512 * 1024;
const NO_BODY = new Set([101, 204, 205, 304]);

function bodyText(body: oidc.CustomFetchOptions['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
  throw new SsoRefused('a request to the issuer had a body that cannot be sent');
}

/**
 * openid-client's fetch, through the address guard: the discovery document names the other
 * endpoints (keys, token, userinfo), so each of them is checked as it is connected to, not only the
 * issuer URL typed in the settings. One deadline per request; redirects are not followed.
 */
export function guardedFetch(settings: OidcSettings): oidc.CustomFetch {
  return async (url, options) => {
    const body = bodyText(options.body);
    const headers: Record<string, string> = { 'user-agent': 'sales-pipeline-api-sso', ...options.headers };
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const host = new URL(url).host;
    const outcome = await outboundRequest(
      { method: options.method, url, headers, body },
      { deadline: Date.now() + settings.timeoutMs, allowPrivate: settings.allowPrivateUrls, resolve: settings.resolveHost, maxAnswerChars: MAX_ANSWER_CHARS },
    );
    switch (outcome.kind) {
      case 'answered': {
        const answer = new Headers();
        for (const [name, value] of Object.entries(outcome.headers)) {
          for (const each of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, each);
        }
        const status = outcome.status ?? 502;
        return new Response(NO_BODY.has(status) ? null : outcome.text, { status, headers: answer });
      }
      case 'refused':
        throw new SsoRefused(`${host} may not be reached: ${outcome.message}`);
      case 'timed-out':
        throw new SsoRefused(`${host} did not answer within ${Math.round(settings.timeoutMs / 1000)} s`);
      case 'broken':
        throw new SsoRefused(`${host} broke off its answer`);
      case 'network-error':
        throw new SsoRefused(`${host} could not be reached (${outcome.code ?? outcome.message})`);
      case 'unsendable':
        throw new SsoRefused(`a request to ${host} could not be sent`);
    }
  };
}

/** The issuer's configuration from its discovery document (whose `issuer` must be the URL given), for this client. */
export async function discover(client: IssuerClient, settings: OidcSettings): Promise<oidc.Configuration> {
  const issuer = new URL(client.issuerUrl);
  try {
    return await oidc.discovery(issuer, client.clientId, undefined, oidc.ClientSecretBasic(client.clientSecret), {
      [oidc.customFetch]: guardedFetch(settings),
      timeout: Math.ceil(settings.timeoutMs / 1000),
      // Plain http only where private addresses are allowed (local development, tests).
      execute: settings.allowPrivateUrls && issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
    });
  } catch (error) {
    throw new SsoRefused(
      `The issuer's discovery document at ${issuer.href.replace(/\/$/, '')}/.well-known/openid-configuration could not be used: ${explain(error)}`,
    );
  }
}

/** Where to send the browser, and the values its answer must come back with. */
export async function authorizationRequest(
  config: oidc.Configuration,
  request: { redirectUri: string; loginHint: string },
): Promise<{ url: URL; secrets: AttemptSecrets }> {
  const secrets = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() };
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: request.redirectUri,
    scope: SCOPE,
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(secrets.codeVerifier),
    code_challenge_method: 'S256',
    state: secrets.state,
    nonce: secrets.nonce,
    login_hint: request.loginHint,
  });
  return { url, secrets };
}

/**
 * The issuer's answer at the callback: its state and issuer checked, the code exchanged (with the
 * PKCE verifier) for an ID token whose signature, issuer, audience, expiry and nonce are checked;
 * the e-mail from the ID token, or else from the userinfo endpoint (issuers that keep profile
 * claims out of ID tokens when an access token is issued). Throws with the reason otherwise.
 */
export async function authorizationAnswer(config: oidc.Configuration, callbackUrl: URL, secrets: AttemptSecrets): Promise<IssuerClaims> {
  const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: secrets.codeVerifier,
    expectedState: secrets.state,
    expectedNonce: secrets.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims()!;
  let source: Record<string, unknown> = claims;
  if (typeof claims.email !== 'string' && tokens.access_token) source = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
  return {
    subject: claims.sub,
    email: typeof source.email === 'string' ? source.email : undefined,
    emailVerified: typeof source.email_verified === 'boolean' ? source.email_verified : undefined,
    name: typeof source.name === 'string' ? source.name : typeof claims.name === 'string' ? claims.name : undefined,
  };
}

/** The innermost message of an error and its causes. */
function messages(error: unknown): string[] {
  const found: string[] = [];
  for (let each = error; each instanceof Error; each = each.cause) found.push(each.message);
  return found;
}

/** Why the library refused an answer, in words (it names the check that failed; the page names the reason). */
export function explain(error: unknown): string {
  for (let each = error; each instanceof Error; each = each.cause) if (each instanceof SsoRefused) return each.message;
  if (error instanceof oidc.AuthorizationResponseError) {
    return `the provider answered "${error.error}"${error.error_description ? `: ${error.error_description}` : ''}`;
  }
  if (error instanceof oidc.ResponseBodyError) {
    if (error.error === 'invalid_grant') return 'the provider refused the code of this sign-in: it was already used, or has expired';
    return `the provider answered "${error.error}"${error.error_description ? `: ${error.error_description}` : ''}`;
  }
  const text = messages(error).join(' / ');
  if (/"state"/.test(text)) return 'the answer does not belong to this sign-in: its state does not match';
  if (/"iss"|"issuer"/.test(text)) return "the answer comes from another issuer than this account's provider";
  if (/"aud"|"azp"/.test(text)) return 'the ID token was issued to another application (its audience is not this client)';
  if (/"nonce"/.test(text)) return 'the ID token belongs to another sign-in: its nonce does not match';
  if (/"exp"|"iat"|"nbf"/.test(text)) return 'the ID token has expired, or is not valid yet';
  return `the answer could not be verified (${text || 'unknown error'})`;
}
