import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { CustomField } from './field.entity';

@ObjectType({ simpleResolvers: true })
export class FieldList extends ListPage(CustomField) {}
