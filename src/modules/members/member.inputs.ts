import { IsEmail, IsOptional, Length, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { PageInput } from '../../common/page.input';
import { NotNull } from '../../common/validation';
import type { Role } from '../accounts/key-permissions';
import { MemberRole, MemberStatus } from './member.entity';

@InputType({ description: 'An invitation: the person gets an e-mail with a single-use link that works for 7 days.' })
export class MemberInviteInput {
  @Field({ description: 'Their sign-in address.' })
  @MaxLength(254, { message: '$property must be at most 254 characters' })
  @IsEmail({}, { message: '$property must be an email address' })
  email!: string;

  @Field(() => String, { nullable: true, description: "Their name; by default the address's local part, until they choose one." })
  @IsOptional()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  name?: string;

  @Field(() => MemberRole, { description: 'Only an owner may invite an owner.' })
  role!: Role;
}

@InputType({ description: "A partial update: only the fields sent change. Only an owner may change an owner's role or make an owner." })
export class MemberUpdateInput {
  @Field(() => MemberRole, { nullable: true })
  @NotNull()
  role?: Role;

  @Field(() => String, { nullable: true })
  @NotNull()
  @Length(1, 200, { message: '$property must be 1 to 200 characters' })
  name?: string;
}

@InputType({ description: 'Pagination and filters for listing members, newest first.' })
export class MemberListInput extends PageInput {
  @Field(() => MemberRole, { nullable: true })
  @IsOptional()
  role?: Role;

  @Field(() => MemberStatus, { nullable: true })
  @IsOptional()
  status?: MemberStatus;
}

@InputType({ description: 'Deactivating a member who owns leads or deals requires another active member to hand them to.' })
export class MemberDeactivateInput {
  @Field(() => ID, { nullable: true, description: 'The member (usr_…) who becomes the owner of their leads and deals, in both modes.' })
  @IsOptional()
  @MaxLength(64, { message: '$property is not a member id' })
  transferTo?: string;
}
