import { formatMoney } from "../format.ts";
import { usePager } from "./Pager.tsx";
import { ScrollArea } from "./ScrollArea.tsx";

/** An order as the broker edition's orders service lists it. */
export interface PedidoBrokerSummary {
  id: string;
  clienteId: string;
  status: "ABERTO" | "EM_PAGAMENTO" | "PAGO";
  total: number;
  itens: unknown[];
}

const STATUS_LABEL: Record<PedidoBrokerSummary["status"], string> = {
  ABERTO: "Aberto",
  EM_PAGAMENTO: "Em pagamento",
  PAGO: "Pago",
};

/** Rows on one page of the list. */
export const BROKER_PAGE_SIZE = 10;

/** One order: a button that opens it, its status badge, total, item count and client. */
function BrokerOrderRow({
  p,
  open,
  onOpen,
}: {
  p: PedidoBrokerSummary;
  open: boolean;
  onOpen: (id: string) => void;
}) {
  return (
    <tr data-pedido-broker={p.id} aria-current={open ? "true" : undefined}>
      <td data-label="Pedido">
        <button
          type="button"
          className="link"
          onClick={() => onOpen(p.id)}
          aria-label={`Abrir o pedido ${p.id}`}
        >
          <code>{p.id.slice(0, 8)}</code>
        </button>
      </td>
      <td data-label="Status">
        <span className={`badge badge-${p.status.toLowerCase()}`} data-status={p.status}>
          {STATUS_LABEL[p.status]}
        </span>
      </td>
      <td className="num" data-label="Total">
        {formatMoney(Math.round(p.total * 100))}
      </td>
      <td className="num" data-label="Itens">
        {p.itens.length}
      </td>
      <td data-label="Cliente">{p.clienteId}</td>
    </tr>
  );
}

/**
 * The broker edition's orders, newest first (GET /pedidos), however they were made (this
 * page, curl, the course's client): status and total first, so that a phone shows them
 * without scrolling sideways; a click opens the order in the payment card.
 */
export function PedidosBrokerList({
  pedidos,
  error,
  open,
  onOpen,
}: {
  pedidos: PedidoBrokerSummary[] | null;
  error: string | null;
  /** The order open in the payment card, marked in the list. */
  open: string | null;
  onOpen: (id: string) => void;
}) {
  const total = pedidos?.length ?? 0;
  const { visible, pager } = usePager(pedidos, BROKER_PAGE_SIZE);
  return (
    <section className="card" aria-labelledby="pedidos-broker-titulo">
      <h2 id="pedidos-broker-titulo">
        Pedidos <small>({total})</small>
      </h2>
      {error && (
        <p className="alerta" role="alert">
          Sem resposta do serviço de pedidos ({error}).
        </p>
      )}
      {pedidos && total === 0 && <p>Nenhum pedido ainda.</p>}
      {total > 0 && (
        <>
          <ScrollArea label="Lista de pedidos">
            {/* Stacked on a phone, each cell under its column's name: at 390 px the
                client's column was cut at the right (issue 56). */}
            <table className="empilha">
              <thead>
                <tr>
                  <th scope="col">Pedido</th>
                  <th scope="col">Status</th>
                  <th scope="col">Total</th>
                  <th scope="col">Itens</th>
                  <th scope="col">Cliente</th>
                </tr>
              </thead>
              <tbody>
                {visible.map((p) => (
                  <BrokerOrderRow key={p.id} p={p} open={p.id === open} onOpen={onOpen} />
                ))}
              </tbody>
            </table>
          </ScrollArea>
          {pager}
        </>
      )}
    </section>
  );
}
