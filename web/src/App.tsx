import type { Pedido, Plataforma, PlataformaBroker } from "@shop/contracts";
import { useCallback, useState } from "react";
import { fetchJson } from "./api.ts";
import { BrokerPanel } from "./components/BrokerPanel.tsx";
import { CartasMortas } from "./components/CartasMortas.tsx";
import { PedidoForm } from "./components/PedidoForm.tsx";
import { PedidoHistorico } from "./components/PedidoHistorico.tsx";
import { PedidosList } from "./components/PedidosList.tsx";
import { PlataformaPanel } from "./components/PlataformaPanel.tsx";
import { usePlatformHistory } from "./platformHistory.ts";
import { usePolling } from "./usePolling.ts";

export const INTERVALO_MS = 2000;

/** The page never asks a service it was not given: the RabbitMQ panel's loader without one. */
const NO_BROKER = () => Promise.reject(new Error("nenhuma edição broker configurada"));

/** The event-log edition's page: the form and the orders on the left, the platform on the right. */
export function App({ apiUrl, brokerUrl = null }: { apiUrl: string; brokerUrl?: string | null }) {
  // Every order the API lists (at most 5,000): the list shows them a page at a time.
  const carregarPedidos = useCallback(
    () => fetchJson<Pedido[]>(`${apiUrl}/pedidos?limite=5000`),
    [apiUrl],
  );
  const carregarPlataforma = useCallback(
    () => fetchJson<Plataforma>(`${apiUrl}/plataforma`),
    [apiUrl],
  );
  const pedidos = usePolling(carregarPedidos, INTERVALO_MS, "pedidos");
  const plataforma = usePolling(carregarPlataforma, INTERVALO_MS);
  const historia = usePlatformHistory(plataforma.data);
  const carregarBroker = useCallback(
    () => (brokerUrl ? fetchJson<PlataformaBroker>(`${brokerUrl}/plataforma`) : NO_BROKER()),
    [brokerUrl],
  );
  const broker = usePolling(carregarBroker, brokerUrl ? INTERVALO_MS : 3_600_000);
  const [aberto, setAberto] = useState<number | null>(null);
  const [cartasDe, setCartasDe] = useState<string | null>(null);
  return (
    <>
      <header>
        <h1>Loja orientada a eventos</h1>
        <p>
          Os pedidos são publicados no Kafka; o pagamento decide cerca de 3 s depois. A página
          consulta a API de pedidos ({apiUrl}) a cada 2 s.
        </p>
      </header>
      <main>
        <div className="coluna">
          <PedidoForm apiUrl={apiUrl} onCreated={pedidos.refresh} />
          {aberto !== null && (
            <PedidoHistorico apiUrl={apiUrl} pedidoId={aberto} onClose={() => setAberto(null)} />
          )}
          <PedidosList
            pedidos={pedidos.data}
            error={pedidos.error}
            updatedAt={pedidos.updatedAt}
            onOpenPedido={setAberto}
          />
        </div>
        <div className="coluna">
          <PlataformaPanel
            plataforma={plataforma.data}
            error={plataforma.error}
            updatedAt={plataforma.updatedAt}
            historia={historia}
            onLetters={setCartasDe}
          />
          {cartasDe && (
            <CartasMortas apiUrl={apiUrl} topico={cartasDe} onFechar={() => setCartasDe(null)} />
          )}
          {brokerUrl && <BrokerPanel plataforma={broker.data} error={broker.error} />}
        </div>
      </main>
    </>
  );
}
