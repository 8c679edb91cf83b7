import type { CrmLeadFields } from './crm-client';
import type { HaloPsaHttp } from './halopsa-http';
import { companyDomains, domainOfWebsite } from './company-domains';
import { clientBody, HaloClient, nameKey } from './halopsa-mapping';

/** At most this many pages of a client search are read (100 each): a company name or domain that matches more is not one company. */
const MAX_SEARCH_PAGES = 5;
const PAGE_SIZE = 100;

/**
 * Finds the HaloPSA client a lead's company is, or makes it: the same name (case and spacing
 * aside), else a client whose website has the domain of the lead's website or contact e-mail,
 * else a new client with the company's name and website. `GET /api/Client?search=` ("customers
 * like your search string"; the API's separate `search_name_only` says it looks past the name)
 * narrows the list, once by the name and once by each domain; the match itself is made here,
 * exactly, on the name or the website host of what it answers. What was found or made is
 * remembered for the rest of the run, so leads of one company in one batch share one client, and
 * a create repeated after a crash finds the first by its name. Free mailbox domains (gmail.com…)
 * name no company and are not searched.
 */
export class HaloCompanies {
  private readonly byKey = new Map<string, number>();

  constructor(private readonly http: HaloPsaHttp) {}

  async resolve(fields: CrmLeadFields): Promise<{ id: number } | { error: string }> {
    const name = nameKey(fields.company);
    if (name === '') return { error: 'the lead has no company name to match or create a HaloPSA client by' };
    const domains = companyDomains(fields);
    const known = [`name:${name}`, ...domains.map((domain) => `domain:${domain}`)].map((key) => this.byKey.get(key)).find((id) => id !== undefined);
    if (known !== undefined) return this.remember(known, name, domains);

    const byName = await this.search(fields.company.trim().replace(/\s+/g, ' '), (client) => nameKey(client.name ?? '') === name);
    if ('error' in byName) return byName;
    if (byName.found) return this.remember(byName.found.id, name, domains);
    for (const domain of domains) {
      const byDomain = await this.search(domain, (client) => domainOfWebsite(client.website) === domain);
      if ('error' in byDomain) return byDomain;
      if (byDomain.found) return this.remember(byDomain.found.id, name, domains);
    }

    const created = await this.http.post<HaloClient | HaloClient[]>('/api/Client', [clientBody(fields)]);
    if (created.status >= 400) return { error: `HaloPSA refused the client: ${created.reason}` };
    const client = Array.isArray(created.body) ? created.body[0] : created.body;
    if (typeof client?.id !== 'number') return { error: `HaloPSA answered ${created.status} to the new client without its id` };
    return this.remember(client.id, name, domains);
  }

  /** The first client of the search's answer that `matches`, reading page after page. */
  private async search(term: string, matches: (client: HaloClient) => boolean): Promise<{ found?: HaloClient } | { error: string }> {
    for (let page = 1; page <= MAX_SEARCH_PAGES; page++) {
      const query = new URLSearchParams({ search: term, pageinate: 'true', page_size: String(PAGE_SIZE), page_no: String(page) });
      const answer = await this.http.get<{ record_count?: number; clients?: HaloClient[] }>(`/api/Client?${query}`);
      if (answer.status >= 400) return { error: `HaloPSA would not search its clients for "${term}": ${answer.reason}` };
      const clients = answer.body?.clients ?? [];
      const found = clients.find(matches);
      if (found) return { found };
      if (clients.length < PAGE_SIZE || page * PAGE_SIZE >= (answer.body?.record_count ?? 0)) return {};
    }
    return {};
  }

  private remember(id: number, name: string, domains: string[]): { id: number } {
    this.byKey.set(`name:${name}`, id);
    for (const domain of domains) if (!this.byKey.has(`domain:${domain}`)) this.byKey.set(`domain:${domain}`, id);
    return { id };
  }
}
