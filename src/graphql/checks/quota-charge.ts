import type { RateLimitKind } from '../../http/metrics';
import { Quota, quotaRefusal } from '../../limits/quota';
import type { OperationCheck } from './operation-check';
import { rootFieldCount } from './cost-limit';
import { requestError } from '../request-error';

/**
 * Charges a request once per root field it selects, aliases included (CONTRACT §11): 250 aliased createLead are
 * 250 requests. The gate counted one already (so a request that fails before its document is known still counts);
 * this charges the rest before anything runs, or refuses the request whole with 429 and gives the extra back.
 * X-RateLimit-* then describe the window after the charge; X-RateLimit-Cost says what was charged.
 */
export function quotaCharge(quota: Quota, onRejected?: (kind: RateLimitKind) => void): OperationCheck {
  return async ({ document, operationName, context, setHeader }) => {
    const cost = rootFieldCount(document, operationName);
    setHeader('x-ratelimit-cost', String(cost));
    if (cost === 1) return;
    const decision = await quota.consume(context.auth, cost - 1, { refundRefused: true });
    if (decision.window) {
      setHeader('x-ratelimit-limit', String(decision.window.limit));
      setHeader('x-ratelimit-remaining', String(decision.window.remaining));
      setHeader('x-ratelimit-reset', String(decision.window.resetAt));
    }
    if (!decision.allowed) {
      onRejected?.('plan_quota');
      throw requestError(quotaRefusal(decision, ` This operation selects ${cost} root fields (aliases included) and is charged ${cost} requests.`));
    }
  };
}
