import { Arg, Ctx, Extensions, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import { DeletedObject } from '../../common/deleted';
import { PageInput } from '../../common/page.input';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { CreatedWebhook, Webhook } from './webhook.entity';
import { WebhookCreateInput, WebhookListInput, WebhookUpdateInput } from './webhook.inputs';
import { WebhookAttemptList, WebhookList } from './webhook.types';

@Resolver(() => Webhook)
export class WebhookResolver {
  @RequiresPermission('webhooks:read')
  @Query(() => WebhookList, { description: "Webhook subscriptions of the key's account and mode, newest first.", complexity: listComplexity })
  webhooks(@Arg('filter', () => WebhookListInput, { nullable: true }) filter: WebhookListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.webhooks.list(filter);
  }

  @RequiresPermission('webhooks:read')
  @Query(() => Webhook)
  webhook(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.webhooks.get(id);
  }

  @RequiresPermission('webhooks:write')
  @Mutation(() => CreatedWebhook, { complexity: MUTATION_COST, description: 'Subscribes a URL to events; the response shows the signing secret, once.' })
  createWebhook(@Arg('input', () => WebhookCreateInput) input: WebhookCreateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.webhooks.create(input);
  }

  @RequiresPermission('webhooks:write')
  @Mutation(() => Webhook, { complexity: MUTATION_COST, description: 'Changes the URL, events, description or status; only the fields sent change.' })
  updateWebhook(@Arg('id', () => ID) id: string, @Arg('input', () => WebhookUpdateInput) input: WebhookUpdateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.webhooks.update(id, input);
  }

  @RequiresPermission('webhooks:write')
  @Mutation(() => DeletedObject, { complexity: MUTATION_COST, description: 'Deletes the subscription; nothing more is sent to it.' })
  async deleteWebhook(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return new DeletedObject(await ctx.services.webhooks.delete(id), 'webhook');
  }

  @Extensions({ rest: false })
  @FieldResolver(() => WebhookAttemptList, {
    description: 'Every attempt to send to this subscription, newest first (GraphQL only).',
    complexity: listComplexity,
  })
  attempts(@Root() webhook: Webhook, @Arg('filter', () => PageInput, { nullable: true }) filter: PageInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.webhooks.attempts(webhook, filter);
  }
}
