const dinheiro = new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" });

/** Money for people: from cents, so that no floating-point error shows. */
export function formatarCentavos(cents: number): string {
  return dinheiro.format(cents / 100);
}

const hora = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" });

/** A timestamp in the person's local time zone. */
export function formatarHora(iso: string): string {
  return hora.format(new Date(iso));
}
