import { companyDomains, domainOfWebsite } from './company-domains';
import { randomBytes } from 'node:crypto';
import type { CrmLeadFields, OutboundLead, PushOutcome } from './crm-client';
import { ConnectwiseHttp, quoted } from './connectwise-http';
import type { ConnectwiseSetup } from './connectwise-setup';

interface Company {
  id: number;
  name: string;
  website?: string | null;
}

/** ConnectWise's lengths (its OpenAPI document): a company's name and website; identifiers are kept to 25, within its 30. */
const NAME_MAX = 50;
const WEBSITE_MAX = 255;
const IDENTIFIER_MAX = 25;
/** Numbered identifiers tried (AcmeLtd2, AcmeLtd3…) before one with a random ending (a name of no Latin letters has them all taken soon). */
const NUMBERED_ATTEMPTS = 4;

function splitName(fields: CrmLeadFields): { firstName: string; lastName?: string } {
  const words = (fields.contactName ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { firstName: fields.contactEmail.split('@')[0].slice(0, 30) };
  return { firstName: words[0].slice(0, 30), ...(words.length > 1 ? { lastName: words.slice(1).join(' ').slice(0, 30) } : {}) };
}

/**
 * A lead is a company and a contact at the site: `{ company, contact }`. The company is the one
 * the lead is linked to already, else an active company of the same name (ConnectWise compares
 * without case), else one whose website has the domain of the lead's website or of its contact's
 * e-mail (not a personal mail provider's), else a new one (name, website, country: the lead's, or
 * the site's default, since ConnectWise wants at least one address field). A company found is
 * used as it is: it is the MSP's customer record, and we do not rename it. The contact is the
 * company's contact with the lead's e-mail, else a new one. A push repeated after a crash finds
 * what the first one made by the same name and e-mail, so nothing is made twice.
 */
export class ConnectwiseCompanies {
  constructor(
    private readonly http: ConnectwiseHttp,
    private readonly setup: ConnectwiseSetup,
  ) {}

  async upsert(lead: OutboundLead): Promise<PushOutcome> {
    const company = lead.external.company ? Number(lead.external.company) : await this.match(lead.fields);
    const companyId = company ?? (await this.create(lead.fields));
    if (typeof companyId === 'string') return { id: lead.id, error: `company: ${companyId}` };
    const contactId = lead.external.contact ? Number(lead.external.contact) : await this.contact(companyId, lead.fields);
    if (typeof contactId === 'string') return { id: lead.id, error: `contact: ${contactId}` };
    return { id: lead.id, external: { company: String(companyId), contact: String(contactId) } };
  }

  private async match(fields: CrmLeadFields): Promise<number | null> {
    const name = fields.company.trim().slice(0, NAME_MAX);
    const [byName] = await this.http.list<Company>('/company/companies', {
      conditions: `name=${quoted(name)} and deletedFlag=false`,
      orderBy: 'id asc',
      pageSize: '1',
    });
    if (byName) return byName.id;
    for (const domain of companyDomains(fields)) {
      // `like` narrows the search; the host itself must be the domain (acme.com is not notacme.com).
      const candidates = await this.http.list<Company>('/company/companies', {
        conditions: `website like ${quoted(`%${domain}%`)} and deletedFlag=false`,
        orderBy: 'id asc',
        pageSize: '100',
      });
      const found = candidates.find((candidate) => domainOfWebsite(candidate.website) === domain);
      if (found) return found.id;
    }
    return null;
  }

  /** The new company's id, or ConnectWise's reason for refusing it. An identifier taken already gets a number. */
  private async create(fields: CrmLeadFields): Promise<number | string> {
    const base = fields.company.replace(/[^A-Za-z0-9]/g, '').slice(0, IDENTIFIER_MAX - 1) || 'Company';
    const country = await this.setup.country(fields.country);
    const website = fields.website?.trim().slice(0, WEBSITE_MAX);
    let reason = '';
    for (let attempt = 1; attempt <= NUMBERED_ATTEMPTS + 1; attempt++) {
      const identifier =
        attempt === 1 ? base : attempt <= NUMBERED_ATTEMPTS ? `${base}${attempt}` : `${base.slice(0, IDENTIFIER_MAX - 6)}${randomBytes(3).toString('hex')}`;
      const answer = await this.http.request<{ id: number; errors?: Array<{ field?: string }> }>({
        method: 'POST',
        path: '/company/companies',
        body: {
          identifier,
          name: fields.company.trim().slice(0, NAME_MAX),
          ...(website ? { website } : {}),
          ...(country === null ? {} : { country: { id: country } }),
        },
      });
      if (answer.status === 201 || answer.status === 200) return answer.body!.id;
      reason = answer.reason;
      if (!answer.body?.errors?.some((error) => error.field === 'identifier')) break;
    }
    return reason;
  }

  private async contact(companyId: number, fields: CrmLeadFields): Promise<number | string> {
    const email = fields.contactEmail.trim();
    const [found] = await this.http.list<{ id: number }>('/company/contacts', {
      conditions: `company/id=${companyId}`,
      childConditions: `communicationItems/value=${quoted(email)}`,
      orderBy: 'id asc',
      pageSize: '1',
    });
    if (found) return found.id;
    const answer = await this.http.request<{ id: number }>({
      method: 'POST',
      path: '/company/contacts',
      body: {
        ...splitName(fields),
        company: { id: companyId },
        communicationItems: [{ type: { id: await this.setup.emailTypeId() }, value: email, defaultFlag: true }],
      },
    });
    return answer.status === 201 || answer.status === 200 ? answer.body!.id : answer.reason;
  }
}
