import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { findPage, Page } from '../../common/pagination';
import { SecurityEvent } from './security-event.entity';
import type { SecurityEventListInput } from './security-event.types';

/** Reads the account's security log (its entries are written by recordSecurityEvent, in the changes' own transactions). */
export class SecurityEventService {
  constructor(private readonly em: EntityManager) {}

  list(input: SecurityEventListInput = {}): Promise<Page<SecurityEvent>> {
    const conditions: Array<FilterQuery<SecurityEvent>> = [];
    if (input.type?.length) conditions.push({ type: { $in: input.type } });
    if (input.memberId) conditions.push({ memberId: input.memberId });
    return findPage(this.em, SecurityEvent, conditions, input);
  }
}
