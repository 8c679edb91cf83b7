import { ValidateBy } from 'class-validator';
import { ApiError } from '../common/api-error';

/**
 * Every event type the service emits (CONTRACT §10), by name. Empty here: each module adds the
 * types it emits (TypeScript declaration merging) beside its `events` list in its `*.module.ts`,
 * so a recorder called with a name no module declares does not compile.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the modules' declaration merging
export interface EventTypes {}

export type EventType = keyof EventTypes & string;

export const ALL_EVENTS = '*';

export const API_VERSION = 'v1';

/** What a module declares of the events it emits. */
export interface EmittedEvents {
  events?: readonly string[];
  /** Types sent to one endpoint only (`webhook.test`): listed and readable like any event, but never fanned out, and no subscription can name them (nor does `*` include them). */
  directEvents?: readonly string[];
}

/** The names of a comma list of event types (`deal.won,deal.lost`), trimmed, empty items dropped. */
export const eventTypeList = (value: string): string[] =>
  value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);

/**
 * The event types of the service, from its modules' declarations (the composition root builds it
 * from src/app/modules.ts and hands it to services, the OpenAPI document and the web pages).
 */
export class EventCatalog {
  /** Every type, in module order. */
  readonly types: readonly EventType[];
  /** The types a subscription may name. */
  readonly subscribable: readonly EventType[];
  private readonly direct: ReadonlySet<string>;

  constructor(modules: readonly EmittedEvents[]) {
    this.types = modules.flatMap((module) => [...(module.events ?? []), ...(module.directEvents ?? [])] as EventType[]);
    this.direct = new Set(modules.flatMap((module) => module.directEvents ?? []));
    this.subscribable = this.types.filter((type) => !this.direct.has(type));
  }

  /** Whether a subscription to `subscribed` (names or `*`) receives an event of `type` when it is fanned out. */
  subscribesTo(subscribed: readonly string[], type: string): boolean {
    if (this.direct.has(type)) return false;
    return subscribed.includes(ALL_EVENTS) || subscribed.includes(type);
  }

  /** The names a parameter takes: with `subscribable` (a subscription's events) only those a subscription may name, and `*`. */
  names(options: { subscribable?: boolean } = {}): readonly string[] {
    return options.subscribable ? [...this.subscribable, ALL_EVENTS] : this.types;
  }

  /**
   * Refuses names the catalog does not hold (400 parameter_invalid naming the parameter), listing
   * the names it takes. A list (a subscription's `events`) or a comma list (a filter's `type`).
   */
  check(param: string, given: readonly string[], options: { subscribable?: boolean } = {}): void {
    const names = this.names(options);
    if (given.every((name) => names.includes(name))) return;
    throw new ApiError('parameter_invalid', `${param} must name events from: ${names.join(', ')}`, { param });
  }
}

/**
 * Event type names (each item of a list with `each`, or a comma list with `commaList`): text here;
 * which names exist is the catalog's to say (EventCatalog.check, in the services), and the OpenAPI
 * document lists them (src/rest/openapi/constraints.ts reads these options).
 */
export function IsEventType(options: { each?: boolean; subscribable?: boolean; commaList?: boolean } = {}): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isEventType',
      constraints: [options],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && (!options.commaList || eventTypeList(value).length > 0),
        defaultMessage: () => `$property must ${options.each || options.commaList ? 'name events' : 'be an event name'}, such as deal.won`,
      },
    },
    { each: options.each },
  );
}
