const money = new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" });

/** Money for people: from cents, so that no floating-point error shows (R$ 37,80). */
export function formatMoney(cents: number): string {
  return money.format(cents / 100);
}

// pt-BR, in the browser's own time zone (Intl's default).
const dateTime = new Intl.DateTimeFormat("pt-BR", { dateStyle: "short", timeStyle: "medium" });
const timeOfDay = new Intl.DateTimeFormat("pt-BR", { timeStyle: "medium" });

/** A timestamp as a Brazilian reader writes it, in the browser's time zone: 23/11/2026, 10:57:11. */
export function formatTime(iso: string | Date): string {
  return dateTime.format(typeof iso === "string" ? new Date(iso) : iso);
}

/** The time of day alone: 10:57:11. */
export function formatTimeOfDay(at: string | Date): string {
  return timeOfDay.format(typeof at === "string" ? new Date(at) : at);
}

/** "partição 1", "partições 1 e 2", "partições 0, 1 e 2". */
export function listParticoes(ps: number[]): string {
  if (ps.length === 1) return `partição ${ps[0]}`;
  return `partições ${ps.slice(0, -1).join(", ")} e ${ps[ps.length - 1]}`;
}
