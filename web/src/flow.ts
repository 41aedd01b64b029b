import type { Historico, HistoricoBroker, Plataforma, PlataformaBroker } from "@shop/contracts";
import { type Holders, holdersOf, lagPerGroup } from "./platformHistory.ts";

/**
 * The picture of the flow (issue 56), as data: what components/FlowPicture.tsx draws, read
 * from the answers the page already polls (GET /plataforma, an order's timeline), never
 * assumed. Pure functions, so the unit tests hold them to those answers.
 */

/** The spec's names, before the run's prefix (KAFKA_PREFIXO, set by the tests). */
export const TOPIC = { criados: "pedidos-criados", resultados: "pagamentos-resultados" } as const;
export const GROUP = { pagamentos: "pagamentos", pedidosApi: "pedidos-api" } as const;

/** The run's prefix: what comes before "pedidos-criados" in its topic's name ("" in the shop). */
export function prefixOf(p: Plataforma): string {
  const criados = p.topicos.find((t) => t.topic.endsWith(TOPIC.criados));
  return criados ? criados.topic.slice(0, -TOPIC.criados.length) : "";
}

/** A topic's or group's name as the spec has it, without the run's prefix. */
export const shortName = (name: string, prefix: string) =>
  prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;

export interface FlowPartition {
  partition: number;
  endOffset: number;
  /** The broker leading it; -1: none (the partition is offline). */
  leader: number;
  underReplicated: boolean;
  /** The member of the hop's group holding it now; null: nobody (a rebalance, no member). */
  holder: string | null;
  /** The hop's group's committed offset there (null: none yet) and its lag. */
  committed: number | null;
  lag: number;
}

/** One topic and the group that reads it: the partitions drawn to the members holding them. */
export interface Hop {
  topic: string;
  group: string;
  /** Kafka's state of the group (Stable, PreparingRebalance...); null: not described. */
  state: string | null;
  members: string[];
  partitions: FlowPartition[];
}

export interface EventLogFlow {
  prefix: string;
  /** The orders API's outbox: events saved and not yet acknowledged by Kafka. */
  outbox: { pending: number; oldestMs: number } | null;
  criados: Hop;
  resultados: Hop;
  /** Every other group reading the shop's topics (analytics, a replay's auditoria). */
  readers: { group: string; lag: number; members: number; state: string }[];
  deadLetters: { topic: string; source: string; letters: number }[];
  /** The brokers holding the shop's partitions, up or not, and how many partitions each leads. */
  brokers: { nodeId: number; up: boolean; leads: number }[];
}

function hopOf(p: Plataforma, all: Holders, prefix: string, topic: string, group: string): Hop {
  const fullTopic = prefix + topic;
  const fullGroup = prefix + group;
  const described = p.grupos.find((g) => g.grupo === fullGroup);
  const holders = all.get(fullGroup)?.get(fullTopic);
  const partitions = p.topicos.find((t) => t.topic === fullTopic)?.particoes ?? [];
  return {
    topic,
    group,
    state: described?.estado ?? null,
    members: [...new Set(holders?.values() ?? [])].sort(),
    partitions: partitions.map((x) => {
      const read = x.grupos.find((g) => g.grupo === fullGroup);
      return {
        partition: x.partition,
        endOffset: x.endOffset,
        leader: x.leader,
        underReplicated: x.isr.length < x.replicas.length,
        holder: holders?.get(x.partition) ?? null,
        committed: read?.committedOffset ?? null,
        lag: read?.lag ?? x.endOffset,
      };
    }),
  };
}

/**
 * Every node that is up or holds a replica of the shop's partitions, whether it is up, and
 * how many partitions it leads: a node not among the brokers up is down or fenced. Both
 * come from one answer, so a node down and its partitions under-replicated show in one poll.
 */
export function brokersOf(p: Plataforma): EventLogFlow["brokers"] {
  const up = new Set(p.cluster?.brokers.map((b) => b.nodeId) ?? []);
  const all = p.topicos.flatMap((t) => t.particoes);
  const ids = new Set([...up, ...all.flatMap((x) => x.replicas)]);
  return [...ids]
    .sort((a, b) => a - b)
    .map((nodeId) => ({
      nodeId,
      up: up.has(nodeId),
      leads: all.filter((x) => x.leader === nodeId).length,
    }));
}

/** Partitions with fewer replicas in sync than they have. */
export const underReplicatedCount = (p: Plataforma) =>
  p.topicos.flatMap((t) => t.particoes).filter((x) => x.isr.length < x.replicas.length).length;

export function eventLogFlow(p: Plataforma): EventLogFlow {
  const prefix = prefixOf(p);
  const known = new Set<string>([GROUP.pagamentos, GROUP.pedidosApi]);
  const lag = lagPerGroup(p);
  const holders = holdersOf(p);
  return {
    prefix,
    outbox: p.outbox ? { pending: p.outbox.pendentes, oldestMs: p.outbox.idadeMaisAntigoMs } : null,
    criados: hopOf(p, holders, prefix, TOPIC.criados, GROUP.pagamentos),
    resultados: hopOf(p, holders, prefix, TOPIC.resultados, GROUP.pedidosApi),
    readers: p.grupos
      .filter((g) => !known.has(shortName(g.grupo, prefix)))
      .map((g) => ({
        group: shortName(g.grupo, prefix),
        lag: lag.get(g.grupo) ?? 0,
        members: g.membros.length,
        state: g.estado,
      })),
    deadLetters: (p.mortas ?? []).map((m) => ({
      topic: shortName(m.topic, prefix),
      source: shortName(m.origem, prefix),
      letters: m.cartas,
    })),
    brokers: brokersOf(p),
  };
}

// --- An order's life: where it is, and its three confirmations --------------------------

/** One of the three confirmations of a request (the seed's table: what each one proves). */
export interface Confirmation {
  name: string;
  proves: string;
  done: boolean;
  detail: string | null;
}

export interface OrderMarks {
  pedidoId: number | string;
  /** Where the request is now, in a sentence (pt-BR: the page's language). */
  where: string;
  /** Event-log: the record's place in pedidos-criados, once Kafka acknowledged it. */
  partition: number | null;
  offset: number | null;
  /** The payments instance that decided it (event-log) or is deciding it. */
  decidedBy: string | null;
  confirmations: Confirmation[];
}

const stepOf = (h: Historico, etapa: string) => h.etapas.find((e) => e.etapa === etapa);
/** A timeline's number: Kafka's offsets come as text ("41"), partitions as numbers. */
const numberOr = (v: unknown) =>
  typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : null;

/** The event-log edition: 201, Kafka's acks=all, and the payments group's offset commit. */
export function eventLogMarks(h: Historico, flow: EventLogFlow): OrderMarks {
  const confirmed = stepOf(h, "evento-confirmado");
  const decided = stepOf(h, "decidido");
  const applied = stepOf(h, "resultado-aplicado");
  const partition = numberOr(confirmed?.detalhes.particao);
  const offset = numberOr(confirmed?.detalhes.offset);
  const at = flow.criados.partitions.find((x) => x.partition === partition);
  const committed = at?.committed ?? null;
  const passed = offset !== null && committed !== null && committed > offset;
  const decidedBy = decided ? String(decided.detalhes.instancia) : (at?.holder ?? null);
  const place = `partição ${partition}, offset ${offset} de ${TOPIC.criados}`;
  const where = applied
    ? `resultado aplicado: ${String(applied.detalhes.status)} (decidido por ${decidedBy})`
    : decided
      ? `decidido por ${decidedBy}; o resultado ainda não foi aplicado`
      : confirmed
        ? `na ${place}${decidedBy ? `, com ${decidedBy} decidindo` : ", esperando um membro do grupo"}`
        : stepOf(h, "criado")
          ? "salvo com o seu evento na outbox, esperando o Kafka"
          : "ainda sem histórico";
  return {
    pedidoId: h.pedidoId,
    where,
    partition,
    offset,
    decidedBy,
    confirmations: [
      {
        name: "201",
        proves: "o pedido e o seu evento estão no banco (outbox), na mesma transação",
        done: Boolean(stepOf(h, "criado")),
        detail: null,
      },
      {
        name: "acks=all",
        proves: "o Kafka gravou o evento em todas as réplicas em sincronia",
        done: Boolean(confirmed),
        detail: confirmed ? place : null,
      },
      {
        name: "commit do offset",
        proves: `o grupo ${GROUP.pagamentos} não vai ler este registro de novo`,
        done: passed,
        detail: committed !== null && partition !== null ? `offset confirmado ${committed}` : null,
      },
    ],
  };
}

/** The broker edition: 202, the publisher confirm, and payments' ack of the request. */
export function brokerMarks(h: HistoricoBroker): OrderMarks {
  const latest = h.solicitacoes.at(-1);
  const has = (etapa: string) => Boolean(latest?.etapas.some((e) => e.etapa === etapa));
  const decided = latest?.etapas.find((e) => e.etapa === "decisao-guardada");
  const where = !latest
    ? "nenhuma solicitação de pagamento ainda"
    : has("resultado-aplicado")
      ? "concluída: o resultado foi aplicado ao pedido"
      : decided
        ? "decidida pelo pagamento; o resultado ainda não foi aplicado"
        : has("publicacao-confirmada")
          ? "na fila de solicitações, esperando o pagamento"
          : "aceita (202) e guardada, esperando a confirmação do RabbitMQ";
  return {
    pedidoId: h.pedidoId,
    where,
    partition: null,
    offset: null,
    decidedBy: null,
    confirmations: [
      {
        name: "202",
        proves: "a solicitação está guardada no banco de pedidos",
        done: has("registro-guardado"),
        detail: null,
      },
      {
        name: "confirmação do publicador",
        proves: "o RabbitMQ roteou e guardou a mensagem na fila (publisher confirm)",
        done: has("publicacao-confirmada"),
        detail: null,
      },
      {
        name: "ack do consumidor",
        proves: "o pagamento guardou a decisão antes de confirmar a entrega (ack)",
        done: Boolean(decided),
        detail: null,
      },
    ],
  };
}

// --- The broker edition ------------------------------------------------------------------

export interface BrokerQueue {
  name: string;
  type: string;
  leader: string | null;
  members: string[];
  online: string[];
  messages: number | null;
  ready: number | null;
  unacked: number | null;
  consumers: number | null;
  /** A dead-letter queue (`.erros`). */
  errors: boolean;
  /** The exchanges bound to it, as `exchange (type) ─key→`, read from RabbitMQ. */
  routedFrom: { exchange: string; type: string; key: string }[];
  /** Where RabbitMQ dead-letters its messages (its .erros queue), or null. */
  deadLettersTo: string | null;
  /** How many failed deliveries send a message there (x-delivery-limit), or null. */
  deliveryLimit: number | null;
}

export interface BrokerFlow {
  nodes: { name: string; up: boolean; leads: number }[];
  queues: BrokerQueue[];
}

export function brokerFlow(p: PlataformaBroker): BrokerFlow {
  const queues = p.filas.map((f) => ({
    name: f.nome,
    type: f.tipo,
    leader: f.lider,
    members: f.membros,
    online: f.emLinha,
    messages: f.mensagens,
    ready: f.prontas ?? null,
    unacked: f.semAck ?? null,
    consumers: f.consumidores ?? null,
    errors: f.nome.endsWith(".erros"),
    routedFrom: (f.de ?? []).map((d) => ({ exchange: d.exchange, type: d.tipo, key: d.chave })),
    deadLettersTo: f.cartasMortasPara ?? null,
    deliveryLimit: f.limiteDeEntregas ?? null,
  }));
  return {
    nodes: p.nos.map((n) => ({
      name: n.nome,
      up: n.ativo,
      leads: queues.filter((q) => q.leader === n.nome).length,
    })),
    queues,
  };
}

// --- Members that went silent -------------------------------------------------------------

/** A member Kafka still lists whose process the lab reports not running (killed, stopped, paused). */
export interface SilentMember {
  state: string;
  /** How long ago the page first saw it so. */
  forMs: number;
}

/**
 * The members of a hop that went silent: Kafka keeps a member until its session ends, so a
 * killed or paused instance is drawn, marked, while the group waits. `seen` keeps when the
 * page first saw each one silent, across polls; one back or gone is forgotten.
 */
export function silentMembers(
  members: string[],
  processes: { nome: string; estado: string }[],
  seen: Map<string, number>,
  now: number,
): Map<string, SilentMember> {
  const silent = new Map<string, SilentMember>();
  for (const m of members) {
    const state = processes.find((p) => p.nome === m)?.estado;
    if (state === undefined || state === "rodando") continue;
    const since = seen.get(m) ?? now;
    seen.set(m, since);
    silent.set(m, { state, forMs: now - since });
  }
  for (const m of seen.keys()) if (!silent.has(m)) seen.delete(m);
  return silent;
}
