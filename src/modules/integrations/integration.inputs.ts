import { IsObject, IsOptional, Length, Matches, ValidateNested } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType } from 'type-graphql';
import { RefineSchema } from '../../common/json-schema';
import { PageInput } from '../../common/page.input';
import { connectSchema } from './integration-credentials';
import { IntegrationProvider, IntegrationStatus, IntegrationType } from './integration.entity';
import { NOT_BLANK } from '../../common/validation';
import { IntegrationSettings } from './sync/stage-map';

@InputType({ description: 'Connects a provider. credentials are checked per provider, stored encrypted and never returned.' })
@RefineSchema(connectSchema)
export class IntegrationConnectInput {
  @Field(() => IntegrationType)
  type!: IntegrationType;

  @Field(() => IntegrationProvider, { description: "Must be one of the type's providers." })
  provider!: IntegrationProvider;

  @Field(() => String, { nullable: true, description: 'A label for people, e.g. the tenant or instance.' })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  name?: string | null;

  @Field(() => GraphQLJSONObject, {
    description:
      "The provider's fields, in snake_case. salesforce: instance_url, client_id, client_secret, refresh_token; " +
      'hubspot: access_token; connectwise: site, company_id, public_key, private_key, client_id; ' +
      'autotask: username, secret, integration_code; halopsa: instance_url, client_id, client_secret; ' +
      'microsoft365: tenant_id, client_id, client_secret, mailbox (the user principal name the app acts for).',
  })
  @IsObject({ message: '$property must be a JSON object' })
  credentials!: Record<string, unknown>;

  @Field(() => IntegrationSettings, { nullable: true, description: "How it syncs; CRMs default to the provider's standard stages." })
  @IsOptional()
  @ValidateNested()
  settings?: IntegrationSettings | null;
}

@InputType({ description: 'Changes an integration: its name and how it syncs. Fields left out keep their value.' })
export class IntegrationUpdateInput {
  @Field(() => String, { nullable: true, description: 'A label for people; null clears it.' })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  @Matches(NOT_BLANK, { message: '$property must not be blank' })
  name?: string | null;

  @Field(() => IntegrationSettings, { nullable: true, description: 'Replaces the settings it names; stage_map must map every stage.' })
  @IsOptional()
  @ValidateNested()
  settings?: IntegrationSettings;
}

@InputType({ description: "Pagination for listing an integration's sync runs, newest first." })
export class SyncRunListInput extends PageInput {}

@InputType({ description: 'Pagination and filters for listing integrations, newest first (CONTRACT §4).' })
export class IntegrationListInput extends PageInput {
  @Field(() => IntegrationStatus, { nullable: true })
  @IsOptional()
  status?: IntegrationStatus;

  @Field(() => IntegrationType, { nullable: true })
  @IsOptional()
  type?: IntegrationType;

  @Field(() => IntegrationProvider, { nullable: true })
  @IsOptional()
  provider?: IntegrationProvider;
}
