import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { RequiresPermission } from '../../auth/permission';
import { DeletedObject } from '../../common/deleted';
import type { RequestContext } from '../../graphql/context';
import { listComplexity, MUTATION_COST } from '../../graphql/checks/cost-limit';
import { CustomField } from './field.entity';
import { FieldCreateInput, FieldListInput, FieldUpdateInput } from './field.inputs';
import { FieldList } from './field.types';

@Resolver(() => CustomField)
export class FieldResolver {
  @RequiresPermission('fields:read')
  @Query(() => FieldList, { description: "The mode's custom fields of leads and deals, newest first.", complexity: listComplexity })
  fields(@Arg('filter', () => FieldListInput, { nullable: true }) filter: FieldListInput | undefined, @Ctx() ctx: RequestContext) {
    return ctx.services.fields.list(filter);
  }

  @RequiresPermission('fields:read')
  @Query(() => CustomField)
  field(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return ctx.services.fields.get(id);
  }

  @RequiresPermission('fields:write')
  @Mutation(() => CustomField, {
    complexity: MUTATION_COST,
    description: 'Defines a custom field on leads or deals. 409 resource_conflict for a key the object has, or past 100 fields.',
  })
  createField(@Arg('input', () => FieldCreateInput) input: FieldCreateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.fields.create(input);
  }

  @RequiresPermission('fields:write')
  @Mutation(() => CustomField, {
    complexity: MUTATION_COST,
    description: "Changes a field's label, description, required, or options (renamed, added, archived).",
  })
  updateField(@Arg('id', () => ID) id: string, @Arg('input', () => FieldUpdateInput) input: FieldUpdateInput, @Ctx() ctx: RequestContext) {
    return ctx.services.fields.update(id, input);
  }

  @RequiresPermission('fields:write')
  @Mutation(() => DeletedObject, { complexity: MUTATION_COST, description: 'Deletes the field and every value of it on leads or deals.' })
  async deleteField(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext) {
    return new DeletedObject(await ctx.services.fields.delete(id), 'field');
  }
}
