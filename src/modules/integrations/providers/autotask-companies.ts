import type { AutotaskHttp, Made } from './autotask-http';
import { companyDomains, domainOfWebsite } from './company-domains';
import { COMPANY_TYPE_PROSPECT, eq, fit, MAX, PHONE_NOT_GIVEN } from './autotask-mapping';
import type { CrmLeadFields } from './crm-client';

interface CompanyRow {
  id: number;
  companyName?: string;
  webAddress?: string | null;
  isActive?: boolean;
}

/**
 * Leads' companies at Autotask (Companies), for one run: the company of the lead's name (compared
 * without regard to case, here as at Autotask), else the one whose web address has the lead's
 * website's domain or its contact's e-mail domain, else a new prospect with the lead's company
 * name, website and country, owned by the API user's resource. A company the MSP has is only ever
 * read: never renamed, never deleted.
 */
export class AutotaskCompanies {
  /** Companies found or made in this run, by lower-case name: leads of one company share it. */
  private readonly known = new Map<string, number>();
  private readonly countries = new Map<string, number | undefined>();

  constructor(
    private readonly http: AutotaskHttp,
    /** The owner Autotask requires of every company. */
    private readonly owner: number,
  ) {}

  /** The lead's company at Autotask: matched by name, else by domain, else made. */
  async companyOf(fields: CrmLeadFields): Promise<Made> {
    const name = fit(fields.company.trim().replace(/\s+/g, ' '), MAX.companyName);
    const key = name.toLowerCase();
    const known = this.known.get(key);
    if (known !== undefined) return { id: known };
    const findByName = async () => {
      const rows = await this.http.query<CompanyRow>('Companies', [eq('companyName', name)]);
      return preferred(rows.filter((row) => row.companyName?.trim().toLowerCase() === key))?.id;
    };
    let id = await findByName();
    for (const domain of id === undefined ? companyDomains(fields) : []) {
      const rows = await this.http.query<CompanyRow>('Companies', [{ op: 'contains', field: 'webAddress', value: domain }]);
      // `contains` finds notacme.com for acme.com too: only the same host counts.
      id = preferred(rows.filter((row) => domainOfWebsite(row.webAddress) === domain))?.id;
      if (id !== undefined) break;
    }
    if (id === undefined) {
      const website = fields.website?.trim();
      const countryID = await this.countryOf(fields.country);
      const made = await this.http.create(
        'Companies',
        {
          companyName: name,
          companyType: COMPANY_TYPE_PROSPECT,
          ownerResourceID: this.owner,
          phone: PHONE_NOT_GIVEN,
          ...(website && website.length <= MAX.webAddress ? { webAddress: website } : {}),
          ...(countryID === undefined ? {} : { countryID }),
        },
        findByName,
      );
      if ('error' in made) return made;
      id = made.id;
    }
    this.known.set(key, id);
    return { id };
  }

  /** Countries by ISO code (GB) or name (United Kingdom), cached for the run; one Autotask does not know is left out. */
  private async countryOf(country: string | null): Promise<number | undefined> {
    const value = country?.trim();
    if (!value) return undefined;
    const key = value.toLowerCase();
    if (!this.countries.has(key)) {
      const [row] = await this.http.query<{ id: number }>(
        'Countries',
        [{ op: 'or', items: [eq('countryCode', value), eq('name', value), eq('displayName', value)] }],
        1,
      );
      this.countries.set(key, row?.id);
    }
    return this.countries.get(key);
  }
}

/** An active company before an inactive one, then the oldest. */
function preferred(rows: CompanyRow[]): CompanyRow | undefined {
  return [...rows].sort((a, b) => Number(b.isActive !== false) - Number(a.isActive !== false) || a.id - b.id)[0];
}
