import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Integration } from './integration.entity';

@ObjectType({ simpleResolvers: true })
export class IntegrationList extends ListPage(Integration) {}
