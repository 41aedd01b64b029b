import {
  CONSUMER_SESSION_MS,
  type Historico,
  type LabState,
  type Plataforma,
} from "@shop/contracts";
import { type ReactNode, useCallback, useRef } from "react";
import { fetchJson } from "../api.ts";
import { type CodeRef, describeCode, FLOW_BOXES } from "../codeOfStep.ts";
import {
  type EventLogFlow,
  eventLogFlow,
  eventLogMarks,
  type FlowPartition,
  type Hop,
  type OrderMarks,
  type SilentMember,
  silentMembers,
  TOPIC,
} from "../flow.ts";
import { usePolling } from "../usePolling.ts";
import { COLOURS } from "./PlataformaPanel.tsx";

const ROW = 30;
const WIDTH = 360;

/** A box of the picture: what it is, its figures, and the code that does it. */
export function Stage({
  title,
  code,
  alert = false,
  id,
  children,
}: {
  title: string;
  code: CodeRef[] | undefined;
  alert?: boolean;
  id: string;
  children?: ReactNode;
}) {
  return (
    <div className={alert ? "estacao alerta-borda" : "estacao"} data-estacao={id}>
      <strong>{title}</strong>
      {children}
      <small className="codigo" data-codigo>
        código: <code>{describeCode(code)}</code>
      </small>
    </div>
  );
}

/** The brokers or nodes: each up or down, and how many partitions or queues it leads. */
export function NodesStage({
  title,
  code,
  nodes,
}: {
  title: string;
  code: CodeRef[] | undefined;
  nodes: { name: string; up: boolean; leads: number }[];
}) {
  return (
    <Stage title={title} code={code} id="nos" alert={nodes.some((n) => !n.up)}>
      <ul className="lista-curta nos">
        {nodes.map((n) => (
          <li key={n.name} data-no={n.name} data-no-ar={n.up} className={n.up ? undefined : "lag"}>
            {n.name}: {n.up ? `no ar, lidera ${n.leads}` : "fora do ar"}
          </li>
        ))}
      </ul>
    </Stage>
  );
}

/** One partition's box: its number, end offset and leader, and the order's mark if there. */
function PartitionBox({
  x,
  y,
  p,
  marked,
}: {
  x: number;
  y: number;
  p: FlowPartition;
  marked: boolean;
}) {
  const offline = p.leader < 0;
  return (
    <g data-particao={p.partition} data-fim={p.endOffset} data-lider={p.leader}>
      <rect
        x={x}
        y={y}
        width={150}
        height={ROW - 6}
        rx={4}
        className={offline ? "caixa fora" : "caixa"}
      />
      <text x={x + 6} y={y + 16}>
        P{p.partition} · fim {p.endOffset} · {offline ? "sem líder" : `líder ${p.leader}`}
        {p.underReplicated ? " !" : ""}
      </text>
      {marked && (
        <circle cx={x + 146} cy={y + 12} r={6} className="marca" data-marca-pedido>
          <title>o pedido escolhido está nesta partição</title>
        </circle>
      )}
    </g>
  );
}

/** A member of the group: in its colour, or grey and dashed once its process went silent. */
function MemberBox(props: {
  name: string;
  y: number;
  colour: string;
  marked: boolean;
  silent: SilentMember | undefined;
}) {
  const { name, y, colour, marked, silent } = props;
  const session = CONSUMER_SESSION_MS / 1000;
  return (
    <g data-membro={name} data-silencioso={silent ? silent.state : undefined}>
      <rect
        x={220}
        y={y}
        width={140}
        height={ROW - 6}
        rx={4}
        fill={silent ? "#6b7280" : colour}
        strokeDasharray={silent ? "4 3" : undefined}
        stroke={silent ? "#1b1f24" : undefined}
      />
      <text x={228} y={y + 16} fill="#fff">
        {name}
        {silent ? ` ✖ ${Math.round(silent.forMs / 1000)} s / ${session} s` : ""}
        {marked ? " ◀ pedido" : ""}
      </text>
      {silent && (
        <title>{`${name} ${silent.state}: o grupo o mantém até a sessão (${session} s) expirar`}</title>
      )}
    </g>
  );
}

/** A topic's partitions, each drawn to the member of the group that holds it now. */
export function HopDiagram({
  hop,
  mark,
  silent = new Map(),
}: {
  hop: Hop;
  mark: OrderMarks | null;
  silent?: Map<string, SilentMember>;
}) {
  const rows = Math.max(hop.partitions.length, hop.members.length, 1);
  const height = rows * ROW + 4;
  const memberY = (name: string) => 2 + hop.members.indexOf(name) * ROW;
  const colour = (name: string) => COLOURS[hop.members.indexOf(name) % COLOURS.length];
  return (
    <svg
      className="salto"
      viewBox={`0 0 ${WIDTH} ${height}`}
      role="img"
      aria-label={`${hop.topic}: ${hop.partitions.map((p) => `partição ${p.partition} com ${p.holder ?? "ninguém"}`).join("; ")}`}
      data-topico={hop.topic}
    >
      {hop.partitions.map((p, i) => {
        const y = 2 + i * ROW;
        const marked = mark?.partition === p.partition && hop.topic === TOPIC.criados;
        return (
          <g key={p.partition}>
            {p.holder && (
              <path
                d={`M150 ${y + 12} C 190 ${y + 12}, 190 ${memberY(p.holder) + 12}, 220 ${memberY(p.holder) + 12}`}
                stroke={colour(p.holder)}
                strokeWidth={2}
                fill="none"
                data-seta={`${p.partition}->${p.holder}`}
              />
            )}
            <PartitionBox x={0} y={y} p={p} marked={marked} />
          </g>
        );
      })}
      {hop.members.map((m) => (
        <MemberBox
          key={m}
          name={m}
          y={memberY(m)}
          colour={colour(m) as string}
          marked={mark?.decidedBy === m && hop.topic === TOPIC.criados}
          silent={silent.get(m)}
        />
      ))}
      {hop.members.length === 0 && (
        <text x={220} y={18} className="discreto-svg">
          nenhum membro
        </text>
      )}
    </svg>
  );
}

/** The three confirmations of the chosen request, each named with what it proves. */
export function OrderLife({ marks }: { marks: OrderMarks }) {
  return (
    <div className="vida" data-testid="vida-do-pedido">
      <p className="onde">
        Pedido <strong>#{marks.pedidoId}</strong>: <span data-testid="onde">{marks.where}</span>
      </p>
      <ol className="confirmacoes">
        {marks.confirmations.map((c) => (
          <li key={c.name} data-confirmacao={c.name} data-feita={c.done}>
            <span className={c.done ? "feita" : "pendente"}>{c.done ? "✔" : "…"}</span>{" "}
            <b>{c.name}</b>: {c.proves}
            {c.detail && <small> ({c.detail})</small>}
          </li>
        ))}
      </ol>
    </div>
  );
}

function EventLogStages({
  flow,
  marks,
  silent,
}: {
  flow: EventLogFlow;
  marks: OrderMarks | null;
  silent: Map<string, SilentMember>;
}) {
  const outboxAlert = (flow.outbox?.pending ?? 0) > 0;
  return (
    <div className="fluxo">
      <Stage
        title="API de pedidos"
        code={FLOW_BOXES["event-log:orders-api"]}
        id="api"
        alert={outboxAlert}
      >
        <span data-testid="fluxo-outbox">
          {flow.outbox
            ? `outbox: ${flow.outbox.pending} ${flow.outbox.pending === 1 ? "evento esperando" : "eventos esperando"} o Kafka`
            : "outbox desligada"}
        </span>
      </Stage>
      <Stage
        title={`${flow.criados.topic} → grupo ${flow.criados.group}`}
        code={FLOW_BOXES["event-log:pagamentos"]}
        id="pagamentos"
      >
        <HopDiagram hop={flow.criados} mark={marks} silent={silent} />
        {[...silent].map(([m, x]) => (
          <p key={m} className="alerta" data-testid="membro-silencioso">
            {m} {x.state} há {Math.round(x.forMs / 1000)} s: o Kafka o mantém no grupo até a sessão
            ({CONSUMER_SESSION_MS / 1000} s) expirar; então as partições dele passam para os outros.
          </p>
        ))}
      </Stage>
      <Stage
        title={`${flow.resultados.topic} → grupo ${flow.resultados.group}`}
        code={FLOW_BOXES["event-log:pedidos-api"]}
        id="resultados"
      >
        <HopDiagram hop={flow.resultados} mark={null} />
      </Stage>
      <Readers flow={flow} />
    </div>
  );
}

function Readers({ flow }: { flow: EventLogFlow }) {
  const letters = flow.deadLetters.reduce((n, d) => n + d.letters, 0);
  return (
    <>
      <Stage
        title="Outros leitores (analytics, auditoria)"
        code={FLOW_BOXES["event-log:analytics"]}
        id="leitores"
      >
        {flow.readers.length === 0 ? (
          <span>nenhum grupo ainda</span>
        ) : (
          <ul className="lista-curta">
            {flow.readers.map((r) => (
              <li key={r.group} data-leitor={r.group} data-lag={r.lag}>
                {r.group}: lag <b className={r.lag > 0 ? "lag" : undefined}>{r.lag}</b>, {r.members}{" "}
                membro(s)
              </li>
            ))}
          </ul>
        )}
      </Stage>
      <Stage title="Cartas mortas" code={FLOW_BOXES["event-log:dlq"]} id="dlq" alert={letters > 0}>
        <ul className="lista-curta">
          {flow.deadLetters.map((d) => (
            <li key={d.topic} data-morta={d.topic} data-cartas={d.letters}>
              {d.topic}: <b className={d.letters > 0 ? "lag" : undefined}>{d.letters}</b>
            </li>
          ))}
        </ul>
      </Stage>
      <NodesStage
        title="Brokers Kafka"
        code={FLOW_BOXES["event-log:brokers"]}
        nodes={flow.brokers.map((b) => ({ name: String(b.nodeId), up: b.up, leads: b.leads }))}
      />
    </>
  );
}

/**
 * The event-log edition's picture of the flow, drawn from the platform the page polls and
 * from the chosen order's timeline (the latest by default), read at the same interval.
 */
export function FlowPicture({
  apiUrl,
  plataforma,
  pedidoId,
  processes = [],
  intervalMs = 2000,
}: {
  apiUrl: string;
  plataforma: Plataforma | null;
  pedidoId: number | null;
  /** The lab's processes (npm start only): a member whose process is not running is marked. */
  processes?: LabState["processos"];
  intervalMs?: number;
}) {
  const seen = useRef(new Map<string, number>());
  const load = useCallback(
    () =>
      pedidoId === null
        ? Promise.resolve(null)
        : fetchJson<Historico>(`${apiUrl}/pedidos/${pedidoId}/historico`),
    [apiUrl, pedidoId],
  );
  const historico = usePolling(load, intervalMs);
  const flow = plataforma ? eventLogFlow(plataforma) : null;
  const marks = flow && historico.data ? eventLogMarks(historico.data, flow) : null;
  const silent = flow
    ? silentMembers(flow.criados.members, processes, seen.current, Date.now())
    : new Map<string, SilentMember>();
  return (
    <section className="card" aria-labelledby="fluxo-titulo" data-testid="fluxo">
      <h2 id="fluxo-titulo">O fluxo, agora</h2>
      {!flow && <p className="discreto">Esperando a primeira leitura da plataforma.</p>}
      {flow && marks && <OrderLife marks={marks} />}
      {flow && <EventLogStages flow={flow} marks={marks} silent={silent} />}
    </section>
  );
}
