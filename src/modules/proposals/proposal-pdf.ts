import { readFileSync } from 'node:fs';
import * as fontkit from 'fontkit';
import PDFDocument from 'pdfkit';

/** What the PDF shows: the proposal's frozen figures and the account it comes from. */
export interface ProposalDocument {
  accountName: string;
  number: string;
  title: string;
  issuedOn: Date;
  validUntil: string;
  currency: string;
  customer: { company: string; contactName?: string | null; contactEmail?: string | null } | null;
  dealName: string;
  lines: Array<{ description: string; quantityThousandths: number; unitPriceMinor: number; amountMinor: number }>;
  subtotalMinor: number;
  discountPercentThousandths: number;
  discountMinor: number;
  taxPercentThousandths: number;
  taxMinor: number;
  totalMinor: number;
  notes?: string | null;
}

/**
 * Noto Sans JP covers Latin (é, ü, ß), punctuation, currency signs and Japanese; pdfkit embeds
 * only the glyphs used. Characters it lacks (Hangul, Arabic…) print as "?" rather than as blanks,
 * so a reader sees that something was there; the JSON keeps the original text.
 */
const FONT_FILES = {
  regular: require.resolve('@expo-google-fonts/noto-sans-jp/400Regular/NotoSansJP_400Regular.ttf'),
  bold: require.resolve('@expo-google-fonts/noto-sans-jp/700Bold/NotoSansJP_700Bold.ttf'),
};

let fonts: { regular: Buffer; bold: Buffer; coverage: fontkit.Font } | undefined;
function loadFonts() {
  if (!fonts) {
    const regular = readFileSync(FONT_FILES.regular);
    fonts = { regular, bold: readFileSync(FONT_FILES.bold), coverage: fontkit.create(regular) as fontkit.Font };
  }
  return fonts;
}

function printable(text: string): string {
  const { coverage } = loadFonts();
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    out += char === '\n' || char === '\t' || coverage.hasGlyphForCodePoint(code) ? char : '?';
  }
  return out;
}

/** Exact figures from integers: "USD 1,234,567.89" (BigInt grouping, no floating point). */
export function formatMoney(minor: number, currency: string): string {
  const whole = BigInt(minor) / 100n;
  const cents = String(minor % 100).padStart(2, '0');
  return `${currency} ${new Intl.NumberFormat('en-US').format(whole)}.${cents}`;
}

function formatThousandths(value: number): string {
  const whole = new Intl.NumberFormat('en-US').format(Math.trunc(value / 1000));
  const fraction = String(value % 1000)
    .padStart(3, '0')
    .replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

const PAGE = { size: 'A4' as const, margin: 50 };
const COLUMNS = [
  { key: 'description', title: 'Description', width: 255, align: 'left' as const },
  { key: 'quantity', title: 'Qty', width: 55, align: 'right' as const },
  { key: 'unit', title: 'Unit price', width: 92, align: 'right' as const },
  { key: 'amount', title: 'Amount', width: 93, align: 'right' as const },
];
const GREY = '#555555';

/**
 * Renders the proposal as an A4 PDF. The output depends only on the document given (fixed
 * creation date, no clock or randomness), so the same proposal yields the same bytes every time.
 */
export function renderProposalPdf(proposal: ProposalDocument): Promise<Buffer> {
  const { regular, bold } = loadFonts();
  const doc = new PDFDocument({
    size: PAGE.size,
    margin: PAGE.margin,
    bufferPages: true,
    info: {
      Title: printable(`${proposal.number} ${proposal.title}`),
      Author: printable(proposal.accountName),
      CreationDate: proposal.issuedOn,
      ModDate: proposal.issuedOn,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.registerFont('regular', regular);
  doc.registerFont('bold', bold);

  const left = PAGE.margin;
  const width = doc.page.width - 2 * PAGE.margin;
  const bottom = () => doc.page.height - PAGE.margin - 30; // room for the footer
  const money = (minor: number) => formatMoney(minor, proposal.currency);

  // Header: who proposes, and which proposal.
  doc
    .font('bold')
    .fontSize(18)
    .fillColor('black')
    .text(printable(proposal.accountName), left, PAGE.margin, { width: width * 0.6 });
  doc.font('bold').fontSize(12).text('PROPOSAL', left, PAGE.margin, { width, align: 'right' });
  doc.font('regular').fontSize(10).text(proposal.number, { width, align: 'right' });
  doc.moveDown(2);
  doc.font('bold').fontSize(14).text(printable(proposal.title), left, doc.y, { width });
  doc.moveDown(0.5);

  // Dates and the customer, side by side.
  const top = doc.y;
  doc.font('bold').fontSize(9).fillColor(GREY).text('PREPARED FOR', left, top);
  doc.font('regular').fontSize(10).fillColor('black');
  const customer = proposal.customer;
  doc.text(printable(customer?.company ?? proposal.dealName), { width: width / 2 - 10 });
  if (customer?.contactName) doc.text(printable(customer.contactName), { width: width / 2 - 10 });
  if (customer?.contactEmail) doc.text(printable(customer.contactEmail), { width: width / 2 - 10 });
  const afterCustomer = doc.y;
  const facts: Array<[string, string]> = [
    ['Number', proposal.number],
    ['Date', proposal.issuedOn.toISOString().slice(0, 10)],
    ['Valid until', proposal.validUntil],
    ['Currency', proposal.currency],
  ];
  let factY = top;
  for (const [label, value] of facts) {
    doc
      .font('bold')
      .fontSize(9)
      .fillColor(GREY)
      .text(label.toUpperCase(), left + width / 2, factY, { width: width / 4 });
    doc
      .font('regular')
      .fontSize(10)
      .fillColor('black')
      .text(value, left + (3 * width) / 4, factY, { width: width / 4, align: 'right' });
    factY = doc.y + 2;
  }
  doc.y = Math.max(afterCustomer, factY) + 20;

  // The lines, flowing onto further pages with the header repeated.
  const cell = (text: string, column: (typeof COLUMNS)[number], x: number, y: number) =>
    doc.text(text, x + 4, y + 5, { width: column.width - 8, align: column.align });
  const header = () => {
    const y = doc.y;
    doc.rect(left, y, width, 20).fill('#eeeeee').fillColor('black').font('bold').fontSize(9);
    let x = left;
    for (const column of COLUMNS) {
      cell(column.title, column, x, y);
      x += column.width;
    }
    doc.y = y + 20;
  };
  header();
  doc.font('regular').fontSize(9);
  for (const line of proposal.lines) {
    const values: Record<string, string> = {
      description: printable(line.description),
      quantity: formatThousandths(line.quantityThousandths),
      unit: money(line.unitPriceMinor),
      amount: money(line.amountMinor),
    };
    const height = Math.max(...COLUMNS.map((column) => doc.heightOfString(values[column.key], { width: column.width - 8 }))) + 10;
    if (doc.y + height > bottom()) {
      doc.addPage();
      header();
      doc.font('regular').fontSize(9);
    }
    const y = doc.y;
    let x = left;
    for (const column of COLUMNS) {
      cell(values[column.key], column, x, y);
      x += column.width;
    }
    doc
      .moveTo(left, y + height)
      .lineTo(left + width, y + height)
      .lineWidth(0.5)
      .strokeColor('#dddddd')
      .stroke();
    doc.y = y + height;
  }

  // Totals, kept together.
  const totals: Array<[string, string, boolean]> = [['Subtotal', money(proposal.subtotalMinor), false]];
  if (proposal.discountPercentThousandths)
    totals.push([`Discount (${formatThousandths(proposal.discountPercentThousandths)}%)`, `- ${money(proposal.discountMinor)}`, false]);
  if (proposal.taxPercentThousandths) totals.push([`Tax (${formatThousandths(proposal.taxPercentThousandths)}%)`, money(proposal.taxMinor), false]);
  totals.push(['Total', money(proposal.totalMinor), true]);
  if (doc.y + totals.length * 18 + 20 > bottom()) doc.addPage();
  doc.y += 10;
  for (const [label, value, strong] of totals) {
    const y = doc.y;
    doc
      .font(strong ? 'bold' : 'regular')
      .fontSize(strong ? 12 : 10)
      .fillColor('black');
    doc.text(label, left + width / 2, y, { width: width / 4 });
    doc.text(value, left + (3 * width) / 4 - 40, y, { width: width / 4 + 40, align: 'right' });
    doc.y = Math.max(doc.y, y + 16) + 2;
  }

  if (proposal.notes) {
    if (doc.y + 60 > bottom()) doc.addPage();
    doc.moveDown(1.5);
    doc.font('bold').fontSize(9).fillColor(GREY).text('NOTES', left, doc.y, { width });
    doc.font('regular').fontSize(10).fillColor('black').text(printable(proposal.notes), { width });
  }

  // Footer on every page: validity and page numbers.
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    // Writing below the bottom margin would make pdfkit start a new page; the footer lives there.
    const margin = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc.font('regular').fontSize(8).fillColor(GREY);
    const footer = `${proposal.number} · valid until ${proposal.validUntil} · page ${i + 1} of ${range.count}`;
    doc.text(footer, left, doc.page.height - PAGE.margin - 10, { width, align: 'center', lineBreak: false });
    doc.page.margins.bottom = margin;
  }
  doc.end();
  return done;
}
