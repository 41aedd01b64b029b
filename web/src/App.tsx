import type { LabState, Pedido, Plataforma, PlataformaBroker } from "@shop/contracts";
import { useCallback, useState } from "react";
import { fetchJson } from "./api.ts";
import { BrokerPanel } from "./components/BrokerPanel.tsx";
import { DeadLetters } from "./components/DeadLetters.tsx";
import { FlowPicture } from "./components/FlowPicture.tsx";
import { Laboratorio } from "./components/Laboratorio.tsx";
import { PedidoForm } from "./components/PedidoForm.tsx";
import { PedidoHistorico } from "./components/PedidoHistorico.tsx";
import { PedidosList } from "./components/PedidosList.tsx";
import { PlataformaPanel } from "./components/PlataformaPanel.tsx";
import { LAB_URL } from "./lab.ts";
import { useKafkaView, usePlatformHistory } from "./platformHistory.ts";
import { usePolling } from "./usePolling.ts";

export const POLL_INTERVAL_MS = 2000;

/** The page never asks a service it was not given: the RabbitMQ panel's loader without one. */
const NO_BROKER = () => Promise.reject(new Error("nenhuma edição broker configurada"));

/**
 * The page's polls, every POLL_INTERVAL_MS: the orders, the platform (its last Kafka
 * reading kept while Kafka is down) with its history, and a broker edition's panel if given.
 */
function useEventLogPolls(apiUrl: string, brokerUrl: string | null) {
  // Every order the API lists (at most 5,000): the list shows them a page at a time.
  const loadPedidos = useCallback(
    () => fetchJson<Pedido[]>(`${apiUrl}/pedidos?limite=5000`),
    [apiUrl],
  );
  const loadPlataforma = useCallback(() => fetchJson<Plataforma>(`${apiUrl}/plataforma`), [apiUrl]);
  const pedidos = usePolling(loadPedidos, POLL_INTERVAL_MS, "pedidos");
  const polled = usePolling(loadPlataforma, POLL_INTERVAL_MS);
  const view = useKafkaView(polled.data, polled.error);
  const plataforma = { ...polled, data: view.plataforma, error: view.error };
  const history = usePlatformHistory(plataforma.data);
  const loadBroker = useCallback(
    () => (brokerUrl ? fetchJson<PlataformaBroker>(`${brokerUrl}/plataforma`) : NO_BROKER()),
    [brokerUrl],
  );
  const broker = usePolling(loadBroker, brokerUrl ? POLL_INTERVAL_MS : 3_600_000);
  return { pedidos, plataforma, history, broker };
}

function EventLogHeader({ apiUrl }: { apiUrl: string }) {
  return (
    <header>
      <h1>Loja orientada a eventos</h1>
      <p>
        Os pedidos são publicados no Kafka; o pagamento decide cerca de 3 s depois. A página
        consulta a API de pedidos ({apiUrl}) a cada 2 s.
      </p>
    </header>
  );
}

/** The event-log edition's page: the form and the orders on the left, the platform on the right. */
export function App({ apiUrl, brokerUrl = null }: { apiUrl: string; brokerUrl?: string | null }) {
  const { pedidos, plataforma, history, broker } = useEventLogPolls(apiUrl, brokerUrl);
  const [open, setOpen] = useState<number | null>(null);
  const [lettersOf, setLettersOf] = useState<string | null>(null);
  const [processes, setProcesses] = useState<LabState["processos"]>([]);
  return (
    <>
      <EventLogHeader apiUrl={apiUrl} />
      <main>
        <div className="coluna">
          <PedidoForm apiUrl={apiUrl} onCreated={pedidos.refresh} />
          {LAB_URL && <Laboratorio labUrl={LAB_URL} onProcesses={setProcesses} />}
          {open !== null && (
            <PedidoHistorico apiUrl={apiUrl} pedidoId={open} onClose={() => setOpen(null)} />
          )}
          <PedidosList
            pedidos={pedidos.data}
            error={pedidos.error}
            updatedAt={pedidos.updatedAt}
            onOpenPedido={setOpen}
          />
        </div>
        <div className="coluna">
          {/* The order opened, or else the latest (the list is newest first). */}
          <FlowPicture
            apiUrl={apiUrl}
            plataforma={plataforma.data}
            pedidoId={open ?? pedidos.data?.[0]?.id ?? null}
            processes={processes}
            intervalMs={POLL_INTERVAL_MS}
          />
          <PlataformaPanel
            plataforma={plataforma.data}
            error={plataforma.error}
            updatedAt={plataforma.updatedAt}
            history={history}
            onLetters={setLettersOf}
          />
          {lettersOf && (
            <DeadLetters apiUrl={apiUrl} topico={lettersOf} onClose={() => setLettersOf(null)} />
          )}
          {brokerUrl && <BrokerPanel plataforma={broker.data} error={broker.error} />}
        </div>
      </main>
    </>
  );
}
