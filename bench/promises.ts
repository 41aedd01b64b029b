/**
 * The price list (issue 57): what each promise the shop keeps costs, measured by adding it,
 * one at a time and in this order, to the lean twin (bench/twin-orders.ts), each step
 * against the step before in alternating pairs. The last step keeps every promise: the
 * feature-matched twin the shop's headline rows are held to. A file of its own, importing
 * nothing: the twins run under Node's type stripping, as the bundled services run.
 */
export const PROMISES = [
  "outbox",
  "idempotency",
  "timeline",
  "validation",
  "headers",
  "tracing",
  "metrics",
] as const;
export type ShopPromise = (typeof PROMISES)[number];
