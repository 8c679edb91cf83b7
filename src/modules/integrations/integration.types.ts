import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Integration } from './integration.entity';

@ObjectType()
export class IntegrationList extends ListPage(Integration) {}
