import { ProposalDocument, renderProposalPdf } from './proposal-pdf';

/**
 * The task of a piscina worker thread (ProposalPdfPool): rendering takes hundreds of milliseconds
 * of CPU for a long proposal, which on the main thread would hold up every other request. Runs as
 * compiled JavaScript from dist/, since a worker thread is plain Node.
 */
export default function render(document: ProposalDocument): Promise<Buffer> {
  return renderProposalPdf(document);
}
