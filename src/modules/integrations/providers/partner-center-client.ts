import type { ProviderSettings } from './provider-settings';
import { PARTNER_CENTER, partnerCenterReason, partnerCenterTokenRequest, readPartnerCenterGrant, referralsUrl } from './partner-center-auth';
import { jsonOf, ProviderRequest, ProviderResponse } from './provider-http';
import { AccessToken, ProviderSession, SessionCall, SessionRules, TokenStore } from './provider-session';
import { cleanReason } from './verification-outcomes';

/**
 * How Partner Center's calls are retried: never here. A 5xx or no answer is PartnerCenterUnavailable
 * at once, and a 429 too, carrying its Retry-After (else 10 s): the co-sell worker tries the
 * registration again after its own backoff, never sooner than that wait.
 */
const PARTNER_CENTER_RULES: SessionRules = {
  host: 'configured',
  failures: { backoffMs: [], statuses: 'server-errors' },
  throttle: { retries: 0, defaultWaitMs: 10_000 },
};

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

/**
 * Access tokens of Partner Center integrations, per integration id, kept for as long as they live
 * (about an hour): every referral of an integration is read with one token, and one grant at a time
 * runs per integration (the others wait for it), since each grant spends the refresh token it
 * redeems and answers the next one.
 */
export class PartnerCenterTokens {
  private readonly tokens = new Map<string, AccessToken>();
  private readonly grants = new Map<string, Promise<AccessToken>>();

  constructor(readonly settings: ProviderSettings) {}

  /** Where the sessions of one integration keep its access token. */
  storeOf(integrationId: string): TokenStore {
    return {
      get: () => this.tokens.get(integrationId),
      set: (token) => this.tokens.set(integrationId, token),
      drop: () => this.forget(integrationId),
    };
  }

  /** The grant running for the integration, or `redeem` as the new one. */
  grant(integrationId: string, redeem: () => Promise<AccessToken>): Promise<AccessToken> {
    const running = this.grants.get(integrationId);
    if (running) return running;
    const grant = redeem().finally(() => this.grants.delete(integrationId));
    this.grants.set(integrationId, grant);
    return grant;
  }

  forget(integrationId: string): void {
    this.tokens.delete(integrationId);
  }
}

/** A referrals call names what it was doing ("listing referrals"); a grant, the secrets it sent. */
interface PartnerCenterCall extends SessionCall {
  doing?: string;
  secrets?: Record<string, string>;
}

/**
 * The referrals API of one integration ("Partner Center referrals API": create a referral, get a
 * referral by id, get a list of referrals with OData $filter), with its app+user token, through one
 * ProviderSession (PARTNER_CENTER_RULES). A 401 is tried once more with a new token (the cached one
 * may have been revoked early); a second 401, or a 403, is a refusal.
 */
export class PartnerCenterClient {
  private readonly session: ProviderSession<PartnerCenterCall>;
  private readonly loginUrl: string;

  constructor(
    integrationId: string,
    tokens: PartnerCenterTokens,
    private readonly store: PartnerCenterCredentialStore,
    private readonly apiUrl: string,
  ) {
    this.loginUrl = tokens.settings.microsoftLoginUrl;
    this.session = new ProviderSession<PartnerCenterCall>(tokens.settings, {
      ...PARTNER_CENTER_RULES,
      // Nothing is waited here (see PARTNER_CENTER_RULES).
      maxWaitMs: 0,
      token: { grant: () => tokens.grant(integrationId, () => this.redeem()), store: tokens.storeOf(integrationId), renewOn: [401] },
      throttled: (response, waitMs, call) => unavailable(this.reasonOf(response, call), call.secrets ?? {}, waitMs),
      failed: (failure, call) => {
        if (failure.kind === 'answered') return unavailable(this.reasonOf(failure.response, call), call.secrets ?? {});
        const accessToken = this.session.accessToken;
        const secrets = call.secrets ?? (accessToken ? { access_token: accessToken } : {});
        return new PartnerCenterUnavailable(`${PARTNER_CENTER} could not be reached (${cleanReason(failure.message, secrets)})`);
      },
    });
  }

  /** The referral whose externalReferenceId is `externalId`, or null: how a retry finds a referral an earlier attempt created. */
  async findByExternalReference(externalId: string): Promise<PartnerCenterReferral | null> {
    const doing = 'listing referrals';
    const response = await this.send(
      { method: 'GET', url: referralsUrl(this.apiUrl, { $filter: `externalReferenceId eq '${externalId.replace(/'/g, "''")}'` }) },
      { doing },
    );
    if (response.status !== 200) throw this.failure(response, doing);
    const found = (jsonOf(response) as { value?: unknown } | undefined)?.value;
    if (!Array.isArray(found)) throw new PartnerCenterUnavailable(`${PARTNER_CENTER} answered a referral list without value`);
    const referrals = found.map(referralOf).filter((referral): referral is PartnerCenterReferral => referral !== null);
    return referrals.find((referral) => referral.externalReferenceId === externalId) ?? null;
  }

  async create(referral: object): Promise<PartnerCenterReferral> {
    const doing = 'creating the referral';
    const response = await this.send(
      { method: 'POST', url: `${this.apiUrl}/v1.0/engagements/referrals`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(referral) },
      { doing, repeatable: false },
    );
    if (response.status === 400) throw new ReferralRefused(`${PARTNER_CENTER} refused the referral: ${cleanReason(partnerCenterReason(response), {})}`);
    if (response.status !== 200 && response.status !== 201) throw this.failure(response, doing);
    const created = referralOf(jsonOf(response));
    if (!created) throw new PartnerCenterUnavailable(`${PARTNER_CENTER} answered the new referral without its id or status`);
    return created;
  }

  /** The referral, or null when Partner Center has none with this id. */
  async get(id: string): Promise<PartnerCenterReferral | null> {
    const doing = 'reading the referral';
    const response = await this.send({ method: 'GET', url: `${this.apiUrl}/v1.0/engagements/referrals/${encodeURIComponent(id)}` }, { doing });
    if (response.status === 404) return null;
    if (response.status !== 200) throw this.failure(response, doing);
    const referral = referralOf(jsonOf(response));
    if (!referral) throw new PartnerCenterUnavailable(`${PARTNER_CENTER} answered the referral without its id or status`);
    return referral;
  }

  private send(request: ProviderRequest, call: PartnerCenterCall): Promise<ProviderResponse> {
    return this.session.send((token) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } }), call);
  }

  /**
   * Redeems the stored refresh token. A refusal is tried once more with the credentials read again:
   * when another instance redeemed the same token a moment before, the stored one is already its
   * successor, and that one works.
   */
  private async redeem(): Promise<AccessToken> {
    let credentials = await this.store.read();
    for (let attempt = 1; ; attempt++) {
      const secrets = { client_secret: credentials.client_secret, refresh_token: credentials.refresh_token };
      const response = await this.session.send(partnerCenterTokenRequest(credentials, this.loginUrl), { grant: true, secrets });
      const grant = readPartnerCenterGrant(response);
      if (grant.kind === 'granted') {
        if (grant.refreshToken && grant.refreshToken !== credentials.refresh_token)
          await this.store.replace({ ...credentials, refresh_token: grant.refreshToken });
        return { value: grant.accessToken, expiresAt: Date.now() + Math.max(0, grant.expiresInS - 60) * 1000 };
      }
      if (grant.kind === 'unusable') throw unavailable(grant.reason, secrets);
      if (attempt === 1) {
        const again = await this.store.read();
        if (again.refresh_token !== credentials.refresh_token) {
          credentials = again;
          continue;
        }
      }
      throw new PartnerCenterRefused(`${PARTNER_CENTER} refused the credentials: ${cleanReason(grant.reason, secrets)}`);
    }
  }

  /** What an unusable answer was to: a grant's status, or the referrals call and Partner Center's reason. */
  private reasonOf(response: ProviderResponse, call: PartnerCenterCall): string {
    return call.doing === undefined ? `answered ${response.status}` : `${call.doing}: ${partnerCenterReason(response)}`;
  }

  private failure(response: ProviderResponse, doing: string): Error {
    if (response.status === 401 || response.status === 403) {
      return new PartnerCenterRefused(`${PARTNER_CENTER} refused ${doing}: ${cleanReason(partnerCenterReason(response), {})}`);
    }
    return unavailable(`${doing}: ${partnerCenterReason(response)}`, {});
  }
}

/** `waitMs`: a 429's, when to come back. */
function unavailable(reason: string, secrets: Record<string, string>, waitMs?: number): PartnerCenterUnavailable {
  return new PartnerCenterUnavailable(
    `${PARTNER_CENTER} could not be used (${cleanReason(reason, secrets)}${waitMs === undefined ? '' : ', rate limited'})`,
    waitMs,
  );
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
