import type { HistoricoBroker, PlataformaBroker } from "@shop/contracts";
import { type FormEvent, useCallback, useId, useState } from "react";
import { POLL_INTERVAL_MS } from "./App.tsx";
import { fetchJson } from "./api.ts";
import { BROKER_STEPS, describeCode } from "./codeOfStep.ts";
import { BrokerFlowPicture } from "./components/BrokerFlowPicture.tsx";
import { BrokerPanel } from "./components/BrokerPanel.tsx";
import { Laboratorio } from "./components/Laboratorio.tsx";
import { type PedidoBrokerSummary, PedidosBrokerList } from "./components/PedidosBrokerList.tsx";
import { formatMoney, formatTimeOfDay } from "./format.ts";
import { LAB_URL } from "./lab.ts";
import { usePolling } from "./usePolling.ts";

interface PedidoBroker {
  id: string;
  clienteId: string;
  status: "ABERTO" | "EM_PAGAMENTO" | "PAGO";
  total: number;
  itens: { sku: string; quantidade: number; precoUnitario: number }[];
}

/** One exchange with the orders service, as the page shows it: what was sent, what came back. */
interface Answer {
  quando: Date;
  pedido: string;
  status: number;
  corpo: unknown;
}

async function post(url: string, body: unknown): Promise<{ status: number; corpo: unknown }> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, corpo: await res.json().catch(() => null) };
  } catch {
    return { status: 0, corpo: { mensagem: `sem resposta de ${url}` } };
  }
}

const ETAPA_LABEL: Record<string, string> = {
  "registro-guardado": "Solicitação guardada (PENDENTE)",
  "publicacao-confirmada": "Publicação confirmada pelo RabbitMQ",
  "decisao-guardada": "Decisão guardada pelo pagamento",
  "resultado-aplicado": "Resultado aplicado",
};

const CENARIOS = ["APROVAR", "RECUSAR"] as const;

/**
 * The broker edition's page: create an order with items, ask for its payment with a
 * solicitacaoId (generated, editable) and a cenario, repeat the same request or send a
 * conflicting one, and see each answer (status and body) beside the order's status and
 * timeline; the queues on the right, read through the orders service.
 */
export function BrokerApp({ apiUrl }: { apiUrl: string }) {
  const id = useId();
  const [itens, setItens] = useState([{ sku: "CAFE", quantidade: "2", precoUnitario: "18,90" }]);
  const [pedidoId, setPedidoId] = useState<string | null>(null);
  const [solicitacaoId, setSolicitacaoId] = useState<string>(() => crypto.randomUUID());
  const [cenario, setCenario] = useState<(typeof CENARIOS)[number]>("APROVAR");
  const [answers, setAnswers] = useState<Answer[]>([]);

  const loadPedido = useCallback(
    () =>
      pedidoId ? fetchJson<PedidoBroker>(`${apiUrl}/pedidos/${pedidoId}`) : Promise.resolve(null),
    [apiUrl, pedidoId],
  );
  const loadHistorico = useCallback(
    () =>
      pedidoId
        ? fetchJson<HistoricoBroker>(`${apiUrl}/pedidos/${pedidoId}/historico`)
        : Promise.resolve(null),
    [apiUrl, pedidoId],
  );
  const carregarPlataforma = useCallback(
    () => fetchJson<PlataformaBroker>(`${apiUrl}/plataforma`),
    [apiUrl],
  );
  // The newest 200 orders, however they were made (this page, curl, the course's client).
  const carregarPedidos = useCallback(
    () => fetchJson<PedidoBrokerSummary[]>(`${apiUrl}/pedidos?limite=200`),
    [apiUrl],
  );
  const pedidos = usePolling(carregarPedidos, POLL_INTERVAL_MS);
  const pedido = usePolling(loadPedido, POLL_INTERVAL_MS);
  const historico = usePolling(loadHistorico, POLL_INTERVAL_MS);
  const plataforma = usePolling(carregarPlataforma, POLL_INTERVAL_MS);

  const note = (pedido: string, r: { status: number; corpo: unknown }) =>
    setAnswers((rs) => [{ quando: new Date(), pedido, ...r }, ...rs].slice(0, 12));

  async function createOrder(event: FormEvent) {
    event.preventDefault();
    const corpo = {
      clienteId: "web",
      itens: itens.map((i) => ({
        sku: i.sku,
        quantidade: Number(i.quantidade),
        precoUnitario: Number(i.precoUnitario.replace(",", ".")),
      })),
    };
    const r = await post(`${apiUrl}/pedidos`, corpo);
    note("POST /pedidos", r);
    if (r.status === 201) {
      setPedidoId((r.corpo as PedidoBroker).id);
      setSolicitacaoId(crypto.randomUUID());
      pedidos.refresh();
    }
  }

  async function pay(cenarioSent: string, description: string) {
    if (!pedidoId) return;
    const r = await post(`${apiUrl}/pedidos/${pedidoId}/pagamentos`, {
      solicitacaoId,
      cenario: cenarioSent,
    });
    note(`${description}: POST /pedidos/…/pagamentos`, r);
    pedido.refresh();
  }

  const changeItem = (i: number, field: "sku" | "quantidade" | "precoUnitario", valor: string) =>
    setItens((xs) => xs.map((x, j) => (j === i ? { ...x, [field]: valor } : x)));
  const opposite = cenario === "APROVAR" ? "RECUSAR" : "APROVAR";

  return (
    <>
      <header>
        <h1>Loja com broker (RabbitMQ)</h1>
        <p>
          O pedido de pagamento é publicado com confirmação; 202 quer dizer aceito, não pago. A
          página consulta o serviço de pedidos ({apiUrl}) a cada 2 s.
        </p>
      </header>
      <main>
        <div className="coluna">
          <form className="card" onSubmit={createOrder} aria-labelledby={`${id}-novo`}>
            <h2 id={`${id}-novo`}>Novo pedido</h2>
            {itens.map((item, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the rows are the form's own, edited in place
              <fieldset key={i} className="campos">
                <legend>Item {i + 1}</legend>
                <div className="campo">
                  <label htmlFor={`${id}-sku-${i}`}>SKU</label>
                  <input
                    id={`${id}-sku-${i}`}
                    value={item.sku}
                    onChange={(e) => changeItem(i, "sku", e.target.value)}
                  />
                </div>
                <div className="campo">
                  <label htmlFor={`${id}-qtd-${i}`}>Quantidade</label>
                  <input
                    id={`${id}-qtd-${i}`}
                    inputMode="numeric"
                    value={item.quantidade}
                    onChange={(e) => changeItem(i, "quantidade", e.target.value)}
                  />
                </div>
                <div className="campo">
                  <label htmlFor={`${id}-preco-${i}`}>Preço unitário (R$)</label>
                  <input
                    id={`${id}-preco-${i}`}
                    inputMode="decimal"
                    value={item.precoUnitario}
                    onChange={(e) => changeItem(i, "precoUnitario", e.target.value)}
                  />
                </div>
              </fieldset>
            ))}
            <p className="paginas">
              <button
                type="button"
                onClick={() =>
                  setItens((xs) => [...xs, { sku: "", quantidade: "1", precoUnitario: "" }])
                }
              >
                Mais um item
              </button>
              <button type="submit">Criar pedido</button>
            </p>
          </form>

          <section className="card" aria-labelledby={`${id}-pagamento`}>
            <h2 id={`${id}-pagamento`}>Pagamento</h2>
            {!pedidoId && <p>Crie um pedido para pedir o seu pagamento.</p>}
            {pedidoId && (
              <>
                <p data-testid="pedido-broker">
                  Pedido <code>{pedidoId}</code>:{" "}
                  <strong data-status={pedido.data?.status}>{pedido.data?.status ?? "…"}</strong>
                  {pedido.data && <> · total {formatMoney(Math.round(pedido.data.total * 100))}</>}
                </p>
                <div className="campos">
                  <div className="campo">
                    <label htmlFor={`${id}-chave`}>solicitacaoId</label>
                    <input
                      id={`${id}-chave`}
                      value={solicitacaoId}
                      onChange={(e) => setSolicitacaoId(e.target.value)}
                    />
                  </div>
                  <div className="campo">
                    <label htmlFor={`${id}-cenario`}>Cenário</label>
                    <select
                      id={`${id}-cenario`}
                      value={cenario}
                      onChange={(e) => setCenario(e.target.value as (typeof CENARIOS)[number])}
                    >
                      {CENARIOS.map((c) => (
                        <option key={c}>{c}</option>
                      ))}
                    </select>
                  </div>
                </div>
                <p className="paginas">
                  <button type="button" onClick={() => pay(cenario, "Solicitar")}>
                    Solicitar pagamento
                  </button>
                  <button type="button" onClick={() => pay(cenario, "Repetir")}>
                    Repetir a mesma
                  </button>
                  <button type="button" onClick={() => pay(opposite, `Conflitante (${opposite})`)}>
                    Enviar conflitante
                  </button>
                  <button type="button" onClick={() => setSolicitacaoId(crypto.randomUUID())}>
                    Nova chave
                  </button>
                </p>
                {historico.data && (
                  <ol className="historico" aria-label="Histórico do pedido">
                    {historico.data.solicitacoes.flatMap((s) =>
                      s.etapas.map((e) => (
                        <li key={`${s.solicitacaoId}-${e.etapa}-${e.em}`} data-etapa={e.etapa}>
                          <time dateTime={e.em}>{formatTimeOfDay(e.em)}</time>{" "}
                          <b>{ETAPA_LABEL[e.etapa] ?? e.etapa}</b>{" "}
                          <small>({s.solicitacaoId.slice(0, 8)}…)</small>
                          {BROKER_STEPS[e.etapa] && (
                            <small className="codigo" data-codigo>
                              {" "}
                              código: <code>{describeCode(BROKER_STEPS[e.etapa])}</code>
                            </small>
                          )}
                        </li>
                      )),
                    )}
                  </ol>
                )}
              </>
            )}
          </section>

          {LAB_URL && <Laboratorio labUrl={LAB_URL} />}
          <PedidosBrokerList
            pedidos={pedidos.data}
            error={pedidos.error}
            open={pedidoId}
            onOpen={(id) => {
              setPedidoId(id);
              setSolicitacaoId(crypto.randomUUID());
            }}
          />
        </div>
        <div className="coluna">
          <section className="card" aria-labelledby={`${id}-respostas`}>
            <h2 id={`${id}-respostas`}>Respostas</h2>
            {answers.length === 0 && <p className="discreto">Nenhuma requisição ainda.</p>}
            {/* The newest answers in a box of their own height, so that the picture of the
                flow below stays in sight at 1280×800 (issue 56). */}
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus, or a keyboard cannot scroll it (WCAG 2.1.1) */}
            <section className="respostas-caixa" tabIndex={0} aria-label="Respostas recebidas">
              <ol className="respostas" aria-live="polite">
                {answers.map((r) => (
                  <li key={r.quando.getTime() + r.pedido} data-http={r.status}>
                    <b>{r.status === 0 ? "sem resposta" : r.status}</b> {r.pedido} às{" "}
                    {formatTimeOfDay(r.quando)}
                    <pre className="resposta">{JSON.stringify(r.corpo, null, 1)}</pre>
                  </li>
                ))}
              </ol>
            </section>
          </section>
          <BrokerFlowPicture plataforma={plataforma.data} historico={historico.data} />
          <BrokerPanel
            plataforma={plataforma.data}
            error={plataforma.error}
            updatedAt={plataforma.updatedAt}
          />
        </div>
      </main>
    </>
  );
}
