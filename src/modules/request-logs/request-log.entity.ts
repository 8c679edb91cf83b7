import { Entity, Index, ManyToOne, PrimaryKey, Property, Ref } from '@mikro-orm/core';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { newId } from '../../common/ids';
import { TenantEntity } from '../../db/base.entity';
import { Account } from '../accounts/account.entity';

/**
 * One authenticated request of an account, as the access log saw it when the answer was sent.
 * Written in batches by RequestLogWriter, never by the request itself; kept REQUEST_LOG_RETENTION_DAYS.
 * Never headers, query strings or bodies: the route pattern only, so no secret or personal data lands here.
 */
@ObjectType({ simpleResolvers: true, description: "One of the account's recent API requests (kept 7 days), newest first in requestLogs." })
@Entity({ tableName: 'request_logs' })
@Index({ name: 'request_logs_list', properties: ['account', 'livemode', 'createdAt', 'id'] })
@Index({
  name: 'request_logs_errors',
  expression: 'create index "request_logs_errors" on "request_logs" ("account_id", "livemode", "created_at", "id") where "status" >= 400',
})
@Index({ name: 'request_logs_created_at', properties: ['createdAt'] })
export class RequestLog extends TenantEntity<'object'> {
  @Field(() => ID)
  @PrimaryKey({ type: 'text' })
  id: string = newId('rlog');

  /**
   * Without a foreign key, unlike other tenant rows: every answered request adds a row, and the key's
   * check (a `select … for key share` of the account per row) was a fifth of PostgreSQL's time for
   * each batch. Nothing is lost by it: the writer inserts only rows whose account exists, the
   * service never deletes an account, and retention removes every row after seven days.
   */
  @ManyToOne(() => Account, { ref: true, index: false, createForeignKeyConstraint: false })
  override account!: Ref<Account>;

  @Field({ description: 'Always "request_log".' })
  get object(): 'request_log' {
    return 'request_log';
  }

  @Field({ description: 'GET, POST, PATCH, DELETE…' })
  @Property({ type: 'text' })
  method!: string;

  @Field({ description: 'The route pattern, never the path with its ids: /v1/leads/:id, or /graphql (see operation_name).' })
  @Property({ type: 'text' })
  route!: string;

  @Field(() => String, {
    nullable: true,
    description: 'For /graphql: the operation name the client gave (operationName, or the name in the document); null when it gave none.',
  })
  @Property({ type: 'text', nullable: true })
  operationName?: string | null;

  @Field(() => Int, { description: 'The HTTP status answered.' })
  @Property({ type: 'smallint' })
  status!: number;

  @Field({ description: 'The X-Request-Id answered: quote it to support.' })
  @Property({ type: 'text' })
  requestId!: string;

  @Field(() => String, { nullable: true, description: 'The key used, as keys are shown (sk_test_…abcd); null for the web app (session) requests.' })
  @Property({ type: 'text', nullable: true })
  keyPrefix?: string | null;

  @Field(() => Float, { description: 'Time from the request to the last byte of the answer, in milliseconds.' })
  @Property({ type: 'float', columnType: 'double precision' })
  latencyMs!: number;
}
