import { useEffect, useState } from "react";
import { App } from "./App.tsx";
import { BrokerApp } from "./BrokerApp.tsx";

type Edicao = "eventos" | "broker";

/**
 * Which edition answers at the API's URL, from its own OpenAPI document's title: the
 * event-log orders API or the broker edition's orders service. Asked again every 2 s until
 * one answers.
 */
export async function edicaoEm(apiUrl: string): Promise<Edicao> {
  const res = await fetch(`${apiUrl}/openapi.json`);
  const doc = (await res.json()) as { info?: { title?: string } };
  return doc.info?.title?.includes("broker edition") ? "broker" : "eventos";
}

export function Raiz({ apiUrl, brokerUrl }: { apiUrl: string; brokerUrl: string | null }) {
  const [edicao, setEdicao] = useState<Edicao | null>(null);
  const [falhou, setFalhou] = useState(false);
  useEffect(() => {
    let vivo = true;
    let timer: ReturnType<typeof setTimeout>;
    const perguntar = () =>
      edicaoEm(apiUrl).then(
        (e) => vivo && setEdicao(e),
        () => {
          if (!vivo) return;
          setFalhou(true);
          timer = setTimeout(perguntar, 2000);
        },
      );
    void perguntar();
    return () => {
      vivo = false;
      clearTimeout(timer);
    };
  }, [apiUrl]);
  if (edicao === "broker") return <BrokerApp apiUrl={apiUrl} />;
  if (edicao === "eventos") return <App apiUrl={apiUrl} brokerUrl={brokerUrl} />;
  return (
    <main>
      <p className={falhou ? "alerta" : undefined} role="status">
        {falhou
          ? `Nenhum serviço de pedidos responde em ${apiUrl}; tentando de novo a cada 2 s.`
          : `Procurando o serviço de pedidos em ${apiUrl}…`}
      </p>
    </main>
  );
}
