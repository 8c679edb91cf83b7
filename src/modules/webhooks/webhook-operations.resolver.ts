import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { OperationLimited } from '../../limits/operation-limit';
import { Event } from '../../events/event.entity';
import { CreatedWebhook } from './webhook.entity';
import { WebhookAttemptListInput, WebhookResendInput, WebhookRollSecretInput } from './webhook.inputs';
import { WebhookAttemptList } from './webhook.types';

/** Operating an endpoint: its attempts, a test event, a resend, a new secret (logic in WebhookOperationsService). */
@Resolver()
export class WebhookOperationsResolver {
  @RequiresPermission('webhooks:read')
  @Query(() => WebhookAttemptList, { description: 'Every attempt to send to the subscription, newest first.', complexity: listComplexity })
  webhookAttempts(
    @Arg('id', () => ID, { description: 'The subscription (wh_…).' }) id: string,
    @Arg('filter', () => WebhookAttemptListInput, { nullable: true }) filter: WebhookAttemptListInput | undefined,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.webhookOperations.attempts(id, filter);
  }

  @RequiresPermission('webhooks:write')
  @Mutation(() => Event, {
    complexity: MUTATION_COST,
    description: 'Sends a webhook.test event to this subscription only (signed like any other, listed in its attempts); answers with the event.',
  })
  @OperationLimited('testWebhook', { windowS: 60, max: 20 })
  testWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.webhookOperations.sendTest(id);
  }

  @RequiresPermission('webhooks:write')
  @Mutation(() => Event, {
    complexity: MUTATION_COST,
    description: 'Sends an event to this subscription again, now (a new attempt, the same webhook-id); answers with the event.',
  })
  @OperationLimited('resendWebhookEvent', { windowS: 60, max: 60 })
  resendWebhookEvent(@Arg('id', () => ID) id: string, @Arg('input', () => WebhookResendInput) input: WebhookResendInput, @Ctx() ctx: RequestContext) {
    return ctx.services.webhookOperations.resend(id, input);
  }

  @RequiresPermission('webhooks:write')
  @Mutation(() => CreatedWebhook, {
    complexity: MUTATION_COST,
    description: 'Gives the subscription a new signing secret (shown only in this answer); the old one keeps signing beside it until it expires.',
  })
  rollWebhookSecret(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => WebhookRollSecretInput, { nullable: true }) input: WebhookRollSecretInput | undefined,
    @Ctx() ctx: RequestContext,
  ) {
    return ctx.services.webhookOperations.rollSecret(id, input);
  }
}
