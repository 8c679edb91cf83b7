/**
 * Renders the sample proposal committed under docs/ (PDF, and page 1 as PNG through pdftoppm
 * from Debian's poppler-utils), so people can see what customers receive without running the
 * service. Usage: npm run docs:proposal
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ProposalDocument, renderProposalPdf } from '../src/modules/proposals/proposal-pdf';
import { computeTotals } from '../src/modules/proposals/proposal-totals';

const lines = [
  { description: 'Managed endpoint protection — 12 months, per seat', quantity: 250, unitPrice: 4.5 },
  { description: 'Microsoft 365 Business Premium migration (Exchange, SharePoint, Teams)', quantity: 1, unitPrice: 18_500 },
  { description: 'On-site discovery workshop, Düsseldorf office', quantity: 2.5, unitPrice: 1_200 },
  { description: 'Helpdesk retainer, hours (Mo–Fr, 8–18 Uhr)', quantity: 40, unitPrice: 95.0 },
  { description: 'Backup & recovery: 10 TB immutable storage, per month', quantity: 12, unitPrice: 333.33 },
  { description: '日本支社向けオンボーディング (Tokyo branch onboarding)', quantity: 1, unitPrice: 2_750 },
];
const totals = computeTotals(lines, 10_000, 19_000);

const sample: ProposalDocument = {
  accountName: 'Northwind Managed Services',
  number: 'P-2026-000042',
  title: 'Proposal: Modern workplace for Müller & Söhne',
  issuedOn: new Date('2026-11-22T09:30:00.000Z'),
  validUntil: '2026-12-22',
  currency: 'EUR',
  customer: { company: 'Müller & Söhne GmbH', contactName: 'Jürgen Weiß', contactEmail: 'j.weiss@mueller-soehne.example' },
  dealName: 'Modern workplace rollout',
  lines: totals.lines,
  subtotalMinor: totals.subtotalMinor,
  discountPercentThousandths: 10_000,
  discountMinor: totals.discountMinor,
  taxPercentThousandths: 19_000,
  taxMinor: totals.taxMinor,
  totalMinor: totals.totalMinor,
  notes: 'Prices exclude travel. Licences are billed monthly from the go-live date; the retainer hours roll over for one quarter.',
};

async function main(): Promise<void> {
  const docs = path.resolve(__dirname, '../../docs');
  const pdf = path.join(docs, 'proposal-sample.pdf');
  writeFileSync(pdf, await renderProposalPdf(sample));
  console.log(`wrote ${pdf}`);
  try {
    execFileSync('pdftoppm', ['-png', '-r', '80', '-f', '1', '-l', '1', '-singlefile', pdf, path.join(docs, 'proposal-sample')]);
    console.log(`wrote ${path.join(docs, 'proposal-sample.png')}`);
  } catch {
    console.error('pdftoppm not found: install poppler-utils (apt-get install poppler-utils) for the PNG');
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
