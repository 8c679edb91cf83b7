import { ValidateBy } from 'class-validator';
import { registeredModules } from '../modules/registry';

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

let declared: readonly EventType[] | undefined;
let direct: ReadonlySet<string> | undefined;

/** Every module's event types, in module order (read when first needed: the modules import this file). */
export function eventTypes(): readonly EventType[] {
  return (declared ??= registeredModules().flatMap((module) => [...(module.events ?? []), ...(module.directEvents ?? [])] as EventType[]));
}

/**
 * Types sent to one endpoint only (`webhook.test`): listed and readable like any event, but never
 * fanned out, and no subscription can name them (nor does `*` include them).
 */
const directEventTypes = (): ReadonlySet<string> => (direct ??= new Set(registeredModules().flatMap((module) => module.directEvents ?? [])));

/** The event types a subscription may name. */
export function subscribableEventTypes(): readonly EventType[] {
  return eventTypes().filter((type) => !directEventTypes().has(type));
}

/** Whether a subscription to `subscribed` (names or `*`) receives an event of `type` when it is fanned out. */
export function subscribesTo(subscribed: readonly string[], type: string): boolean {
  if (directEventTypes().has(type)) return false;
  return subscribed.includes(ALL_EVENTS) || subscribed.includes(type);
}

/** The names of a comma list of event types (`deal.won,deal.lost`), trimmed, empty items dropped. */
export const eventTypeList = (value: string): string[] =>
  value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);

/**
 * A validator of event type names (each item of a list with `each`, or each name of a comma list
 * with `commaList`); with `subscribable` (a subscription's events) only the types a subscription
 * may name, and `*`; the message lists them.
 */
/** The names IsEventType takes with these options (the OpenAPI document reads them too). */
export const eventTypeNames = (options: { subscribable?: boolean } = {}): readonly string[] =>
  options.subscribable ? [...subscribableEventTypes(), ALL_EVENTS] : eventTypes();

export function IsEventType(options: { each?: boolean; subscribable?: boolean; commaList?: boolean } = {}): PropertyDecorator {
  const names = () => eventTypeNames(options);
  const known = (name: string) => (names() as readonly string[]).includes(name);
  return ValidateBy(
    {
      name: 'isEventType',
      constraints: [options],
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && (options.commaList ? eventTypeList(value).length > 0 && eventTypeList(value).every(known) : known(value)),
        defaultMessage: () => `$property must ${options.each || options.commaList ? 'name events from' : 'be one of'}: ${names().join(', ')}`,
      },
    },
    { each: options.each },
  );
}
