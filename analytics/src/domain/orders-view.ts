import { type Cents, STATUS_PAGAMENTO, type StatusPagamento, toCents } from "@shop/contracts";

/**
 * The analytics view: in memory only, derived from the log and rebuilt by replay.
 * By pedidoId: item, quantidade, valor and status; the first status wins.
 *
 * Kept in columns (typed arrays, one slot per order) rather than an object per order: a
 * replay holds a million orders, and with an object each the garbage collector walked
 * them all again and again as the heap grew (a fifth of a replay's time went to it).
 */
export class OrdersView {
  /**
   * pedidoId -> 1 + slot, for the ids below its length: the orders API numbers its orders
   * 1, 2, 3..., so the ids a replay reads are dense, and an array indexed by id finds a
   * slot without hashing and holds nothing the garbage collector walks (a Map of half a
   * million orders: a tenth of a replay's main thread, and more in collections).
   */
  private byId = new Int32Array(1024);
  /** pedidoId -> slot for an id too far past the others to index (see `fits`). */
  private readonly farIds = new Map<number, number>();
  private count = 0;
  /** One copy of each item name, however many orders name it; -1 in `item` when unknown. */
  private readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  private item = new Int32Array(1024);
  private quantidade = new Float64Array(1024);
  private valorCentavos = new Float64Array(1024);
  /** 0 when no status yet; otherwise 1 + its place in STATUS_PAGAMENTO. */
  private status = new Uint8Array(1024);

  get size(): number {
    return this.count;
  }

  private slotOf(pedidoId: number): number {
    if (pedidoId >= this.byId.length && this.fits(pedidoId)) this.widenIds(pedidoId);
    const direct = pedidoId < this.byId.length;
    let slot = direct ? (this.byId[pedidoId] as number) - 1 : (this.farIds.get(pedidoId) ?? -1);
    if (slot < 0) {
      slot = this.count++;
      if (slot === this.item.length) this.grow();
      this.item[slot] = -1;
      if (direct) this.byId[pedidoId] = slot + 1;
      else this.farIds.set(pedidoId, slot);
    }
    return slot;
  }

  /**
   * Whether indexing by id up to `pedidoId` keeps the index within four entries per order
   * known (plus 64 Ki): ids far past the others (an id of a billion among ten orders) go
   * to `farIds` instead of sizing the array.
   */
  private fits(pedidoId: number): boolean {
    return pedidoId < 4 * this.count + 65_536;
  }

  /** Makes the index cover `pedidoId`, and moves the far ids it now covers into it. */
  private widenIds(pedidoId: number): void {
    const wider = new Int32Array(Math.max(this.byId.length * 2, pedidoId + 1));
    wider.set(this.byId);
    this.byId = wider;
    for (const [id, slot] of this.farIds) {
      if (id < wider.length) {
        wider[id] = slot + 1;
        this.farIds.delete(id);
      }
    }
  }

  private grow(): void {
    const bigger = <A extends Int32Array | Float64Array | Uint8Array>(
      a: A,
      make: (n: number) => A,
    ) => {
      const b = make(a.length * 2);
      b.set(a);
      return b;
    };
    this.item = bigger(this.item, (n) => new Int32Array(n));
    this.quantidade = bigger(this.quantidade, (n) => new Float64Array(n));
    this.valorCentavos = bigger(this.valorCentavos, (n) => new Float64Array(n));
    this.status = bigger(this.status, (n) => new Uint8Array(n));
  }

  private nameOf(item: string): number {
    let i = this.nameIndex.get(item);
    if (i === undefined) {
      i = this.names.length;
      this.names.push(item);
      this.nameIndex.set(item, i);
    }
    return i;
  }

  /** A repeated creation event changes nothing: the order is counted once. */
  applyPedidoCriado(pedidoId: number, item: string, quantidade: number, valorCentavos: Cents) {
    const slot = this.slotOf(pedidoId);
    if ((this.item[slot] as number) >= 0) return;
    this.item[slot] = this.nameOf(item);
    this.quantidade[slot] = quantidade;
    this.valorCentavos[slot] = valorCentavos;
  }

  /** The first status received wins, even when it arrives before the creation event. */
  applyResultado(pedidoId: number, status: StatusPagamento) {
    const slot = this.slotOf(pedidoId);
    if (this.status[slot] === 0) this.status[slot] = 1 + STATUS_PAGAMENTO.indexOf(status);
  }

  /**
   * Calls `visit` with every order, in the order first seen, without building an object
   * per order (the dashboard is drawn after every batch while following).
   */
  forEachOrder(
    visit: (
      item: string | null,
      quantidade: number,
      valorCentavos: Cents,
      status: StatusPagamento | null,
    ) => void,
  ): void {
    for (let slot = 0; slot < this.count; slot++) {
      const item = this.item[slot] as number;
      visit(
        item < 0 ? null : (this.names[item] as string),
        this.quantidade[slot] as number,
        this.valorCentavos[slot] as Cents,
        statusAt(this.status[slot] as number),
      );
    }
  }
}

const statusAt = (code: number): StatusPagamento | null =>
  code === 0 ? null : (STATUS_PAGAMENTO[code - 1] as StatusPagamento);

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

export const newOrdersView = (): OrdersView => new OrdersView();

/** A repeated creation event changes nothing: the order is counted once. */
export function applyPedidoCriado(
  ordersView: OrdersView,
  evento: { pedidoId: number; item: string; quantidade: number; valor: number },
): void {
  ordersView.applyPedidoCriado(
    evento.pedidoId,
    evento.item,
    evento.quantidade,
    toCents(evento.valor),
  );
}

/** The first status received wins, even when it arrives before the creation event. */
export function applyResultado(
  ordersView: OrdersView,
  resultado: { pedidoId: number; status: StatusPagamento },
): void {
  ordersView.applyResultado(resultado.pedidoId, resultado.status);
}

export function dashboard(ordersView: OrdersView): Dashboard {
  let pedidosVistos = 0;
  let pedidosPagos = 0;
  let receitaCentavos = 0;
  let resultadosSemPedido = 0;
  const vendidos = new Map<string, number>();
  ordersView.forEachOrder((item, quantidade, valorCentavos, status) => {
    if (item === null) {
      if (status !== null) resultadosSemPedido++;
      return;
    }
    pedidosVistos++;
    if (status !== "APROVADO") return;
    pedidosPagos++;
    receitaCentavos += valorCentavos;
    vendidos.set(item, (vendidos.get(item) ?? 0) + quantidade);
  });
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
