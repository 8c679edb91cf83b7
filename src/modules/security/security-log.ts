import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantOf } from '../../db/tenant';
import { type Acting, ActorType, EventActor } from '../../events/acting';
import { SecurityEvent, SecurityEventType } from './security-event.entity';

/** What an entry says beyond its type: whom it concerns, from where, and the details. */
export interface SecurityEntry {
  type: SecurityEventType;
  actor: EventActor | Acting['actor'];
  memberId?: string | null;
  address?: string | null;
  userAgent?: string | null;
  details?: Record<string, unknown>;
}

/** The operator's command line, as an actor. */
export const OPERATOR_ACTOR = { type: ActorType.system, id: 'cli' } as const;

/**
 * Adds an entry to `accountId`'s security log, written by the EntityManager's next flush: in the
 * transaction of the change it records, so an entry exists exactly when its change committed.
 * Not tenant-scoped (a failed sign-in has no session yet): the account is named.
 */
export function recordSecurityEvent(em: EntityManager, accountId: string, entry: SecurityEntry): SecurityEvent {
  return em.create(SecurityEvent, {
    account: em.getReference<{ id: string }>('Account', accountId),
    type: entry.type,
    actor: { type: entry.actor.type, id: entry.actor.id },
    memberId: entry.memberId ?? null,
    address: entry.address?.slice(0, 100) ?? null,
    userAgent: entry.userAgent?.slice(0, 500) ?? null,
    details: entry.details ?? {},
  } as never);
}

/** An entry for the tenant-scoped EntityManager's account, by whoever `acting` names (a request's caller, with its address). */
export function recordSecurityEventAs(em: EntityManager, acting: Acting, entry: Omit<SecurityEntry, 'actor' | 'address' | 'userAgent'>): SecurityEvent {
  return recordSecurityEvent(em, tenantOf(em).accountId, {
    ...entry,
    actor: acting.actor,
    address: acting.client?.address,
    userAgent: acting.client?.userAgent,
  });
}
