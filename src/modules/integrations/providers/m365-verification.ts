import type { ProviderSettings } from './provider-settings';
import { jsonOf, ProviderRequest, ProviderResponse } from './provider-http';
import { notUsable, refused, unreachable, verificationCall } from './verification-outcomes';

const NAME = 'Microsoft 365';
/** App-only Graph takes the resource's /.default scope: the application permissions an admin granted, nothing asked for at run time. */
export const GRAPH_SCOPE = 'https://graph.microsoft.com/.default';

/**
 * The OAuth 2.0 client-credentials grant of the Microsoft identity platform ("Microsoft identity
 * platform and the OAuth 2.0 client credentials flow"): a form POST of client_id, client_secret,
 * scope and grant_type=client_credentials to {loginUrl}/{tenant}/oauth2/v2.0/token.
 */
export function microsoftTokenRequest(credentials: Record<string, string>, loginUrl: string): ProviderRequest {
  const form = new URLSearchParams({
    client_id: credentials.client_id,
    client_secret: credentials.client_secret,
    scope: GRAPH_SCOPE,
    grant_type: 'client_credentials',
  });
  return {
    method: 'POST',
    url: `${loginUrl}/${encodeURIComponent(credentials.tenant_id)}/oauth2/v2.0/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  };
}

/**
 * The token endpoint's refusal ({error, error_description, error_codes, timestamp, trace_id,
 * correlation_id}): the error and its AADSTS description, without the trace lines Microsoft
 * appends to it (they help Microsoft's support, not the person connecting).
 */
export function entraReason(response: ProviderResponse): string {
  const body = jsonOf(response) as { error?: unknown; error_description?: unknown } | undefined;
  if (typeof body?.error !== 'string') return `answered ${response.status}`;
  if (typeof body.error_description !== 'string') return body.error;
  return `${body.error}: ${body.error_description.split(/\s*Trace ID:/)[0]}`;
}

/** Graph's error body ({error: {code, message, innerError}}, "Microsoft Graph error responses"): code and message. */
export function graphReason(response: ProviderResponse): string {
  const error = (jsonOf(response) as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (typeof error?.code !== 'string') return `answered ${response.status}`;
  return typeof error.message === 'string' && error.message ? `${error.code}: ${error.message}` : error.code;
}

/** A user principal name in Graph's path: percent-encoded (a guest's #EXT# included), but with its @ as written. */
const userPath = (mailbox: string) => encodeURIComponent(mailbox).replace(/%40/g, '@');

/**
 * Microsoft 365: an Entra ID app registration and the mailbox it acts for. First the
 * client-credentials grant at the tenant's token endpoint (400/401 refuse: AADSTS90002 no such
 * tenant, AADSTS700016 no such application in it, AADSTS7000215 a wrong secret, AADSTS7000222 an
 * expired one), then `GET /v1.0/users/{mailbox}` on Graph with the app-only token ("Get user"):
 * 404 Request_ResourceNotFound is a mailbox the tenant does not have, 401/403 (for instance
 * Authorization_RequestDenied, an app without User.Read.All) a refusal in Graph's words. Both hosts
 * are configured (MICROSOFT_LOGIN_URL, MICROSOFT_GRAPH_URL), so both calls take the configured-host
 * guard; they share one deadline (settings.timeoutMs in all).
 *
 * The tenant, client id and mailbox are identifiers the caller sent, kept in the reason so it says
 * which one is wrong; the secret and the issued token are taken out of anything Microsoft echoes.
 */
export async function verifyMicrosoft365Credentials(credentials: Record<string, string>, settings: ProviderSettings): Promise<void> {
  const deadline = Date.now() + settings.timeoutMs;
  const options = { deadline, resolve: settings.resolve, guard: settings.guardConfiguredUrls && !settings.allowPrivateUrls };
  const secrets: Record<string, string> = { client_secret: credentials.client_secret };

  const grant = await verificationCall(NAME, microsoftTokenRequest(credentials, settings.microsoftLoginUrl), options, secrets);
  if (grant.status === 400 || grant.status === 401) throw refused(NAME, entraReason(grant), secrets);
  if (grant.status !== 200) throw notUsable(NAME, grant, secrets);
  const token = (jsonOf(grant) as { access_token?: unknown } | undefined)?.access_token;
  if (typeof token !== 'string' || token === '') throw unreachable(NAME, 'the token answer had no access_token', secrets);
  secrets.access_token = token;

  const mailbox = credentials.mailbox;
  const user = await verificationCall(
    NAME,
    {
      method: 'GET',
      url: `${settings.microsoftGraphUrl}/v1.0/users/${userPath(mailbox)}?$select=id,userPrincipalName,mail`,
      headers: { authorization: `Bearer ${token}` },
    },
    options,
    secrets,
  );
  if (user.status === 200) return;
  if (user.status === 404) throw refused(NAME, `the mailbox ${mailbox} was not found in the tenant (${graphReason(user)})`, secrets);
  if (user.status === 400) throw refused(NAME, `the mailbox ${mailbox} could not be read (${graphReason(user)})`, secrets);
  if (user.status === 401 || user.status === 403) throw refused(NAME, `reading the mailbox ${mailbox} was denied (${graphReason(user)})`, secrets);
  throw notUsable(NAME, user, secrets);
}
