import { PERSONAL_MAIL_DOMAINS } from '../../../common/personal-mail-domains';

/**
 * The domains a lead's company is known by, for matching it to a company a CRM or PSA already
 * holds: its website's host (without `www.`), then its contact's e-mail domain unless that is a
 * mailbox provider's, which names no company.
 */

/** The host of a website (with or without a scheme), lower case and without `www.`; null unless it is a dotted name. */
export function domainOfWebsite(website: string | null | undefined): string | null {
  const text = website?.trim();
  if (!text) return null;
  try {
    const host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`).hostname.toLowerCase();
    const bare = host.replace(/^www\./, '');
    return bare.includes('.') ? bare : null;
  } catch {
    return null;
  }
}

/** The lead's company domains, most telling first, each once. */
export function companyDomains(fields: { website: string | null; contactEmail: string }): string[] {
  const domains: string[] = [];
  const website = domainOfWebsite(fields.website);
  if (website) domains.push(website);
  const email = fields.contactEmail.split('@')[1]?.trim().toLowerCase();
  if (email && email.includes('.') && !PERSONAL_MAIL_DOMAINS.has(email) && !domains.includes(email)) domains.push(email);
  return domains;
}
