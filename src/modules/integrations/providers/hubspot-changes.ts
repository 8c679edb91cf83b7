import { CHANGES_SETTLE_MS, CrmUnavailable } from './crm-client';
import type { HubSpotHttp } from './hubspot-http';
import { ID_PROPERTY, MODIFIED_PROPERTY } from './hubspot-mapping';

const SEARCH_PAGE = 100;

/** A record as HubSpot answers it (SimplePublicObject): property values are strings. */
export interface HubSpotObject {
  id: string;
  properties?: Record<string, string | null>;
  updatedAt?: string;
}

export interface ChangedObjects {
  results: HubSpotObject[];
  cursor: string | null;
  more: boolean;
}

type Changing = 'contacts' | 'deals';

/**
 * One page of records modified at or after the cursor's time, oldest first (POST …/search on the
 * last-modified property, 100 a page; searches are paced by their own limit). The body is
 * PublicObjectSearchRequest as HubSpot's OpenAPI document has it: every field it requires (`after`
 * included) and `sorts` as property names, the form its own Node client documents (docs/DESIGN.md,
 * "Reaching the CRMs"). Each new time starts
 * a new query, which also keeps clear of the 10,000 results HubSpot pages through per query.
 * HubSpot sorts by one property only, so when a full page holds nothing but the cursor's own time
 * (a bulk import), that time is paged through by record id instead (`<ms>#<last id>`: modified EQ
 * the time and hs_object_id GT the id, sorted by id), which no record edited meanwhile can shift
 * the way an `after` offset would; then the cursor moves past that time.
 */
export async function searchChanges(
  http: HubSpotHttp,
  objectType: Changing,
  properties: string[],
  cursor: string | null,
  settleMs = CHANGES_SETTLE_MS,
): Promise<ChangedObjects> {
  const { since, afterId } = parseCursor(cursor);
  const modified = MODIFIED_PROPERTY[objectType];
  const tied = since !== null && afterId !== undefined;
  const filters =
    since === null
      ? []
      : tied
        ? [
            { propertyName: modified, operator: 'EQ', value: String(since) },
            { propertyName: 'hs_object_id', operator: 'GT', value: afterId },
          ]
        : [{ propertyName: modified, operator: 'GTE', value: String(since) }];
  const answer = await http.post<{ results?: HubSpotObject[] }>(
    `/crm/v3/objects/${objectType}/search`,
    {
      filterGroups: filters.length === 0 ? [] : [{ filters }],
      // PublicObjectSearchRequest types a sort as a string: a property name, ascending ("-name" descends).
      sorts: [tied ? 'hs_object_id' : modified],
      properties,
      limit: SEARCH_PAGE,
      // Required by the document; each query starts at its first result (the cursor narrows the filter instead).
      after: '0',
    },
    'search',
  );
  if (answer.status !== 200) throw new CrmUnavailable(`HubSpot refused the ${objectType} search: ${answer.reason}`);
  const results = answer.body?.results ?? [];
  const full = results.length >= SEARCH_PAGE;
  if (tied) {
    // Past the tied time once its records are read; what came after it is asked for next.
    return full ? { results, cursor: `${since}#${results[results.length - 1].id}`, more: true } : { results, cursor: String(since + 1), more: true };
  }
  if (results.length === 0) return { results, cursor, more: false };
  const last = modifiedOf(results[results.length - 1], objectType);
  if (full && since !== null && last === since) return searchChanges(http, objectType, properties, `${since}#0`, settleMs);
  // A full page goes on from its last record; the last page's cursor stays settleMs behind now.
  return { results, cursor: String(full || settleMs === 0 ? last : Math.min(last, Date.now() - settleMs)), more: full };
}

/** What every changed record carries: our id (null on records made in HubSpot) and its modified time. */
export function remoteOf(object: HubSpotObject, objectType: Changing): { ourId: string | null; modifiedAt: Date } {
  const ourId = object.properties?.[ID_PROPERTY];
  return { ourId: ourId ? ourId : null, modifiedAt: new Date(modifiedOf(object, objectType)) };
}

/** The record's last-modified property (ISO text, or epoch ms), else its updatedAt. */
function modifiedOf(object: HubSpotObject, objectType: Changing): number {
  const value = object.properties?.[MODIFIED_PROPERTY[objectType]] ?? object.updatedAt ?? '';
  const time = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(time)) throw new CrmUnavailable(`HubSpot answered a ${objectType} record without a modified time`);
  return time;
}

/** `<epoch ms>` or `<epoch ms>#<hs_object_id>`. */
function parseCursor(cursor: string | null): { since: number | null; afterId?: string } {
  if (cursor === null) return { since: null };
  const match = /^(\d+)(?:#(\d+))?$/.exec(cursor);
  if (!match) throw new Error(`not a HubSpot changes cursor: ${cursor.slice(0, 40)}`);
  return { since: Number(match[1]), afterId: match[2] };
}
