import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Integration } from './integration.entity';
import { SyncRun } from './sync/sync.entities';

@ObjectType({ simpleResolvers: true })
export class IntegrationList extends ListPage(Integration) {}

@ObjectType({ simpleResolvers: true })
export class SyncRunList extends ListPage(SyncRun) {}
