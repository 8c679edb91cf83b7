import type { ApolloServerPlugin } from '@apollo/server';
import type { RateLimitKind } from '../../http/metrics';
import { Quota, quotaRefusal } from '../../limits/quota';
import type { RequestContext } from '../context';
import { rootFieldCount } from './cost-limit';
import { requestError } from './text-guard';

/**
 * Charges a /graphql request once per root field it selects, aliases included (CONTRACT §11): 250
 * aliased createLead are 250 requests' work, not one. The gate has already counted the request
 * once (so a request that fails before its document is known still counts); this charges the
 * rest before anything runs. A request the allowance cannot cover is refused whole with 429 and
 * its extra charge given back. The X-RateLimit headers then describe the window after the charge,
 * and X-RateLimit-Cost says what the request was charged.
 */
export function quotaChargePlugin(quota: Quota, onRejected?: (kind: RateLimitKind) => void): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operationName, contextValue, response }) {
          const cost = rootFieldCount(document, operationName);
          response.http.headers.set('x-ratelimit-cost', String(cost));
          if (cost === 1) return;
          const decision = await quota.consume(contextValue.auth, cost - 1, { refundRefused: true });
          if (decision.window) {
            response.http.headers.set('x-ratelimit-limit', String(decision.window.limit));
            response.http.headers.set('x-ratelimit-remaining', String(decision.window.remaining));
            response.http.headers.set('x-ratelimit-reset', String(decision.window.resetAt));
          }
          if (!decision.allowed) {
            onRejected?.('plan_quota');
            throw requestError(quotaRefusal(decision, ` This operation selects ${cost} root fields (aliases included) and is charged ${cost} requests.`));
          }
        },
      };
    },
  };
}
