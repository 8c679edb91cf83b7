#!/usr/bin/env node
/**
 * A real OpenID Provider (panva's oidc-provider, the certified OP library) on loopback, for the
 * single sign-on tests. A separate process because oidc-provider is an ES module that jest's
 * CommonJS module system cannot load; test/helpers/oidc-provider.ts starts it.
 *
 *   node oidc-provider-process.mjs '{"clients": [...], "accounts": {...}, "issuerHost": "127.0.0.1"}'
 *
 * prints one line of JSON, {"issuer", "port"}, once it listens on 127.0.0.1. `issuerHost` names the
 * issuer's host (reached at 127.0.0.1 whatever it says: "localhost" makes a provider whose discovery
 * document names another issuer than the address it is read from). The person who signs in is the
 * authorization request's login_hint, already signed in at the provider: the interaction is
 * finished at once with their consent to the scopes asked for. `accounts` maps a login_hint to the
 * claims the provider answers for it; by default, the hint as a verified e-mail.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const options = JSON.parse(process.argv[2] ?? '{}');
const accounts = options.accounts ?? {};

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address();
const issuer = `http://${options.issuerHost ?? '127.0.0.1'}:${port}`;

/** The claims of the person a login_hint names; `sub` is stable per hint. */
function claimsOf(hint) {
  const given = accounts[hint] ?? {};
  return {
    sub: createHash('sha256').update(hint).digest('hex').slice(0, 24),
    email: hint,
    email_verified: true,
    name: hint.split('@')[0],
    ...given,
  };
}
const subjects = new Map();

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const provider = new Provider(issuer, {
  clients: options.clients ?? [],
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test-signing-key', use: 'sig', alg: 'RS256' }] },
  cookies: { keys: ['oidc-provider test cookie key'] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  features: { devInteractions: { enabled: false } },
  async findAccount(_ctx, sub) {
    const claims = subjects.get(sub);
    return claims && { accountId: sub, claims: () => claims };
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
});
// Quiet: the provider's warnings about development settings are not what a test reads.
provider.on('server_error', (_ctx, error) => process.stderr.write(`[oidc-provider] ${error.stack}\n`));

const handle = provider.callback();
server.on('request', async (req, res) => {
  if (!req.url.startsWith('/interaction/')) return handle(req, res);
  try {
    const details = await provider.interactionDetails(req, res);
    const hint = String(details.params.login_hint ?? '');
    if (!hint) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('this test provider signs in the login_hint; none was sent');
      return;
    }
    const claims = claimsOf(hint);
    subjects.set(claims.sub, claims);
    const grant = new provider.Grant({ accountId: claims.sub, clientId: details.params.client_id });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: claims.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
  } catch (error) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
  }
});

process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
