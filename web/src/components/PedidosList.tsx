import type { Pedido } from "@shop/contracts";
import { useEffect, useRef, useState } from "react";
import { formatTimeOfDay } from "../format.ts";
import { COLUMNS } from "../pedidoFields.tsx";
import { usePager } from "./Pager.tsx";
import { ScrollArea } from "./ScrollArea.tsx";

/** Rows on one page of the list: a poll of 5,000 orders still renders this many rows. */
export const PAGE_SIZE = 10;

/** Ids whose status changed since the previous render, highlighted for a moment. */
function useChanges(pedidos: Pedido[] | null): Set<number> {
  const previous = useRef(new Map<number, Pedido["status"]>());
  const [changed, setChanged] = useState(new Set<number>());
  useEffect(() => {
    if (!pedidos) return;
    const now = new Set<number>();
    for (const p of pedidos) {
      const then = previous.current.get(p.id);
      if (then !== undefined && then !== p.status) now.add(p.id);
      previous.current.set(p.id, p.status);
    }
    if (now.size === 0) return;
    setChanged(now);
    const timer = setTimeout(() => setChanged(new Set()), 2500);
    return () => clearTimeout(timer);
  }, [pedidos]);
  return changed;
}

/** One order: its number (a button to its timeline) and every column of COLUMNS. */
function OrderRow({
  p,
  changed,
  onOpenPedido,
}: {
  p: Pedido;
  changed: boolean;
  onOpenPedido?: (id: number) => void;
}) {
  return (
    <tr data-pedido={p.id} className={changed ? "mudou" : undefined}>
      <td data-label="#">
        {onOpenPedido ? (
          <button
            type="button"
            className="link"
            onClick={() => onOpenPedido(p.id)}
            aria-label={`Abrir o histórico do pedido ${p.id}`}
          >
            {p.id}
          </button>
        ) : (
          p.id
        )}
      </td>
      {Object.entries(COLUMNS).map(([field, c]) => (
        <td key={field} className={c.num ? "num" : undefined} data-label={c.label}>
          {c.cell(p)}
        </td>
      ))}
    </tr>
  );
}

/** One page of orders: a header of COLUMNS, a row each. */
function OrdersTable({
  visible,
  changed,
  onOpenPedido,
}: {
  visible: Pedido[];
  changed: Set<number>;
  onOpenPedido?: (id: number) => void;
}) {
  return (
    <ScrollArea label="Lista de pedidos">
      <table className="empilha pedidos">
        <thead>
          <tr>
            <th scope="col">#</th>
            {Object.entries(COLUMNS).map(([field, c]) => (
              <th scope="col" key={field}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {visible.map((p) => (
            <OrderRow key={p.id} p={p} changed={changed.has(p.id)} onOpenPedido={onOpenPedido} />
          ))}
        </tbody>
      </table>
    </ScrollArea>
  );
}

export function PedidosList({
  pedidos,
  error,
  updatedAt,
  onOpenPedido,
}: {
  pedidos: Pedido[] | null;
  error: string | null;
  updatedAt: Date | null;
  /** Opens the order's timeline. */
  onOpenPedido?: (id: number) => void;
}) {
  const changed = useChanges(pedidos);
  const total = pedidos?.length ?? 0;
  const { visible, pager } = usePager(pedidos, PAGE_SIZE);
  // How long one poll's answer took to reach the screen (the browser test reads it).
  useEffect(() => {
    if (!pedidos || performance.getEntriesByName("pedidos:dados").length === 0) return;
    performance.measure("pedidos:render", "pedidos:dados");
  }, [pedidos]);
  return (
    <section className="card" aria-labelledby="pedidos-titulo">
      <h2 id="pedidos-titulo">
        Pedidos <small>({total})</small>
      </h2>
      {error && (
        <p className="alerta" role="alert">
          Sem resposta da API de pedidos ({error}).{" "}
          {updatedAt
            ? `Mostrando os dados de ${formatTimeOfDay(updatedAt)}.`
            : "Ainda não há dados."}
        </p>
      )}
      {pedidos && total === 0 && <p>Nenhum pedido ainda.</p>}
      {total > 0 && (
        <>
          <OrdersTable visible={visible} changed={changed} onOpenPedido={onOpenPedido} />
          {pager}
        </>
      )}
    </section>
  );
}
