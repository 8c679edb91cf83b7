import { CrmSetupIncomplete } from './crm-client';
import { CONNECTWISE, ConnectwiseHttp, quoted } from './connectwise-http';

interface Named {
  id: number;
  name: string;
}
interface Status extends Named {
  wonFlag?: boolean;
  lostFlag?: boolean;
  closedFlag?: boolean;
  inactiveFlag?: boolean;
  defaultFlag?: boolean;
}

/** Where an opportunity goes for a stage-map value: a sales stage (the status stays open), or a closing status. */
export type StagePlacement = { stageId: number | null; statusId: number; closing: boolean };

const ALL = { pageSize: '1000', orderBy: 'id asc' };

/**
 * The site's setup tables one client reads, each once (a sync run makes a new client, so a change
 * an administrator makes is seen by the next run): sales stages and opportunity statuses (read by
 * open()), and, when first needed, members, countries, the e-mail communication type, the project
 * board, the agreement type and catalog items.
 */
export class ConnectwiseSetup {
  private stages: Named[] = [];
  private statuses: Status[] = [];
  private readonly members = new Map<string, number | null>();
  private readonly countries = new Map<string, number | null>();
  private readonly catalog = new Map<string, number | null>();
  private emailType?: Promise<number>;
  private projectBoard?: Promise<number | null>;
  private agreementType?: Promise<number | null>;

  constructor(private readonly http: ConnectwiseHttp) {}

  async load(): Promise<void> {
    this.stages = await this.http.list<Named>('/sales/stages', ALL);
    this.statuses = await this.http.list<Status>('/sales/opportunities/statuses', ALL);
    if (!this.openStatus()) {
      throw new CrmSetupIncomplete(
        `${CONNECTWISE} has no open opportunity status to give a new opportunity; add one (Setup Tables › Opportunity Status) and sync again`,
      );
    }
  }

  /**
   * A stage-map value as the API wants it: the name (any case) of an opportunity status that wins,
   * loses or otherwise closes an opportunity (Won, Lost: the PSA's own way of closing it, its
   * stage left where it was), else of a sales stage (with the open default status); null when the
   * site has neither.
   */
  placement(value: string): StagePlacement | null {
    const key = value.trim().toLowerCase();
    const closing = this.statuses.find((status) => status.name.toLowerCase() === key && !status.inactiveFlag && status.closedFlag);
    if (closing) return { stageId: null, statusId: closing.id, closing: true };
    const stage = this.stages.find((candidate) => candidate.name.toLowerCase() === key);
    return stage ? { stageId: stage.id, statusId: this.openStatus()!.id, closing: false } : null;
  }

  /** The status an open opportunity has: the default open one, else the first. */
  private openStatus(): Status | undefined {
    const open = this.statuses.filter((status) => !status.closedFlag && !status.inactiveFlag);
    return open.find((status) => status.defaultFlag) ?? open[0];
  }

  /** The status that closes an opportunity as lost (for a deal deleted here whose opportunity the site keeps). */
  lostStatusId(): number | null {
    return this.statuses.find((status) => status.lostFlag && !status.inactiveFlag)?.id ?? null;
  }

  /** An active member by identifier or primary e-mail (a deal's owner, or the integration's sales rep). */
  async member(who: string): Promise<number | null> {
    const key = who.trim().toLowerCase();
    if (!this.members.has(key)) {
      const found = await this.http.list<{ id: number }>('/system/members', {
        conditions: `(identifier=${quoted(key)} or primaryEmail=${quoted(key)}) and inactiveFlag=false`,
        ...ALL,
        pageSize: '1',
      });
      this.members.set(key, found[0]?.id ?? null);
    }
    return this.members.get(key)!;
  }

  /** A lead's country (an ISO code or a name) as the site knows it, else the site's default country. */
  async country(value: string | null): Promise<number | null> {
    const key = (value ?? '').trim().toLowerCase();
    if (!this.countries.has(key)) {
      const conditions = key === '' ? 'defaultFlag=true' : key.length === 2 ? `countryCode=${quoted(key)}` : `name=${quoted(key)}`;
      const found = await this.http.list<{ id: number }>('/company/countries', { conditions, ...ALL, pageSize: '1' });
      this.countries.set(key, found[0]?.id ?? (key === '' ? null : await this.country(null)));
    }
    return this.countries.get(key)!;
  }

  /** The communication type of e-mail addresses (the default one when there are several). */
  emailTypeId(): Promise<number> {
    this.emailType ??= this.http
      .list<{ id: number; defaultFlag?: boolean }>('/company/communicationTypes', { conditions: 'emailFlag=true', ...ALL })
      .then((types) => {
        const type = types.find((candidate) => candidate.defaultFlag) ?? types[0];
        if (!type)
          throw new CrmSetupIncomplete(`${CONNECTWISE} has no e-mail communication type for a contact's address; add one (Setup Tables › Communication Types)`);
        return type.id;
      });
    return this.emailType;
  }

  /** The project board new projects go on: the first active board flagged as a project board. */
  projectBoardId(): Promise<number | null> {
    this.projectBoard ??= this.http
      .list<{ id: number }>('/service/boards', { conditions: 'projectFlag=true and inactiveFlag=false', ...ALL, pageSize: '1' })
      .then((boards) => boards[0]?.id ?? null);
    return this.projectBoard;
  }

  /** The agreement type new agreements take: the active default, else the first active one. */
  agreementTypeId(): Promise<number | null> {
    this.agreementType ??= this.http
      .list<{ id: number; defaultFlag?: boolean }>('/finance/agreements/types', { conditions: 'inactiveFlag=false', ...ALL })
      .then((types) => (types.find((type) => type.defaultFlag) ?? types[0])?.id ?? null);
    return this.agreementType;
  }

  /** The active catalog item whose identifier or description is a proposal line's description, if any. */
  async catalogItem(description: string): Promise<number | null> {
    const key = description.trim().toLowerCase();
    if (!this.catalog.has(key)) {
      const found = await this.http.list<{ id: number }>('/procurement/catalog', {
        conditions: `(identifier=${quoted(key)} or description=${quoted(key)}) and inactiveFlag=false`,
        ...ALL,
        pageSize: '1',
      });
      this.catalog.set(key, found[0]?.id ?? null);
    }
    return this.catalog.get(key)!;
  }
}
