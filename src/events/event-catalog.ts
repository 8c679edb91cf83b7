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

/** Every module's event types, in module order (read when first needed: the modules import this file). */
export function eventTypes(): readonly EventType[] {
  return (declared ??= registeredModules().flatMap((module) => (module.events ?? []) as EventType[]));
}

/** Whether a subscription to `subscribed` (names or `*`) receives an event of `type`. */
export function subscribesTo(subscribed: readonly string[], type: string): boolean {
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
 * with `commaList`), `*` too when `orAll`; the message lists them.
 */
export function IsEventType(options: { each?: boolean; orAll?: boolean; commaList?: boolean } = {}): PropertyDecorator {
  const names = () => (options.orAll ? [...eventTypes(), ALL_EVENTS] : eventTypes());
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
