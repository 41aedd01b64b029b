import type { Plataforma } from "@shop/contracts";
import { brokersOf, prefixOf, shortName, underReplicatedCount } from "../flow.ts";
import { formatTimeOfDay } from "../format.ts";
import { holdersOf, instanciaOf, type PlatformHistory, WINDOW_MS } from "../platformHistory.ts";
import { Breakable } from "./Breakable.tsx";
import { ScrollArea } from "./ScrollArea.tsx";

/** Colours dark enough for white text. */
export const COLOURS = ["#0b57d0", "#7b2cbf", "#b3261e", "#0b6e35", "#8f4f00", "#00677f"];

/** One colour per instance on the page: by the order of their names, so the same each poll. */
export function coloursOf(plataforma: Plataforma): Map<string, string> {
  const groupNames = [
    ...new Set(plataforma.grupos.flatMap((g) => g.membros.map((m) => instanciaOf(m.clientId)))),
  ].sort();
  return new Map(groupNames.map((n, i) => [n, COLOURS[i % COLOURS.length] as string]));
}

/** Kafka's names for a group's state, in the page's language. */
const STATE_LABEL: Record<string, string> = {
  Stable: "estável",
  Empty: "sem membros",
  Dead: "sem membros",
  PreparingRebalance: "preparando rebalanceamento",
  CompletingRebalance: "concluindo rebalanceamento",
};
const stateLabel = (s: string) => STATE_LABEL[s] ?? s;

/** A group's lag over the last minutes, as a small line. */
function LagChart({ lagPoints }: { lagPoints: { t: number; lag: number }[] }) {
  const [w, h] = [80, 24];
  const max = Math.max(1, ...lagPoints.map((p) => p.lag));
  const now = lagPoints[lagPoints.length - 1]?.t ?? 0;
  // The width spans the points kept so far (20 s at least, the window at most): over the
  // whole 5 min from the first poll, the first minutes were a dot at the right edge.
  const span = Math.min(WINDOW_MS, Math.max(20_000, now - (lagPoints[0]?.t ?? now)));
  const y = (lag: number) => (h - 2 - ((h - 4) * lag) / max).toFixed(1);
  const first = lagPoints[0];
  const xy = [
    // A line from the left edge at the first value, so that one poll draws a line too.
    ...(first ? [`0,${y(first.lag)}`] : []),
    ...lagPoints.map((p) => `${Math.max(0, w * (1 - (now - p.t) / span)).toFixed(1)},${y(p.lag)}`),
  ].join(" ");
  const latest = lagPoints[lagPoints.length - 1]?.lag ?? 0;
  return (
    <svg
      className="grafico"
      width={w}
      height={h}
      role="img"
      aria-label={`lag nos últimos ${WINDOW_MS / 60_000} minutos: máximo ${max}, agora ${latest}`}
    >
      <polyline points={xy} fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

type Poll = { plataforma: Plataforma };

/** Which member of each group holds each partition, in the member's colour. */
function HoldersOfPartitions({ plataforma }: Poll) {
  const owners = holdersOf(plataforma);
  const colours = coloursOf(plataforma);
  return (
    <>
      <h3>Quem lê cada partição</h3>
      {plataforma.grupos
        .filter((g) => g.membros.length > 0)
        .map((g) => (
          <div key={g.grupo} className="atribuicao" data-grupo={g.grupo}>
            <p>
              <strong>{g.grupo}</strong> <small>({stateLabel(g.estado)})</small>
            </p>
            {[...(owners.get(g.grupo)?.entries() ?? [])].map(([topic, byPartition]) => {
              const particoes =
                plataforma.topicos
                  .find((t) => t.topic === topic)
                  ?.particoes.map((p) => p.partition) ?? [];
              return (
                <div key={topic} className="particoes">
                  <span className="topico">{topic}</span>
                  {particoes.map((p) => {
                    const owner = byPartition.get(p);
                    return (
                      <span
                        key={p}
                        className="particao"
                        data-particao={p}
                        data-dono={owner ?? ""}
                        style={
                          owner ? { background: colours.get(owner), color: "#fff" } : undefined
                        }
                      >
                        P{p} {owner ?? "sem dono"}
                      </span>
                    );
                  })}
                </div>
              );
            })}
          </div>
        ))}
      {plataforma.grupos.every((g) => g.membros.length === 0) && (
        <p>Nenhum grupo tem membros ativos agora.</p>
      )}
    </>
  );
}

/** The rebalances seen since the page opened. */
function Rebalances({ history }: { history: PlatformHistory }) {
  return (
    <>
      <h3>Rebalanceamentos</h3>
      {history.events.length === 0 ? (
        <p className="discreto">Nenhum desde que a página abriu.</p>
      ) : (
        <ul className="eventos" data-testid="rebalanceamentos" aria-live="polite">
          {history.events.map((e) => (
            <li key={e.id}>{e.text}</li>
          ))}
        </ul>
      )}
    </>
  );
}

/** Each consumer group: its lag now and over the window, its state and its members. */
function GroupsTable({ plataforma, history }: Poll & { history: PlatformHistory }) {
  const lagNow = (grupo: string) => history.lag.get(grupo)?.at(-1)?.lag;
  const prefix = prefixOf(plataforma);
  return (
    <ScrollArea label="Grupos de consumidores">
      <table data-testid="grupos" className="empilha">
        <caption>Grupos de consumidores com offsets nos tópicos da loja</caption>
        <thead>
          <tr>
            {/* The lag beside the group's name: what a person comes to see, in view
                      without scrolling sideways (issue 34). */}
            <th scope="col">Grupo</th>
            <th scope="col">Lag</th>
            <th scope="col">Lag (até {WINDOW_MS / 60_000} min)</th>
            <th scope="col">Estado</th>
            <th scope="col">Membros</th>
          </tr>
        </thead>
        <tbody>
          {plataforma.grupos.map((g) => (
            <tr key={g.grupo} data-grupo={g.grupo}>
              <td className="grupo" data-label="Grupo" title={g.grupo}>
                <Breakable text={shortName(g.grupo, prefix)} />
              </td>
              <td className="num" data-label="Lag">
                <span className={(lagNow(g.grupo) ?? 0) > 0 ? "lag" : undefined}>
                  {lagNow(g.grupo) ?? "—"}
                </span>
              </td>
              <td data-label={`Lag (até ${WINDOW_MS / 60_000} min)`}>
                <LagChart lagPoints={history.lag.get(g.grupo) ?? []} />
              </td>
              <td data-label="Estado">{stateLabel(g.estado)}</td>
              <td data-label="Membros">
                {g.membros.length === 0
                  ? "nenhum"
                  : g.membros.map((m) => (
                      <span key={m.memberId} className="membro" data-cliente={m.clientId}>
                        {instanciaOf(m.clientId)}{" "}
                      </span>
                    ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollArea>
  );
}

/** The outbox's events waiting for Kafka, and the ones Kafka refused for good. */
function OutboxNote({ plataforma }: Poll) {
  return (
    <>
      {plataforma.outbox && (
        <p data-testid="outbox">
          Outbox: <strong>{plataforma.outbox.pendentes}</strong>{" "}
          {plataforma.outbox.pendentes === 1 ? "evento esperando" : "eventos esperando"} o Kafka
          {plataforma.outbox.pendentes > 0 &&
            ` (o mais antigo há ${Math.round(plataforma.outbox.idadeMaisAntigoMs / 1000)} s)`}
        </p>
      )}
      {plataforma.outbox && plataforma.outbox.postosDeLado.length > 0 && (
        <div className="erro" data-testid="outbox-postos-de-lado">
          <p>
            Postos de lado: <strong>{plataforma.outbox.postosDeLado.length}</strong> evento(s) que o
            Kafka recusou de vez; os pedidos seguintes seguiram.
          </p>
          <ul>
            {plataforma.outbox.postosDeLado.map((p) => (
              <li key={p.pedidoId}>
                pedido #{p.pedidoId}: {p.motivo}
              </li>
            ))}
          </ul>
        </div>
      )}
    </>
  );
}

/** Each dead-letter topic's letters, a button to read them when there are. */
function DeadLetterCounts({
  plataforma,
  onLetters,
}: Poll & { onLetters?: (topic: string) => void }) {
  return (
    <>
      {plataforma.mortas && (
        <ul className="mortas" data-testid="mortas">
          {plataforma.mortas.map((m) => (
            <li key={m.topic}>
              Cartas mortas de {m.origem}:{" "}
              {m.cartas > 0 && onLetters ? (
                <button type="button" className="link" onClick={() => onLetters(m.topic)}>
                  <strong className="lag">{m.cartas}</strong> em {m.topic}
                </button>
              ) : (
                <>
                  <strong className={m.cartas > 0 ? "lag" : undefined}>{m.cartas}</strong> em{" "}
                  {m.topic}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The brokers up, and those down with the partitions left under-replicated (flow.ts reads both). */
function BrokersUp({ plataforma }: Poll) {
  const down = brokersOf(plataforma)
    .filter((b) => !b.up)
    .map((b) => b.nodeId);
  return (
    <>
      {plataforma.cluster && (
        <p data-testid="brokers">
          {/* No broker is named controller: in KRaft the metadata answer's controller id
                  is any live broker, and on a cluster with dedicated controllers none of the
                  brokers is one (issue 47). */}
          Brokers no ar:{" "}
          {plataforma.cluster.brokers.map((b) => (
            <span key={b.nodeId} className="broker">
              {b.nodeId}{" "}
            </span>
          ))}
          {down.length > 0 && (
            <span className="alerta" data-testid="brokers-fora">
              {" "}
              Fora do ar: {down.join(", ")} ({underReplicatedCount(plataforma)} partições
              sub-replicadas)
            </span>
          )}
        </p>
      )}
    </>
  );
}

/** One partition's row: its leader (or none), replicas in sync, end, and each group's offset and lag. */
function PartitionRow({
  topic,
  p,
  prefix,
}: {
  topic: string;
  p: Plataforma["topicos"][number]["particoes"][number];
  prefix: string;
}) {
  return (
    <tr>
      <td className="num" data-label="Partição">
        {p.partition}
      </td>
      <td className="num" data-label="Líder" data-testid={`lider-${topic}-${p.partition}`}>
        {p.leader >= 0 ? p.leader : <span className="alerta">sem líder: partição fora do ar</span>}
      </td>
      <td data-label="Réplicas / em sincronia" data-testid={`isr-${topic}-${p.partition}`}>
        [{p.replicas.join(", ")}] / [{p.isr.join(", ")}]
        {p.isr.length < p.replicas.length && <span className="lag"> sub-replicada</span>}
      </td>
      <td className="num" data-label="Fim">
        {p.endOffset}
      </td>
      {p.grupos.map((g) => (
        <td
          className="num"
          key={g.grupo}
          data-label={`${shortName(g.grupo, prefix)}: offset / lag`}
        >
          {g.committedOffset ?? "—"} /{" "}
          <span className={g.lag > 0 ? "lag" : undefined}>{g.lag}</span>
        </td>
      ))}
    </tr>
  );
}

/** One topic's partitions: leader, replicas in sync, end offset, and each group's offset and lag. */
function PartitionsTable({ t, prefix }: { t: Plataforma["topicos"][number]; prefix: string }) {
  const grupos = t.particoes[0]?.grupos.map((g) => g.grupo) ?? [];
  return (
    <ScrollArea key={t.topic} label={`Partições de ${t.topic}`}>
      <table className="empilha">
        <caption title={t.topic}>{shortName(t.topic, prefix)}</caption>
        <thead>
          <tr>
            <th scope="col">Partição</th>
            <th scope="col">Líder</th>
            <th scope="col">Réplicas / em sincronia</th>
            <th scope="col">Fim</th>
            {grupos.map((g) => (
              <th scope="col" key={g} className="grupo" title={g}>
                {shortName(g, prefix)}: offset / lag
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {t.particoes.map((p) => (
            <PartitionRow key={p.partition} topic={t.topic} p={p} prefix={prefix} />
          ))}
        </tbody>
      </table>
    </ScrollArea>
  );
}

export function PlataformaPanel({
  plataforma,
  error,
  updatedAt = null,
  history = { lag: new Map(), events: [] },
  onLetters,
}: {
  plataforma: Plataforma | null;
  error: string | null;
  updatedAt?: Date | null;
  history?: PlatformHistory;
  /** Opens a dead-letter topic's letters. */
  onLetters?: (topic: string) => void;
}) {
  const prefix = plataforma ? prefixOf(plataforma) : "";
  return (
    <section className="card plataforma" aria-labelledby="plataforma-titulo">
      <h2 id="plataforma-titulo">
        Plataforma (Kafka) {updatedAt && <small>lida às {formatTimeOfDay(updatedAt)}</small>}
      </h2>
      {error && (
        <p className="alerta" role="alert">
          Dados da plataforma indisponíveis ({error})
          {updatedAt ? `; mostrando os de ${formatTimeOfDay(updatedAt)}.` : "."}
        </p>
      )}

      {plataforma && (
        <>
          <HoldersOfPartitions plataforma={plataforma} />
          <Rebalances history={history} />
          <GroupsTable plataforma={plataforma} history={history} />
          <OutboxNote plataforma={plataforma} />
          <DeadLetterCounts plataforma={plataforma} onLetters={onLetters} />
          <BrokersUp plataforma={plataforma} />
          {plataforma.topicos.map((t) => (
            <PartitionsTable key={t.topic} t={t} prefix={prefix} />
          ))}
        </>
      )}
    </section>
  );
}
