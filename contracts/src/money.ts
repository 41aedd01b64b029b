import { z } from "zod";

/**
 * Money travels as a JSON number with at most two decimals and lives in the code as
 * integer cents. Nothing adds or multiplies amounts in binary floating point.
 */
export type Cents = number;

/** Largest amount we accept, well inside Number.MAX_SAFE_INTEGER once in cents. */
export const MAX_CENTS: Cents = 1_000_000_000_00;

// String(n) is the shortest text that reads back as n, so this judges the number the
// JSON text spelled: 18.9 and 18.90 pass, 0.30000000000000004 and 1e-7 do not.
const TWO_DECIMALS = /^\d+(\.\d{1,2})?$/;

export function hasAtMostTwoDecimals(value: number): boolean {
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

/** "37.80": for people and logs; never parsed back. */
export function formatCents(cents: Cents): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** A positive amount on the wire: a JSON number, at most two decimals. */
export const valorPositivo = z
  .number({ error: "must be a number" })
  .positive({ error: "must be greater than zero" })
  .refine(hasAtMostTwoDecimals, { error: "must have at most two decimals" })
  .refine((v) => v * 100 <= MAX_CENTS, { error: "is too large" });
