import { EntityManager, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { decryptJson, encryptJson } from '../../common/crypto';
import { newId } from '../../common/ids';
import { PERSONAL_MAIL_DOMAINS } from '../../common/personal-mail-domains';
import { tenantFork } from '../../db/tenant';
import { checkPublicUrl, UrlRefused } from '../../http/address-guard';
import { Account } from '../accounts/account.entity';
import { isRole, Role } from '../accounts/key-permissions';
import { User } from '../accounts/user.entity';
import { Member, MemberStatus } from '../members/member.entity';
import type { MemberService } from '../members/member.service';
import { discover, IssuerClaims, IssuerClient, OidcSettings, SsoRefused } from './oidc-client';
import { SsoConnection, SsoDomain } from './sso-connection.entity';

export interface SsoSettings extends OidcSettings {
  encryptionKey: Buffer;
}

/** The settings form, as sent. */
export interface SsoConnectionInput {
  issuerUrl: string;
  clientId: string;
  /** Empty: keep the stored one (required for a new connection). */
  clientSecret: string;
  /** Comma- or space-separated. */
  domains: string;
  defaultRole: string;
  requireSso: boolean;
}

/** The roles a first sign-in may give: an owner is made by an owner, never by an issuer. */
export const SSO_DEFAULT_ROLES: readonly Role[] = ['member', 'viewer', 'admin'];
const MAX_DOMAINS = 20;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

const domainOf = (email: string) => email.trim().toLowerCase().split('@').pop() ?? '';
const invalid = (param: string, message: string) => new ApiError('parameter_invalid', message, { param });

/** The connection covering an address's domain (whatever the account), with its domains; null when none does. */
export async function ssoConnectionFor(em: EntityManager, email: string): Promise<SsoConnection | null> {
  const domain = await em.findOne(SsoDomain, { domain: domainOf(email) }, { populate: ['connection', 'connection.account'] });
  return domain ? domain.connection.getEntity() : null;
}

/**
 * The account's single sign-on (issue 67): its OpenID connection's settings, checked against the
 * issuer before they are kept, and the people it signs in. Not tenant data of the API: the web app's
 * settings page and sign-in read it by account or by domain, explicitly.
 */
export class SsoService {
  constructor(
    private readonly em: EntityManager,
    private readonly settings: SsoSettings,
  ) {}

  async ofAccount(accountId: string): Promise<SsoConnection | null> {
    return this.em.findOne(SsoConnection, { account: accountId }, { populate: ['domains'] });
  }

  /** What the issuer is reached with (the secret decrypted). */
  async clientOf(connection: SsoConnection): Promise<IssuerClient> {
    await this.em.populate(connection, ['clientSecretEncrypted']);
    const { secret } = decryptJson<{ secret: string }>(connection.clientSecretEncrypted, this.settings.encryptionKey);
    return { issuerUrl: connection.issuerUrl, clientId: connection.clientId, clientSecret: secret };
  }

  /**
   * Creates or changes the account's connection. Each field is checked (ApiError naming it), then
   * the issuer itself: its discovery document must be readable, through the address guard, and
   * name the URL given as its issuer. A domain may be covered only if an active member of the
   * account signs in with a verified address at it (a person who proved a mailbox there), and by
   * one account only; never a domain of personal mailboxes.
   */
  async save(accountId: string, input: SsoConnectionInput): Promise<void> {
    const existing = await this.ofAccount(accountId);
    const issuerUrl = await this.checkIssuerUrl(input.issuerUrl.trim());
    const clientId = input.clientId.trim();
    if (!clientId || clientId.length > 255) throw invalid('client_id', 'Enter the client (application) ID the provider gave.');
    const clientSecret = input.clientSecret.trim() || (existing ? (await this.clientOf(existing)).clientSecret : '');
    if (!clientSecret) throw invalid('client_secret', 'Enter the client secret the provider gave.');
    if (clientSecret.length > 1000) throw invalid('client_secret', 'The client secret is too long.');
    if (!isRole(input.defaultRole) || !SSO_DEFAULT_ROLES.includes(input.defaultRole)) {
      throw invalid('default_role', `Choose the role of people who sign in for the first time: ${SSO_DEFAULT_ROLES.join(', ')}.`);
    }
    const defaultRole = input.defaultRole;
    const domains = await this.checkDomains(accountId, input.domains);
    try {
      await discover({ issuerUrl, clientId, clientSecret }, this.settings);
    } catch (error) {
      if (error instanceof SsoRefused) throw invalid('issuer_url', error.message);
      throw error;
    }
    const values = {
      issuerUrl,
      clientId,
      clientSecretEncrypted: encryptJson({ secret: clientSecret }, this.settings.encryptionKey),
      defaultRole,
      requireSso: input.requireSso,
    };
    try {
      await this.em.transactional(async (em) => {
        const id = existing?.id ?? newId('sso');
        if (existing) await em.nativeUpdate(SsoConnection, { id }, { ...values, updatedAt: new Date() });
        else await em.insert(SsoConnection, { id, account: accountId, ...values, createdAt: new Date(), updatedAt: new Date() });
        await em.nativeDelete(SsoDomain, { connection: id });
        await em.insertMany(
          SsoDomain,
          domains.map((domain) => ({ domain, connection: id, createdAt: new Date() })),
        );
      });
    } catch (error) {
      // Another account took one of the domains between the check and the write.
      if (error instanceof UniqueConstraintViolationException) throw invalid('domains', 'Another account covers one of these domains with its single sign-on.');
      throw error;
    }
  }

  /** Removes the account's connection; the sessions it started end with it (web_sessions' foreign key). */
  async remove(accountId: string): Promise<boolean> {
    return (await this.em.nativeDelete(SsoConnection, { account: accountId })) > 0;
  }

  /**
   * Lets in the person the issuer signed in: their address must be in one of the connection's
   * domains (and not said to be unverified). A new person is made (their address counts as
   * verified: the account's issuer vouches for its domains) and joins with the default role; an
   * address that was signed up for but never verified loses that password (whoever chose it never
   * proved the mailbox). Answers who to sign in where, or why not.
   */
  async admit(
    connection: SsoConnection,
    claims: IssuerClaims,
    membersOf: (em: EntityManager) => MemberService,
  ): Promise<{ user: User; account: Account } | { refused: string }> {
    const email = claims.email?.trim().toLowerCase();
    if (!email || !email.includes('@')) return { refused: 'The provider did not say which e-mail address signed in (the "email" claim).' };
    if (claims.emailVerified === false) return { refused: `The provider says ${email} is not verified.` };
    const covered = connection.domains.getItems().map((entry) => entry.domain);
    if (!covered.includes(domainOf(email))) {
      return { refused: `The provider signed in ${email}, but this account's single sign-on covers ${covered.join(', ')} only.` };
    }
    const account = connection.account.getEntity();
    try {
      return await this.em.transactional(async (em) => {
        let user = await em.findOne(User, { email }, { populate: ['passwordHash'] });
        if (!user) {
          user = em.create(User, { email, name: claims.name?.trim().slice(0, 200) || email.split('@')[0], passwordHash: null, emailVerifiedAt: new Date() });
        } else if (!user.emailVerifiedAt) {
          user.emailVerifiedAt = new Date();
          user.passwordHash = null;
        }
        await em.flush();
        await membersOf(tenantFork(em, { accountId: account.id, livemode: false })).admit(user.id, connection.defaultRole);
        return { user, account };
      });
    } catch (error) {
      if (error instanceof ApiError) return { refused: error.message };
      throw error;
    }
  }

  private async checkIssuerUrl(text: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalid('issuer_url', 'Enter the issuer URL, such as https://login.microsoftonline.com/{tenant ID}/v2.0.');
    }
    const schemes = this.settings.allowPrivateUrls ? ['https:', 'http:'] : ['https:'];
    if (!schemes.includes(url.protocol) || url.username || url.password || url.search || url.hash) {
      throw invalid('issuer_url', 'The issuer URL must be an https:// address without a query, as the provider shows it.');
    }
    if (!this.settings.allowPrivateUrls) {
      try {
        await checkPublicUrl(url.href, this.settings.resolveHost);
      } catch (error) {
        if (error instanceof UrlRefused) throw invalid('issuer_url', `The issuer URL ${error.message.replace(/^url /, '')}.`);
        throw error;
      }
    }
    return text.replace(/\/+$/, '');
  }

  private async checkDomains(accountId: string, text: string): Promise<string[]> {
    const domains = [
      ...new Set(
        text
          .split(/[\s,;]+/)
          .map((domain) => domain.trim().toLowerCase().replace(/^@/, ''))
          .filter(Boolean),
      ),
    ];
    if (!domains.length) throw invalid('domains', 'Enter the e-mail domains this sign-in covers, such as acme.com.');
    if (domains.length > MAX_DOMAINS) throw invalid('domains', `At most ${MAX_DOMAINS} domains.`);
    const malformed = domains.find((domain) => !DOMAIN.test(domain));
    if (malformed) throw invalid('domains', `"${malformed}" is not an e-mail domain (such as acme.com).`);
    const personal = domains.find((domain) => PERSONAL_MAIL_DOMAINS.has(domain));
    if (personal) throw invalid('domains', `${personal} is a domain of personal mailboxes: it names no organization.`);
    const members = await this.em.find(
      Member,
      { account: accountId, status: MemberStatus.active, user: { emailVerifiedAt: { $ne: null } } },
      { filters: false, populate: ['user'] },
    );
    const proven = new Set(members.map((member) => domainOf(member.user.getEntity().email)));
    const unproven = domains.find((domain) => !proven.has(domain));
    if (unproven) {
      throw invalid('domains', `No active member of this account signs in with a verified address at ${unproven}: invite someone from it first.`);
    }
    const taken = await this.em.find(SsoDomain, { domain: { $in: domains }, connection: { account: { $ne: accountId } } });
    if (taken.length) throw invalid('domains', `Another account covers ${taken[0].domain} with its single sign-on.`);
    return domains;
  }
}
