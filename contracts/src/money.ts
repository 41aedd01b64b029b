import { z } from "zod";

/**
 * Money travels as a JSON number with at most two decimals and lives in the code as
 * integer cents. Nothing adds or multiplies amounts in binary floating point.
 */
export type Cents = number;

/**
 * The one money range: 0.01 to 1,000,000,000.00. Every amount the shop accepts over HTTP,
 * sends in a message or stores lies in it: a unit price, an order's total, a payment's
 * valor. Well inside Number.MAX_SAFE_INTEGER once in cents, so a sum of amounts is exact.
 */
export const MAX_CENTS: Cents = 1_000_000_000_00;

// String(n) is the shortest text that reads back as n, so this judges the number the
// JSON text spelled: 18.9 and 18.90 pass, 0.30000000000000004 and 1e-7 do not.
const TWO_DECIMALS = /^\d+(\.\d{1,2})?$/;

export function hasAtMostTwoDecimals(value: number): boolean {
  // The arithmetic answer first, the spelled one when it is not a plain yes: below 1e15 an
  // amount is a whole number of cents exactly when its shortest spelling has at most two
  // decimals (a property test holds them equal), and the check costs half of printing the
  // number; every record a replay decodes checks one, twice.
  if (Math.abs(value) < 1e15 && Math.round(value * 100) / 100 === value) return true;
  return Number.isFinite(value) && TWO_DECIMALS.test(String(Math.abs(value)));
}

export function toCents(value: number): Cents {
  if (!hasAtMostTwoDecimals(value)) {
    throw new RangeError(`${value} is not an amount with at most two decimals`);
  }
  return Math.round(value * 100);
}

/** The wire form of an amount in cents: 3780 -> 37.8 (prints as 37.8, means 37.80). */
export function fromCents(cents: Cents): number {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`${cents} is not a whole number of cents`);
  return cents / 100;
}

export function multiplyCents(unitCents: Cents, quantity: number): Cents {
  if (!Number.isSafeInteger(quantity)) throw new RangeError(`${quantity} is not a whole quantity`);
  const total = unitCents * quantity;
  if (!Number.isSafeInteger(total)) throw new RangeError("amount too large");
  return total;
}

/** True when an amount in cents lies in the money range. */
export function inMoneyRange(cents: Cents): boolean {
  return Number.isSafeInteger(cents) && cents > 0 && cents <= MAX_CENTS;
}

/** "37.80": for people and logs; never parsed back. */
export function formatCents(cents: Cents): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** What a breach of the money range says, naming the limit. */
export const OUT_OF_RANGE = `is above the limit of ${formatCents(MAX_CENTS)}`;

/** What positiveValor accepts, as one test (the FastPath of a message, versao.ts). */
export const isPositiveAmount = (value: unknown): value is number =>
  typeof value === "number" && value > 0 && hasAtMostTwoDecimals(value) && value * 100 <= MAX_CENTS;

/** A positive amount on the wire: a JSON number, at most two decimals, in the money range. */
export const positiveValor = z
  .number({ error: "must be a number" })
  .positive({ error: "must be greater than zero" })
  .refine(hasAtMostTwoDecimals, { error: "must have at most two decimals" })
  .refine((v) => v * 100 <= MAX_CENTS, { error: OUT_OF_RANGE });

/**
 * The total of quantities × unit prices, when every one is a valid amount and whole
 * quantity; null when some line is not (its own field reports that). For a body's check
 * that its total stays in the money range.
 */
export function totalInCents(
  lines: readonly { quantidade: unknown; precoUnitario: unknown }[],
): Cents | null {
  let total = 0;
  for (const { quantidade, precoUnitario } of lines) {
    if (typeof quantidade !== "number" || !Number.isSafeInteger(quantidade) || quantidade < 1)
      return null;
    if (typeof precoUnitario !== "number" || !hasAtMostTwoDecimals(precoUnitario)) return null;
    total += Math.round(precoUnitario * 100) * quantidade;
  }
  return total;
}

/**
 * A body's check that the total of its lines stays in the money range, for zod's
 * superRefine: a total above it is an issue on `path`, saying `what`'s limit.
 */
export function totalInRange<T>(
  lines: (valor: T) => readonly { quantidade: unknown; precoUnitario: unknown }[] | null,
  path: string,
  what: string,
) {
  return (valor: T, ctx: z.RefinementCtx) => {
    const l = lines(valor);
    const total = l ? totalInCents(l) : null;
    if (total !== null && total > MAX_CENTS) {
      ctx.addIssue({ code: "custom", path: [path], message: `${what} ${OUT_OF_RANGE}` });
    }
  };
}
