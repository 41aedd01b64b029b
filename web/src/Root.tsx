import { useEffect, useState } from "react";
import { App } from "./App.tsx";
import { BrokerApp } from "./BrokerApp.tsx";

type Edition = "eventos" | "broker";

/**
 * Which edition answers at the API's URL, from its own OpenAPI document's title: the
 * event-log orders API or the broker edition's orders service. Asked again every 2 s until
 * one answers.
 */
export async function editionAt(apiUrl: string): Promise<Edition> {
  const res = await fetch(`${apiUrl}/openapi.json`);
  const doc = (await res.json()) as { info?: { title?: string } };
  return doc.info?.title?.includes("broker edition") ? "broker" : "eventos";
}

export function Root({ apiUrl, brokerUrl }: { apiUrl: string; brokerUrl: string | null }) {
  const [currentEdition, setEdition] = useState<Edition | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout>;
    const ask = () =>
      editionAt(apiUrl).then(
        (e) => alive && setEdition(e),
        () => {
          if (!alive) return;
          setFailed(true);
          timer = setTimeout(ask, 2000);
        },
      );
    void ask();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [apiUrl]);
  if (currentEdition === "broker") return <BrokerApp apiUrl={apiUrl} />;
  if (currentEdition === "eventos") return <App apiUrl={apiUrl} brokerUrl={brokerUrl} />;
  return (
    <main>
      <p className={failed ? "alerta" : undefined} role="status">
        {failed
          ? `Nenhum serviço de pedidos responde em ${apiUrl}; tentando de novo a cada 2 s.`
          : `Procurando o serviço de pedidos em ${apiUrl}…`}
      </p>
    </main>
  );
}
