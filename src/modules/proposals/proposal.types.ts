import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Proposal } from './proposal.entity';

@ObjectType({ simpleResolvers: true })
export class ProposalList extends ListPage(Proposal) {}
