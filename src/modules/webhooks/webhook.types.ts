import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { WebhookAttempt } from './webhook-delivery.entity';
import { Webhook } from './webhook.entity';

@ObjectType({ simpleResolvers: true })
export class WebhookList extends ListPage(Webhook) {}

@ObjectType({ simpleResolvers: true })
export class WebhookAttemptList extends ListPage(WebhookAttempt) {}
