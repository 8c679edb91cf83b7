import { Field, ID, ObjectType } from 'type-graphql';

/** What DELETE answers (CONTRACT §3): `{"id": "...", "object": "lead", "deleted": true}`. */
@ObjectType({ simpleResolvers: true })
export class DeletedObject {
  @Field(() => ID)
  id!: string;

  @Field()
  object!: string;

  @Field()
  deleted!: boolean;

  constructor(id: string, object: string) {
    this.id = id;
    this.object = object;
    this.deleted = true;
  }
}
