import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { ApiError } from '../../common/api-error';
import { isId } from '../../common/ids';
import { Member, MemberStatus } from './member.entity';

/**
 * Leads and deals are owned by a member (their person's id, `usr_…`) or by nobody. These are the
 * rules both services share: who may own a record, and the `owner_id` filter of their lists.
 */

/** An owner filter as clients write it: member ids and `none` (no owner), comma-separated. */
export const OWNER_FILTER = /^(none|usr_[0-9A-HJKMNP-TV-Z]{26})(,(none|usr_[0-9A-HJKMNP-TV-Z]{26}))*$/;
export const OWNER_FILTER_DESCRIPTION = 'Owners: member ids (usr_…) and none (no owner), comma-separated.';

/** 400 unless `ownerId` is null or an active member of the EntityManager's account. */
export async function checkOwner(em: EntityManager, ownerId: string | null | undefined, param = 'ownerId'): Promise<void> {
  if (ownerId === null || ownerId === undefined) return;
  const member = isId('usr', ownerId) ? await em.findOne(Member, { user: ownerId, status: MemberStatus.active }) : null;
  if (!member) throw new ApiError('parameter_invalid', `The owner must be an active member of this account: '${ownerId}' is not one.`, { param });
}

/** The condition of an `owner_id` filter (already shaped by OWNER_FILTER). */
export function ownerCondition<T extends { ownerId?: string | null }>(filter: string): FilterQuery<T> {
  const named = filter.split(',');
  const ids = [...new Set(named.filter((value) => value !== 'none'))];
  const conditions: Array<FilterQuery<T>> = [];
  if (ids.length) conditions.push({ ownerId: { $in: ids } } as FilterQuery<T>);
  if (named.includes('none')) conditions.push({ ownerId: null } as FilterQuery<T>);
  return (conditions.length === 1 ? conditions[0] : { $or: conditions }) as FilterQuery<T>;
}
