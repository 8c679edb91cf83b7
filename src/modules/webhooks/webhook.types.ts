import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { WebhookAttempt } from './webhook-delivery.entity';
import { Webhook } from './webhook.entity';

@ObjectType()
export class WebhookList extends ListPage(Webhook) {}

@ObjectType()
export class WebhookAttemptList extends ListPage(WebhookAttempt) {}
