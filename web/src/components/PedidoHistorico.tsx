import type { Historico } from "@shop/contracts";
import { useCallback } from "react";
import { fetchJson } from "../api.ts";
import { describeCode, EVENT_LOG_STEPS } from "../codeOfStep.ts";
import { formatTime } from "../format.ts";
import { usePolling } from "../usePolling.ts";

const ETAPA_LABEL: Record<string, string> = {
  criado: "Criado",
  "evento-confirmado": "Evento confirmado pelo Kafka",
  "evento-posto-de-lado": "Evento recusado pelo Kafka e posto de lado",
  decidido: "Decidido pelo pagamento",
  "resultado-aplicado": "Resultado aplicado",
  "resultado-repetido": "Resultado repetido: nada mudou",
};

const describeDetalhes = (d: Historico["etapas"][number]["detalhes"]) =>
  Object.entries(d)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k} ${v}`)
    .join(" · ");

/** An order's timeline, read from GET /pedidos/{id}/historico and refreshed with the list. */
export function PedidoHistorico({
  apiUrl,
  pedidoId,
  onClose,
  intervaloMs: intervalMs = 2000,
}: {
  apiUrl: string;
  pedidoId: number;
  onClose: () => void;
  intervaloMs?: number;
}) {
  const load = useCallback(
    () => fetchJson<Historico>(`${apiUrl}/pedidos/${pedidoId}/historico`),
    [apiUrl, pedidoId],
  );
  const { data, error } = usePolling(load, intervalMs);
  return (
    <section className="card" aria-labelledby="historico-titulo">
      <h2 id="historico-titulo">
        Pedido #{pedidoId}: histórico{" "}
        <button type="button" onClick={onClose}>
          Fechar
        </button>
      </h2>
      {error && (
        <p className="alerta" role="alert">
          Não foi possível ler o histórico ({error}).
        </p>
      )}
      {data && (
        <ol className="historico">
          {data.etapas.map((e) => (
            <li key={`${e.etapa}@${e.em}@${JSON.stringify(e.detalhes)}`} data-etapa={e.etapa}>
              <time dateTime={e.em}>{formatTime(e.em)}</time>{" "}
              <b>{ETAPA_LABEL[e.etapa] ?? e.etapa}</b>
              {Object.keys(e.detalhes).length > 0 && <small> {describeDetalhes(e.detalhes)}</small>}
              {EVENT_LOG_STEPS[e.etapa] && (
                <small className="codigo" data-codigo>
                  {" "}
                  código: <code>{describeCode(EVENT_LOG_STEPS[e.etapa])}</code>
                </small>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
