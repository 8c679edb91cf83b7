import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import { DeletedObject } from '../../common/deleted';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { OperationLimited } from '../../limits/operation-limit';
import { Integration } from './integration.entity';
import { IntegrationConnectInput, IntegrationListInput } from './integration.inputs';
import { IntegrationList } from './integration.types';

@Resolver(() => Integration)
export class IntegrationResolver {
  @RequiresPermission('integrations:read')
  @Query(() => IntegrationList, {
    description: "Integrations of the key's account and mode, connected and disconnected, newest first.",
    complexity: listComplexity,
  })
  integrations(@Arg('filter', () => IntegrationListInput, { nullable: true }) filter: IntegrationListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.integrations.list(filter);
  }

  @RequiresPermission('integrations:read')
  @Query(() => Integration)
  integration(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.integrations.get(id);
  }

  @RequiresPermission('integrations:write')
  @Mutation(() => Integration, {
    complexity: MUTATION_COST,
    description:
      "Connects a provider. A CRM's or PSA's credentials are verified with the provider first: refused is 422 integration_auth_failed, no usable answer 502 integration_unreachable, and nothing is stored. A second integration of the same provider in this mode that is not disconnected is 409.",
  })
  @OperationLimited('connectIntegration', { windowS: 60, max: 10 })
  connectIntegration(@Arg('input', () => IntegrationConnectInput) input: IntegrationConnectInput, @Ctx() ctx: RequestContext) {
    return ctx.services.integrations.connect(input);
  }

  @RequiresPermission('integrations:write')
  @Mutation(() => Integration, {
    complexity: MUTATION_COST,
    description: 'Disconnects and destroys the stored credentials; the integration stays, with status disconnected. Idempotent.',
  })
  disconnectIntegration(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.integrations.disconnect(id);
  }

  @RequiresPermission('integrations:write')
  @Mutation(() => DeletedObject, {
    complexity: MUTATION_COST,
    description:
      'Disconnects the integration and destroys its credentials, answering in the DELETE shape of CONTRACT §3 (what DELETE /v1/integrations/{id} runs).',
  })
  async deleteIntegration(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    const integration = await ctx.services.integrations.disconnect(id);
    return new DeletedObject(integration.id, 'integration');
  }
}
