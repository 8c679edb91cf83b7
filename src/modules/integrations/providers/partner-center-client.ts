import type { ProviderSettings } from './provider-settings';
import { PARTNER_CENTER, partnerCenterReason, partnerCenterTokenRequest, readPartnerCenterGrant, referralsUrl } from './partner-center-auth';
import { jsonOf, ProviderCallOptions, providerRequest, ProviderRequest, ProviderResponse, ProviderUnreachable, retryAfterOf } from './provider-http';
import { cleanReason } from './verification-outcomes';

/** A referral as the referrals API answers it ("Referral resources"): the parts the co-sell worker reads. */
export interface PartnerCenterReferral {
  id: string;
  externalReferenceId: string | null;
  status: string;
  substatus: string;
  statusReason: string | null;
}

/** Partner Center refused the app or the user (invalid_grant, a 401 or 403 with a fresh token): the integration goes to `error`. */
export class PartnerCenterRefused extends Error {}

/** No usable answer (5xx, 429, the network, the deadline): try again later, after `retryAfterMs` when Partner Center said. */
export class PartnerCenterUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The referral itself is refused (Partner Center's 400: a required field missing or invalid): asking again would be refused again. The message says why, for co_sell.status_reason. */
export class ReferralRefused extends Error {}

/**
 * Where a Partner Center integration's credentials are read (fresh: another instance may have
 * rotated the refresh token since) and where a rotated refresh token is stored.
 */
export interface PartnerCenterCredentialStore {
  read(): Promise<Record<string, string>>;
  replace(credentials: Record<string, string>): Promise<void>;
}

interface CachedToken {
  accessToken: string;
  /** Date.now() after which the token is not used (a minute before Microsoft's expiry). */
  until: number;
}

/**
 * Access tokens of Partner Center integrations, per integration id, kept for as long as they live
 * (about an hour): every referral of an integration is read with one token, and one grant at a time
 * runs per integration (the others wait for it), since each grant spends the refresh token it
 * redeems and answers the next one.
 */
export class PartnerCenterTokens {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly grants = new Map<string, Promise<string>>();

  constructor(private readonly settings: ProviderSettings) {}

  async accessToken(integrationId: string, store: PartnerCenterCredentialStore, options: { fresh?: boolean } = {}): Promise<string> {
    const cached = this.tokens.get(integrationId);
    if (!options.fresh && cached && cached.until > Date.now()) return cached.accessToken;
    const running = this.grants.get(integrationId);
    if (running) return running;
    const grant = this.grant(integrationId, store).finally(() => this.grants.delete(integrationId));
    this.grants.set(integrationId, grant);
    return grant;
  }

  forget(integrationId: string): void {
    this.tokens.delete(integrationId);
  }

  /**
   * Redeems the stored refresh token. A refusal is tried once more with the credentials read again:
   * when another instance redeemed the same token a moment before, the stored one is already its
   * successor, and that one works.
   */
  private async grant(integrationId: string, store: PartnerCenterCredentialStore): Promise<string> {
    let credentials = await store.read();
    for (let attempt = 1; ; attempt++) {
      const secrets = { client_secret: credentials.client_secret, refresh_token: credentials.refresh_token };
      const response = await call(partnerCenterTokenRequest(credentials, this.settings.microsoftLoginUrl), this.options(), secrets);
      const grant = readPartnerCenterGrant(response);
      if (grant.kind === 'granted') {
        if (grant.refreshToken && grant.refreshToken !== credentials.refresh_token) await store.replace({ ...credentials, refresh_token: grant.refreshToken });
        this.tokens.set(integrationId, { accessToken: grant.accessToken, until: Date.now() + Math.max(0, grant.expiresInS - 60) * 1000 });
        return grant.accessToken;
      }
      if (grant.kind === 'unusable') throw unavailable(grant.response, secrets, grant.reason);
      if (attempt === 1) {
        const again = await store.read();
        if (again.refresh_token !== credentials.refresh_token) {
          credentials = again;
          continue;
        }
      }
      throw new PartnerCenterRefused(`${PARTNER_CENTER} refused the credentials: ${cleanReason(grant.reason, secrets)}`);
    }
  }

  options(): ProviderCallOptions {
    return {
      deadline: Date.now() + this.settings.timeoutMs,
      resolve: this.settings.resolve,
      guard: this.settings.guardConfiguredUrls && !this.settings.allowPrivateUrls,
    };
  }
}

/**
 * The referrals API of one integration ("Partner Center referrals API": create a referral, get a
 * referral by id, get a list of referrals with OData $filter), with its app+user token. A 401 is
 * tried once more with a new token (the cached one may have been revoked early); a second 401, or
 * a 403, is a refusal.
 */
export class PartnerCenterClient {
  constructor(
    private readonly integrationId: string,
    private readonly tokens: PartnerCenterTokens,
    private readonly store: PartnerCenterCredentialStore,
    private readonly apiUrl: string,
  ) {}

  /** The referral whose externalReferenceId is `externalId`, or null: how a retry finds a referral an earlier attempt created. */
  async findByExternalReference(externalId: string): Promise<PartnerCenterReferral | null> {
    const response = await this.send(() => ({
      method: 'GET',
      url: referralsUrl(this.apiUrl, { $filter: `externalReferenceId eq '${externalId.replace(/'/g, "''")}'` }),
    }));
    if (response.status !== 200) throw this.failure(response, 'listing referrals');
    const found = (jsonOf(response) as { value?: unknown } | undefined)?.value;
    if (!Array.isArray(found)) throw new PartnerCenterUnavailable(`${PARTNER_CENTER} answered a referral list without value`);
    const referrals = found.map(referralOf).filter((referral): referral is PartnerCenterReferral => referral !== null);
    return referrals.find((referral) => referral.externalReferenceId === externalId) ?? null;
  }

  async create(referral: object): Promise<PartnerCenterReferral> {
    const response = await this.send(() => ({
      method: 'POST',
      url: `${this.apiUrl}/v1.0/engagements/referrals`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(referral),
    }));
    if (response.status === 400) throw new ReferralRefused(`${PARTNER_CENTER} refused the referral: ${cleanReason(partnerCenterReason(response), {})}`);
    if (response.status !== 200 && response.status !== 201) throw this.failure(response, 'creating the referral');
    const created = referralOf(jsonOf(response));
    if (!created) throw new PartnerCenterUnavailable(`${PARTNER_CENTER} answered the new referral without its id or status`);
    return created;
  }

  /** The referral, or null when Partner Center has none with this id. */
  async get(id: string): Promise<PartnerCenterReferral | null> {
    const response = await this.send(() => ({ method: 'GET', url: `${this.apiUrl}/v1.0/engagements/referrals/${encodeURIComponent(id)}` }));
    if (response.status === 404) return null;
    if (response.status !== 200) throw this.failure(response, 'reading the referral');
    const referral = referralOf(jsonOf(response));
    if (!referral) throw new PartnerCenterUnavailable(`${PARTNER_CENTER} answered the referral without its id or status`);
    return referral;
  }

  private async send(build: () => ProviderRequest): Promise<ProviderResponse> {
    for (let attempt = 1; ; attempt++) {
      const token = await this.tokens.accessToken(this.integrationId, this.store, { fresh: attempt > 1 });
      const request = build();
      const response = await call({ ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } }, this.tokens.options(), {
        access_token: token,
      });
      if (response.status !== 401 || attempt > 1) return response;
      this.tokens.forget(this.integrationId);
    }
  }

  private failure(response: ProviderResponse, doing: string): Error {
    if (response.status === 401 || response.status === 403) {
      return new PartnerCenterRefused(`${PARTNER_CENTER} refused ${doing}: ${cleanReason(partnerCenterReason(response), {})}`);
    }
    return unavailable(response, {}, `${doing}: ${partnerCenterReason(response)}`);
  }
}

function unavailable(response: ProviderResponse, secrets: Record<string, string>, reason: string): PartnerCenterUnavailable {
  const retryAfterS = response.status === 429 ? (retryAfterOf(response) ?? 10) : undefined;
  return new PartnerCenterUnavailable(
    `${PARTNER_CENTER} could not be used (${cleanReason(reason, secrets)}${response.status === 429 ? ', rate limited' : ''})`,
    retryAfterS === undefined ? undefined : retryAfterS * 1000,
  );
}

async function call(request: ProviderRequest, options: ProviderCallOptions, secrets: Record<string, string>): Promise<ProviderResponse> {
  try {
    return await providerRequest(request, options);
  } catch (error) {
    if (error instanceof ProviderUnreachable)
      throw new PartnerCenterUnavailable(`${PARTNER_CENTER} could not be reached (${cleanReason(error.message, secrets)})`);
    throw error;
  }
}

/** The fields read from a referral, or null when it lacks its id or status. */
function referralOf(value: unknown): PartnerCenterReferral | null {
  const body = value as Record<string, unknown> | undefined;
  if (typeof body?.id !== 'string' || typeof body.status !== 'string') return null;
  return {
    id: body.id,
    externalReferenceId: typeof body.externalReferenceId === 'string' ? body.externalReferenceId : null,
    status: body.status,
    substatus: typeof body.substatus === 'string' ? body.substatus : '',
    statusReason: typeof body.statusReason === 'string' && body.statusReason.trim() ? body.statusReason.trim() : null,
  };
}
