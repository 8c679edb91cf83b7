import type { OutboundDeal } from './crm-client';
import { CONNECTWISE, ConnectwiseHttp, quoted, replace } from './connectwise-http';
import type { StagePlacement } from './connectwise-setup';

/**
 * The crash-safety marker: our deal id in the opportunity's `source` (a 50-character string the
 * Manage API filters on, `conditions=source="…"`; `customerPO`, its other short text field, holds
 * 25, fewer than a deal id). A push repeated after a crash that lost our link finds the
 * opportunity the first one made instead of making a second.
 */
export const sourceOf = (dealId: string) => {
  const marked = `Sales Pipeline ${dealId}`;
  return marked.length <= 50 ? marked : dealId;
};

/** Our forecast item on the opportunity, which carries the deal's amount (an opportunity has no amount of its own; its revenue is its forecast). */
const FORECAST_DESCRIPTION = 'Sales Pipeline deal amount';
/** The forecast type of the deal's amount: an MSP's deal is a sale of services. */
const FORECAST_TYPE = 'Service';
const NAME_MAX = 100;

interface ForecastItem {
  id: number;
  forecastDescription?: string | null;
  revenue?: number;
  status?: { id: number };
}

export interface OpportunityParts {
  companyId: number;
  contactId: number;
  salesRepId: number;
  placement: StagePlacement;
}

/** An opportunity's id, or ConnectWise's reason for refusing to write it. */
export type Written = { id: number } | { error: string };

/**
 * A deal is an opportunity of its lead's company and contact: name, expected close date, stage
 * (a sales stage while open; Won or Lost as the opportunity's status, ConnectWise's way of
 * closing it) and amount (our forecast item's revenue, in the status the opportunity has). The
 * sales rep, company and contact are set when it is made and left to the MSP after.
 */
export class ConnectwiseOpportunities {
  constructor(private readonly http: ConnectwiseHttp) {}

  async write(deal: OutboundDeal, parts: OpportunityParts): Promise<Written> {
    // Linked: written by its id. Not linked, or deleted at the site since: by its marker, else made.
    let written = deal.external.opportunity ? await this.update(Number(deal.external.opportunity), deal, parts.placement) : null;
    if (written === null) {
      const found = await this.find(deal.id);
      written = found === null ? null : await this.update(found, deal, parts.placement);
    }
    written ??= await this.create(deal, parts);
    if ('error' in written) return written;
    const forecast = await this.forecast(written.id, deal.fields.amount, parts.placement.statusId);
    return forecast === null ? written : { error: `the opportunity's amount (forecast): ${forecast}` };
  }

  /** The opportunity a deal made, by its marker. */
  async find(dealId: string): Promise<number | null> {
    const [found] = await this.http.list<{ id: number }>('/sales/opportunities', {
      conditions: `source=${quoted(sourceOf(dealId))}`,
      orderBy: 'id asc',
      pageSize: '1',
    });
    return found?.id ?? null;
  }

  private async create(deal: OutboundDeal, parts: OpportunityParts): Promise<Written> {
    const answer = await this.http.request<{ id: number }>({
      method: 'POST',
      path: '/sales/opportunities',
      body: {
        name: deal.fields.name.slice(0, NAME_MAX),
        company: { id: parts.companyId },
        contact: { id: parts.contactId },
        primarySalesRep: { id: parts.salesRepId },
        ...(parts.placement.stageId === null ? {} : { stage: { id: parts.placement.stageId } }),
        status: { id: parts.placement.statusId },
        ...(deal.fields.closeDate ? { expectedCloseDate: `${deal.fields.closeDate}T00:00:00Z` } : {}),
        source: sourceOf(deal.id),
      },
    });
    return answer.status === 201 || answer.status === 200 ? { id: answer.body!.id } : { error: answer.reason };
  }

  /** The opportunity brought up to date; null when it is gone (404). */
  private async update(id: number, deal: OutboundDeal, placement: StagePlacement): Promise<Written | null> {
    const operations = [
      replace('name', deal.fields.name.slice(0, NAME_MAX)),
      replace('status', { id: placement.statusId }),
      // A closing status keeps the stage the opportunity reached.
      ...(placement.stageId === null ? [] : [replace('stage', { id: placement.stageId })]),
      ...(deal.fields.closeDate ? [replace('expectedCloseDate', `${deal.fields.closeDate}T00:00:00Z`)] : []),
    ];
    const answer = await this.http.request({ method: 'PATCH', path: `/sales/opportunities/${id}`, body: operations });
    if (answer.status === 404) return null;
    return answer.status === 200 ? { id } : { error: answer.reason };
  }

  /** Our forecast item made or brought up to date; null when done, else ConnectWise's reason. */
  private async forecast(opportunityId: number, amount: number, statusId: number): Promise<string | null> {
    const path = `/sales/opportunities/${opportunityId}/forecast`;
    const answer = await this.http.request<{ forecastItems?: ForecastItem[] } | Array<{ forecastItems?: ForecastItem[] }>>({ method: 'GET', path });
    if (answer.status !== 200) return answer.reason || `${CONNECTWISE} answered ${answer.status}`;
    // ConnectWise's OpenAPI document types this answer as a list of Forecast; one Forecast is read as well.
    const forecasts = Array.isArray(answer.body) ? answer.body : [answer.body ?? {}];
    const ours = forecasts.flatMap((forecast) => forecast.forecastItems ?? []).find((item) => item.forecastDescription === FORECAST_DESCRIPTION);
    if (ours && ours.revenue === amount && ours.status?.id === statusId) return null;
    const written = ours
      ? await this.http.request({ method: 'PATCH', path: `${path}/${ours.id}`, body: [replace('revenue', amount), replace('status', { id: statusId })] })
      : await this.http.request({
          method: 'POST',
          path,
          body: {
            forecastType: FORECAST_TYPE,
            forecastDescription: FORECAST_DESCRIPTION,
            revenue: amount,
            cost: 0,
            status: { id: statusId },
            includeFlag: true,
          },
        });
    return written.status >= 200 && written.status < 300 ? null : written.reason;
  }
}
