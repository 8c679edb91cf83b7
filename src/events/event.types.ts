import { ObjectType } from 'type-graphql';
import { ListPage } from '../common/pagination';
import { Event } from './event.entity';

@ObjectType({ simpleResolvers: true })
export class EventList extends ListPage(Event) {}
