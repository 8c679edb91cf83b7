import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Member } from './member.entity';

@ObjectType({ simpleResolvers: true })
export class MemberList extends ListPage(Member) {}
