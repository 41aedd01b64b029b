import type { Pedido, Plataforma, PlataformaBroker } from "@shop/contracts";
import { useCallback, useState } from "react";
import { buscarJson } from "./api.ts";
import { BrokerPanel } from "./components/BrokerPanel.tsx";
import { PedidoForm } from "./components/PedidoForm.tsx";
import { PedidoHistorico } from "./components/PedidoHistorico.tsx";
import { PedidosList } from "./components/PedidosList.tsx";
import { PlataformaPanel } from "./components/PlataformaPanel.tsx";
import { usePolling } from "./usePolling.ts";

export const INTERVALO_MS = 2000;

/** The page never asks a service it was not given: the RabbitMQ panel's loader without one. */
const NO_BROKER = () => Promise.reject(new Error("no broker edition configured"));

export function App({ apiUrl, brokerUrl = null }: { apiUrl: string; brokerUrl?: string | null }) {
  const carregarPedidos = useCallback(() => buscarJson<Pedido[]>(`${apiUrl}/pedidos`), [apiUrl]);
  const carregarPlataforma = useCallback(
    () => buscarJson<Plataforma>(`${apiUrl}/plataforma`),
    [apiUrl],
  );
  const pedidos = usePolling(carregarPedidos, INTERVALO_MS);
  const plataforma = usePolling(carregarPlataforma, INTERVALO_MS);
  const carregarBroker = useCallback(
    () => (brokerUrl ? buscarJson<PlataformaBroker>(`${brokerUrl}/plataforma`) : NO_BROKER()),
    [brokerUrl],
  );
  const broker = usePolling(carregarBroker, brokerUrl ? INTERVALO_MS : 3_600_000);
  const [aberto, setAberto] = useState<number | null>(null);
  return (
    <>
      <header>
        <h1>Loja orientada a eventos</h1>
        <p>
          Orders are published to Kafka; payments decide about 3 s later. This page polls the orders
          API every 2 s ({apiUrl}).
        </p>
      </header>
      <main>
        <PedidoForm apiUrl={apiUrl} onCriado={pedidos.refresh} />
        <PedidosList
          pedidos={pedidos.data}
          error={pedidos.error}
          updatedAt={pedidos.updatedAt}
          onAbrir={setAberto}
        />
        {aberto !== null && (
          <PedidoHistorico apiUrl={apiUrl} pedidoId={aberto} onFechar={() => setAberto(null)} />
        )}
        <PlataformaPanel plataforma={plataforma.data} error={plataforma.error} />
        {brokerUrl && <BrokerPanel plataforma={broker.data} error={broker.error} />}
      </main>
    </>
  );
}
