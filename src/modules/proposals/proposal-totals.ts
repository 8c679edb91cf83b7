import { ApiError } from '../../common/api-error';
import { MAX_VALUE, toMinorUnits } from '../deals/money';

/**
 * Proposal arithmetic in integers only (CONTRACT §1): prices in hundredths, quantities and
 * percentages in thousandths, products in BigInt, each rounding half away from zero and once:
 * per line, then the discount on the subtotal, then the tax on what is left. 0.1 × 3 is 0.30,
 * and 33.333 % of 100.00 is 33.33, on every input.
 */

/** Quantities and percentages carry up to 3 decimals. */
const THOUSANDTHS = /^(\d+)(?:\.(\d{1,3}))?$/;
const MAX_MINOR = BigInt(MAX_VALUE) * 100n;

export const MAX_QUANTITY = 1_000_000;

export function toThousandths(value: number, param: string, max: number, what: string): number {
  const match = Number.isFinite(value) ? THOUSANDTHS.exec(String(value)) : null;
  if (!match || value > max) throw new ApiError('parameter_invalid', `${param} must be ${what} from 0 to ${max} with at most 3 decimals`, { param });
  return Number(match[1]) * 1000 + Number((match[2] ?? '').padEnd(3, '0'));
}

/** a / b rounded half away from zero, for non-negative a and positive b. */
function divideRounded(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

export interface LineInput {
  description: string;
  quantity: number;
  unitPrice: number;
}

export interface PricedLine {
  description: string;
  quantityThousandths: number;
  unitPriceMinor: number;
  amountMinor: number;
}

export interface Totals {
  lines: PricedLine[];
  subtotalMinor: number;
  discountMinor: number;
  taxMinor: number;
  totalMinor: number;
}

function checked(amount: bigint, param: string): number {
  if (amount > MAX_MINOR) throw new ApiError('parameter_invalid', `${param} would exceed ${MAX_VALUE} in major units`, { param });
  return Number(amount);
}

/** Prices the lines and applies the discount, then the tax, in thousandths of a percent. */
export function computeTotals(lines: LineInput[], discountThousandths: number, taxThousandths: number): Totals {
  const priced = lines.map((line, i) => {
    const quantityThousandths = toThousandths(line.quantity, `lineItems.${i}.quantity`, MAX_QUANTITY, 'a quantity');
    if (quantityThousandths === 0) throw new ApiError('parameter_invalid', `lineItems.${i}.quantity must be more than 0`, { param: `lineItems.${i}.quantity` });
    const unitPriceMinor = toMinorUnits(line.unitPrice, `lineItems.${i}.unitPrice`);
    const amount = divideRounded(BigInt(quantityThousandths) * BigInt(unitPriceMinor), 1000n);
    return { description: line.description, quantityThousandths, unitPriceMinor, amountMinor: checked(amount, `lineItems.${i}`) };
  });
  const subtotal = priced.reduce((sum, line) => sum + BigInt(line.amountMinor), 0n);
  const discount = divideRounded(subtotal * BigInt(discountThousandths), 100_000n);
  const tax = divideRounded((subtotal - discount) * BigInt(taxThousandths), 100_000n);
  return {
    lines: priced,
    subtotalMinor: checked(subtotal, 'lineItems'),
    discountMinor: Number(discount),
    taxMinor: checked(tax, 'taxPercent'),
    totalMinor: checked(subtotal - discount + tax, 'taxPercent'),
  };
}
