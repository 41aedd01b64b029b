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

type Item = { sku: string; quantidade: string; precoUnitario: string };
type Cenario = (typeof CENARIOS)[number];

/** The new order's items, edited in place, one more at a time. */
function NewOrderForm({
  itens,
  setItens,
  onSubmit,
}: {
  itens: Item[];
  setItens: (f: (xs: Item[]) => Item[]) => void;
  onSubmit: (event: FormEvent) => void;
}) {
  const id = useId();
  const changeItem = (i: number, field: keyof Item, valor: string) =>
    setItens((xs) => xs.map((x, j) => (j === i ? { ...x, [field]: valor } : x)));
  return (
    <form className="card" onSubmit={onSubmit} aria-labelledby={`${id}-novo`}>
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
          onClick={() => setItens((xs) => [...xs, { sku: "", quantidade: "1", precoUnitario: "" }])}
        >
          Mais um item
        </button>
        <button type="submit">Criar pedido</button>
      </p>
    </form>
  );
}

interface RequestProps {
  solicitacaoId: string;
  setSolicitacaoId: (key: string) => void;
  cenario: Cenario;
  setCenario: (c: Cenario) => void;
  pay: (cenario: string, description: string) => void;
}

/** The request's key and cenario, and the four ways to send it: the same, again, conflicting, a new key. */
function RequestControls({
  solicitacaoId,
  setSolicitacaoId,
  cenario,
  setCenario,
  pay,
}: RequestProps) {
  const id = useId();
  const opposite = cenario === "APROVAR" ? "RECUSAR" : "APROVAR";
  return (
    <>
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
            onChange={(e) => setCenario(e.target.value as Cenario)}
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
    </>
  );
}

/** The chosen order's status, its payment request's key and cenario, the four ways to send it, and its timeline. */
function PaymentCard(
  props: {
    pedidoId: string | null;
    pedido: PedidoBroker | null;
    historico: HistoricoBroker | null;
  } & RequestProps,
) {
  const { pedidoId, pedido, historico } = props;
  const id = useId();
  return (
    <section className="card" aria-labelledby={`${id}-pagamento`}>
      <h2 id={`${id}-pagamento`}>Pagamento</h2>
      {!pedidoId && <p>Crie um pedido para pedir o seu pagamento.</p>}
      {pedidoId && (
        <>
          <p data-testid="pedido-broker">
            Pedido <code>{pedidoId}</code>:{" "}
            <strong data-status={pedido?.status}>{pedido?.status ?? "…"}</strong>
            {pedido && <> · total {formatMoney(Math.round(pedido.total * 100))}</>}
          </p>
          <RequestControls {...props} />
          <BrokerTimeline historico={historico} />
        </>
      )}
    </section>
  );
}

/** The request's steps, each with the code that did it (codeOfStep.ts). */
function BrokerTimeline({ historico }: { historico: HistoricoBroker | null }) {
  if (!historico) return null;
  return (
    <ol className="historico" aria-label="Histórico do pedido">
      {historico.solicitacoes.flatMap((s) =>
        s.etapas.map((e) => (
          <li key={`${s.solicitacaoId}-${e.etapa}-${e.em}`} data-etapa={e.etapa}>
            <time dateTime={e.em}>{formatTimeOfDay(e.em)}</time>{" "}
            <b>{ETAPA_LABEL[e.etapa] ?? e.etapa}</b> <small>({s.solicitacaoId.slice(0, 8)}…)</small>
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
  );
}

/** The newest answers of the orders service, each with its status and body. */
function Answers({ answers }: { answers: Answer[] }) {
  const id = useId();
  return (
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
  );
}

/** The page's four polls, every POLL_INTERVAL_MS: the orders, the chosen one, its timeline, the queues. */
function useBrokerPolls(apiUrl: string, pedidoId: string | null) {
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

  return { pedidos, pedido, historico, plataforma };
}

const FIRST_ITEMS: Item[] = [{ sku: "CAFE", quantidade: "2", precoUnitario: "18,90" }];

/** The form's items as POST /pedidos takes them (the price typed with a comma). */
const orderBody = (itens: Item[]) => ({
  clienteId: "web",
  itens: itens.map((i) => ({
    sku: i.sku,
    quantidade: Number(i.quantidade),
    precoUnitario: Number(i.precoUnitario.replace(",", ".")),
  })),
});

function BrokerHeader({ apiUrl }: { apiUrl: string }) {
  return (
    <header>
      <h1>Loja com broker (RabbitMQ)</h1>
      <p>
        O pedido de pagamento é publicado com confirmação; 202 quer dizer aceito, não pago. A página
        consulta o serviço de pedidos ({apiUrl}) a cada 2 s.
      </p>
    </header>
  );
}

/** The right column: the answers, the picture of the flow and the queues. */
function BrokerSide({
  answers,
  plataforma,
  historico,
}: {
  answers: Answer[];
  plataforma: ReturnType<typeof useBrokerPolls>["plataforma"];
  historico: HistoricoBroker | null;
}) {
  return (
    <div className="coluna">
      <Answers answers={answers} />
      <BrokerFlowPicture plataforma={plataforma.data} historico={historico} />
      <BrokerPanel
        plataforma={plataforma.data}
        error={plataforma.error}
        updatedAt={plataforma.updatedAt}
      />
    </div>
  );
}

/** The newest 12 answers, and how to note one. */
function useAnswers(): [Answer[], (pedido: string, r: { status: number; corpo: unknown }) => void] {
  const [answers, setAnswers] = useState<Answer[]>([]);
  const note = (pedido: string, r: { status: number; corpo: unknown }) =>
    setAnswers((rs) => [{ quando: new Date(), pedido, ...r }, ...rs].slice(0, 12));
  return [answers, note];
}

/**
 * The broker edition's page: create an order with items, ask for its payment with a
 * solicitacaoId (generated, editable) and a cenario, repeat the same request or send a
 * conflicting one, and see each answer (status and body) beside the order's status and
 * timeline; the queues on the right, read through the orders service.
 */
export function BrokerApp({ apiUrl }: { apiUrl: string }) {
  const [itens, setItens] = useState<Item[]>(FIRST_ITEMS);
  const [pedidoId, setPedidoId] = useState<string | null>(null);
  const [solicitacaoId, setSolicitacaoId] = useState<string>(() => crypto.randomUUID());
  const [cenario, setCenario] = useState<Cenario>("APROVAR");
  const [answers, note] = useAnswers();
  const { pedidos, pedido, historico, plataforma } = useBrokerPolls(apiUrl, pedidoId);
  const openOrder = (id: string) => {
    setPedidoId(id);
    setSolicitacaoId(crypto.randomUUID());
  };
  async function createOrder(event: FormEvent) {
    event.preventDefault();
    const r = await post(`${apiUrl}/pedidos`, orderBody(itens));
    note("POST /pedidos", r);
    if (r.status === 201) {
      openOrder((r.corpo as PedidoBroker).id);
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

  return (
    <>
      <BrokerHeader apiUrl={apiUrl} />
      <main>
        <div className="coluna">
          <NewOrderForm itens={itens} setItens={setItens} onSubmit={createOrder} />
          <PaymentCard
            pedidoId={pedidoId}
            pedido={pedido.data}
            historico={historico.data}
            solicitacaoId={solicitacaoId}
            setSolicitacaoId={setSolicitacaoId}
            cenario={cenario}
            setCenario={setCenario}
            pay={pay}
          />
          {LAB_URL && <Laboratorio labUrl={LAB_URL} />}
          <PedidosBrokerList
            pedidos={pedidos.data}
            error={pedidos.error}
            open={pedidoId}
            onOpen={openOrder}
          />
        </div>
        <BrokerSide answers={answers} plataforma={plataforma} historico={historico.data} />
      </main>
    </>
  );
}
