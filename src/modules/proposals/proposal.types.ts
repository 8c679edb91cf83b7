import { ObjectType } from 'type-graphql';
import { ListPage } from '../../common/pagination';
import { Proposal } from './proposal.entity';

@ObjectType()
export class ProposalList extends ListPage(Proposal) {}
