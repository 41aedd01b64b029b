import {
  type Cents,
  type PedidoCriado,
  STATUS_PAGAMENTO,
  type StatusPagamento,
  toCents,
} from "@shop/contracts";

/**
 * What the view keeps of each PedidoCriado. Every field of the event is named here, as a
 * text (kept once per distinct value), a number, or left out: a field the contract adds
 * fails typecheck here until it is given one. The decoding thread (decoder.ts) and the
 * view's columns follow this list; a new field kept here reaches the dashboard's `order`
 * without another line.
 */
export const CRIADO_FIELDS = {
  cliente: "left-out",
  item: "text",
  quantidade: "number",
  valor: "number",
  criadoEm: "left-out",
} as const satisfies {
  [F in Exclude<keyof PedidoCriado, "versao" | "pedidoId">]-?: "text" | "number" | "left-out";
};
type Kind = (typeof CRIADO_FIELDS)[keyof typeof CRIADO_FIELDS];
/** The fields of a PedidoCriado the view keeps (an optional one may be absent). */
export type KeptFields = Pick<
  PedidoCriado,
  {
    [F in keyof typeof CRIADO_FIELDS]: (typeof CRIADO_FIELDS)[F] extends "left-out" ? never : F;
  }[keyof typeof CRIADO_FIELDS]
>;
/** The kept fields in a fixed order, with their kind: one column each. */
export const KEPT_FIELDS = Object.entries(CRIADO_FIELDS).filter(
  (e): e is [keyof KeptFields, Exclude<Kind, "left-out">] => e[1] !== "left-out",
);

/**
 * A kept field's value as a column holds it: a text's index in a table of texts (-1:
 * absent), a number as it is (NaN: absent). The decoding thread packs with it, the view
 * stores with it; `fromColumn` reads it back.
 */
export function toColumn(
  kind: Exclude<Kind, "left-out">,
  value: string | number | null | undefined,
  indexOf: (text: string) => number,
): number {
  // null (a nullable field) and absent (an optional one) are both kept as absent.
  if (value === undefined || value === null) return kind === "text" ? -1 : Number.NaN;
  return kind === "text" ? indexOf(value as string) : (value as number);
}

/** A kept field's value back from its column (see `toColumn`). */
export function fromColumn(
  kind: Exclude<Kind, "left-out">,
  stored: number,
  texts: readonly string[],
): string | number | undefined {
  if (kind === "text") return stored < 0 ? undefined : texts[stored];
  return Number.isNaN(stored) ? undefined : stored;
}

/**
 * The analytics view: in memory only, derived from the log and rebuilt by replay.
 * By pedidoId: the kept fields of its PedidoCriado and its status; the first status wins.
 *
 * Kept in columns (typed arrays, one slot per order) rather than an object per order: a
 * replay holds a million orders, and with an object each the garbage collector walked
 * them all again and again as the heap grew (a fifth of a replay's time went to it).
 * A text column holds the index of its text in `names` (-1: absent); a number column the
 * number (NaN: absent).
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
  /** One copy of each text, however many orders name it. */
  private readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  /** 1 once the order's PedidoCriado was read. */
  private created = new Uint8Array(1024);
  /** One column per kept field, in KEPT_FIELDS's order. */
  private columns: (Int32Array | Float64Array)[] = KEPT_FIELDS.map(([, kind]) =>
    kind === "text" ? new Int32Array(1024) : new Float64Array(1024),
  );
  /** 0 when no status yet; otherwise 1 + its place in STATUS_PAGAMENTO. */
  private status = new Uint8Array(1024);
  /** What `forEachOrder` hands over, filled again for each order (no object per order). */
  private readonly current = {} as Record<keyof KeptFields, string | number | undefined>;

  get size(): number {
    return this.count;
  }

  private slotOf(pedidoId: number): number {
    if (pedidoId >= this.byId.length && this.fits(pedidoId)) this.widenIds(pedidoId);
    const direct = pedidoId < this.byId.length;
    let slot = direct ? (this.byId[pedidoId] as number) - 1 : (this.farIds.get(pedidoId) ?? -1);
    if (slot < 0) {
      slot = this.count++;
      if (slot === this.created.length) this.grow();
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

  /** Every column twice as long: each is grown here, so none is left short. */
  private grow(): void {
    const bigger = <A extends Int32Array | Float64Array | Uint8Array>(a: A): A => {
      const b = new (a.constructor as new (n: number) => A)(a.length * 2);
      b.set(a);
      return b;
    };
    this.created = bigger(this.created);
    this.columns = this.columns.map(bigger);
    this.status = bigger(this.status);
  }

  private readonly nameOf = (text: string): number => {
    let i = this.nameIndex.get(text);
    if (i === undefined) {
      i = this.names.length;
      this.names.push(text);
      this.nameIndex.set(text, i);
    }
    return i;
  };

  /** A repeated creation event changes nothing: the order is counted once. */
  applyPedidoCriado(evento: { pedidoId: number } & KeptFields) {
    const slot = this.slotOf(evento.pedidoId);
    if (this.created[slot] === 1) return;
    this.created[slot] = 1;
    for (let f = 0; f < KEPT_FIELDS.length; f++) {
      const [field, kind] = KEPT_FIELDS[f] as (typeof KEPT_FIELDS)[number];
      (this.columns[f] as Int32Array | Float64Array)[slot] = toColumn(
        kind,
        evento[field],
        this.nameOf,
      );
    }
  }

  /** The first status received wins, even when it arrives before the creation event. */
  applyResultado(pedidoId: number, status: StatusPagamento) {
    const slot = this.slotOf(pedidoId);
    if (this.status[slot] === 0) this.status[slot] = 1 + STATUS_PAGAMENTO.indexOf(status);
  }

  /**
   * Calls `visit` with every order, in the order first seen: its kept fields (null when its
   * creation event was not read) and its status. `order` is one object filled again for
   * each order (the dashboard is drawn after every batch while following): read it, do
   * not keep it.
   */
  forEachOrder(
    visit: (order: Readonly<KeptFields> | null, status: StatusPagamento | null) => void,
  ): void {
    const order = this.current;
    for (let slot = 0; slot < this.count; slot++) {
      const status = statusAt(this.status[slot] as number);
      if (this.created[slot] !== 1) {
        visit(null, status);
        continue;
      }
      for (let f = 0; f < KEPT_FIELDS.length; f++) {
        const [field, kind] = KEPT_FIELDS[f] as (typeof KEPT_FIELDS)[number];
        const stored = (this.columns[f] as Int32Array | Float64Array)[slot] as number;
        order[field] = fromColumn(kind, stored, this.names);
      }
      visit(order as unknown as KeptFields, status);
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
  evento: { pedidoId: number } & KeptFields,
): void {
  ordersView.applyPedidoCriado(evento);
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
  ordersView.forEachOrder((order, status) => {
    if (order === null) {
      if (status !== null) resultadosSemPedido++;
      return;
    }
    pedidosVistos++;
    if (status !== "APROVADO") return;
    pedidosPagos++;
    receitaCentavos += toCents(order.valor);
    vendidos.set(order.item, (vendidos.get(order.item) ?? 0) + order.quantidade);
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
