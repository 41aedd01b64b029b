import { type Cents, type StatusPagamento, toCents } from "@shop/contracts";

/**
 * The analytics view: in memory only, derived from the log and rebuilt by replay.
 * A dictionary by pedidoId of item, quantidade, valor and status; the first status wins.
 */
export interface PedidoEntry {
  item: string | null;
  quantidade: number | null;
  valorCentavos: Cents | null;
  /** The first status received; later ones are ignored. */
  status: StatusPagamento | null;
}

export type Visao = Map<number, PedidoEntry>;

export interface Dashboard {
  /** Orders whose creation event was read. */
  pedidosVistos: number;
  /** Of those, the ones whose first status is APROVADO. */
  pedidosPagos: number;
  receitaCentavos: Cents;
  /** By quantity over paid orders; ties broken by item name (alphabetical). */
  maisVendido: { item: string; quantidade: number } | null;
  /** Results read whose creation event has not been read (yet): kept, joined later. */
  resultadosSemPedido: number;
}

export const newVisao = (): Visao => new Map();

function entryOf(visao: Visao, pedidoId: number): PedidoEntry {
  let e = visao.get(pedidoId);
  if (!e) {
    e = { item: null, quantidade: null, valorCentavos: null, status: null };
    visao.set(pedidoId, e);
  }
  return e;
}

/** One copy of each item name, however many orders name it (a replay holds millions). */
const names = new Map<string, string>();
function uniqueName(item: string): string {
  let n = names.get(item);
  if (n === undefined) {
    n = item;
    if (names.size < 100_000) names.set(item, n);
  }
  return n;
}

/** A repeated creation event changes nothing: the order is counted once. */
export function applyPedidoCriado(
  visao: Visao,
  evento: { pedidoId: number; item: string; quantidade: number; valor: number },
): void {
  const e = entryOf(visao, evento.pedidoId);
  if (e.item !== null) return;
  e.item = uniqueName(evento.item);
  e.quantidade = evento.quantidade;
  e.valorCentavos = toCents(evento.valor);
}

/** The first status received wins, even when it arrives before the creation event. */
export function applyResultado(
  visao: Visao,
  resultado: { pedidoId: number; status: StatusPagamento },
): void {
  const e = entryOf(visao, resultado.pedidoId);
  e.status ??= resultado.status;
}

export function dashboard(visao: Visao): Dashboard {
  let pedidosVistos = 0;
  let pedidosPagos = 0;
  let receitaCentavos = 0;
  let resultadosSemPedido = 0;
  const vendidos = new Map<string, number>();
  for (const e of visao.values()) {
    if (e.item === null) {
      if (e.status !== null) resultadosSemPedido++;
      continue;
    }
    pedidosVistos++;
    if (e.status !== "APROVADO") continue;
    pedidosPagos++;
    receitaCentavos += e.valorCentavos as number;
    vendidos.set(e.item, (vendidos.get(e.item) ?? 0) + (e.quantidade as number));
  }
  let maisVendido: Dashboard["maisVendido"] = null;
  for (const [item, quantidade] of vendidos) {
    if (
      maisVendido === null ||
      quantidade > maisVendido.quantidade ||
      (quantidade === maisVendido.quantidade && item < maisVendido.item)
    ) {
      maisVendido = { item, quantidade };
    }
  }
  return { pedidosVistos, pedidosPagos, receitaCentavos, maisVendido, resultadosSemPedido };
}
