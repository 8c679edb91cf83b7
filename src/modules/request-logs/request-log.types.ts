import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { RequestLog } from './request-log.entity';

@ObjectType({ simpleResolvers: true })
export class RequestLogList extends ListPage(RequestLog) {}
