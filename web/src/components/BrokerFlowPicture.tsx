import type { HistoricoBroker, PlataformaBroker } from "@shop/contracts";
import { FLOW_BOXES } from "../codeOfStep.ts";
import { type BrokerQueue, brokerFlow, brokerMarks } from "../flow.ts";
import { NodesStage, OrderLife, Stage } from "./FlowPicture.tsx";

/** A queue's box: ready and unacked messages, its consumers, and its leader among the nodes. */
function QueueBox({ q }: { q: BrokerQueue }) {
  const offline = q.members.filter((m) => !q.online.includes(m));
  const alert = (q.errors && (q.messages ?? 0) > 0) || q.leader === null || offline.length > 0;
  return (
    <li
      className={alert ? "fila alerta-borda" : "fila"}
      data-fila={q.name}
      data-prontas={q.ready ?? ""}
      data-sem-ack={q.unacked ?? ""}
      data-lider={q.leader ?? ""}
    >
      {q.routedFrom.map((r) => (
        <span key={r.exchange} className="rota" data-exchange={r.exchange} data-chave={r.key}>
          exchange <b>{r.exchange}</b> <small>({r.type})</small> ─{r.key}→{" "}
        </span>
      ))}
      <b>{q.name}</b> <small>({q.type})</small>
      <br />
      prontas <b className={(q.ready ?? 0) > 0 ? "lag" : undefined}>{q.ready ?? "—"}</b> · sem ack{" "}
      <b>{q.unacked ?? "—"}</b> · consumidores <b>{q.consumers ?? "—"}</b>
      <br />
      <small>
        líder {q.leader ?? "nenhum: fila parada"}
        {offline.length > 0 && ` · fora: ${offline.join(", ")}`}
        {q.deadLettersTo && (
          <span data-cartas-para={q.deadLettersTo}>
            {" · "}
            {q.deliveryLimit === null ? "" : `após ${q.deliveryLimit} entregas falhas `}→{" "}
            {q.deadLettersTo}
          </span>
        )}
      </small>
    </li>
  );
}

/**
 * The broker edition's picture of the flow: the orders service, each of the shop's queues
 * with what waits in it and who consumes it, the `.erros` queues and the RabbitMQ nodes,
 * from GET /plataforma; the chosen order's three confirmations from its timeline. Both are
 * what the page polls already.
 */
export function BrokerFlowPicture({
  plataforma,
  historico,
}: {
  plataforma: PlataformaBroker | null;
  historico: HistoricoBroker | null;
}) {
  const flow = plataforma ? brokerFlow(plataforma) : null;
  const marks = historico ? brokerMarks(historico) : null;
  return (
    <section className="card" aria-labelledby="fluxo-broker-titulo" data-testid="fluxo">
      <h2 id="fluxo-broker-titulo">O fluxo, agora</h2>
      {!flow && <p className="discreto">Esperando a primeira leitura do RabbitMQ.</p>}
      {marks && <OrderLife marks={marks} />}
      {flow && (
        <div className="fluxo">
          <Stage title="Serviço de pedidos → filas" code={FLOW_BOXES["broker:orders"]} id="pedidos">
            <ul className="lista-curta">
              {flow.queues
                .filter((q) => !q.errors)
                .map((q) => (
                  <QueueBox key={q.name} q={q} />
                ))}
            </ul>
          </Stage>
          <Stage
            title="Pagamento consome e confirma (ack)"
            code={FLOW_BOXES["broker:payments"]}
            id="pagamentos"
          />
          <Stage
            title="Filas de erros"
            code={FLOW_BOXES["broker:erros"]}
            id="erros"
            alert={flow.queues.some((q) => q.errors && (q.messages ?? 0) > 0)}
          >
            <ul className="lista-curta">
              {flow.queues
                .filter((q) => q.errors)
                .map((q) => (
                  <QueueBox key={q.name} q={q} />
                ))}
            </ul>
          </Stage>
          <NodesStage
            title="Nós do RabbitMQ"
            code={FLOW_BOXES["broker:nodes"]}
            nodes={flow.nodes}
          />
        </div>
      )}
    </section>
  );
}
