import { kafkaNames, PedidoCriado, ResultadoPagamento } from "@shop/contracts";
import { createKafka, groupsLag, withRetries } from "@shop/kafka";
import { escapeControls, type Logger } from "@shop/service";
import type { Admin, Kafka } from "kafkajs";
import {
  aplicarPedidoCriado,
  aplicarResultado,
  criarVisao,
  type Painel,
  painel,
} from "./domain/visao.ts";
import { type LagParticao, painelTexto, type Resumo, type Saida } from "./saida.ts";

export interface AnalyticsOptions {
  brokers: string[];
  prefix: string;
  grupo: string;
  replay: boolean;
  untilCaughtUp: boolean;
  saida: Saida;
  log: Logger;
  /** Ends a follow-mode run (Ctrl-C). */
  signal?: AbortSignal;
  /** Called with the dashboard after each batch (tests watch a follower with it). */
  onPainel?: (p: Painel) => void;
}

/** Replay was asked while the group has active members: Kafka would refuse the reset. */
export class ReplayRecusado extends Error {}

type Posicoes = Map<string, number>; // "topic:partition" -> offset
const tp = (topic: string, partition: number) => `${topic}:${partition}`;

async function fimDasParticoes(admin: Admin, topics: string[]): Promise<Posicoes> {
  const end: Posicoes = new Map();
  for (const topic of topics) {
    for (const p of await withRetries(() => admin.fetchTopicOffsets(topic)))
      end.set(tp(topic, p.partition), Number(p.high));
  }
  return end;
}

async function inicioDasParticoes(admin: Admin, topics: string[]): Promise<Posicoes> {
  const start: Posicoes = new Map();
  for (const topic of topics) {
    for (const p of await withRetries(() => admin.fetchTopicOffsets(topic)))
      start.set(tp(topic, p.partition), Number(p.low));
  }
  return start;
}

async function offsetsDoGrupo(
  admin: Admin,
  groupId: string,
  topics: string[],
): Promise<Map<string, number | null>> {
  const committed = new Map<string, number | null>();
  // A group new to the broker may briefly answer NOT_COORDINATOR while its coordinator loads.
  for (const t of await withRetries(() => admin.fetchOffsets({ groupId, topics }))) {
    for (const p of t.partitions)
      committed.set(tp(t.topic, p.partition), Number(p.offset) >= 0 ? Number(p.offset) : null);
  }
  return committed;
}

async function replay(admin: Admin, groupId: string, topics: string[]): Promise<void> {
  const [group] = (await withRetries(() => admin.describeGroups([groupId]))).groups;
  const members = group?.members ?? [];
  if (members.length > 0) {
    const who = members.map((m) => escapeControls(`${m.clientId} (${m.clientHost})`)).join(", ");
    throw new ReplayRecusado(
      `cannot replay: group ${groupId} has ${members.length} active member(s): ${who}. ` +
        "Kafka only resets the offsets of a group with no active member; stop those readers and try again.",
    );
  }
  for (const topic of topics)
    await withRetries(() => admin.resetOffsets({ groupId, topic, earliest: true }));
}

/**
 * Reads both topics in its own group, from offset 0 when the group has none, and prints one
 * line per record and the dashboard after each batch. Follows forever, or until every
 * partition is read up to the end offsets seen at start (--until-caught-up).
 */
export async function runAnalytics(opts: AnalyticsOptions): Promise<Resumo> {
  const { saida, grupo } = opts;
  const nomes = kafkaNames(opts.prefix);
  const topics = [nomes.topicos.pedidosCriados, nomes.topicos.pagamentosResultados];
  const kafka: Kafka = createKafka(opts.brokers, `analytics-${grupo}`, opts.log);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0)
      throw new Error(
        `topic(s) ${missing.join(", ")} not found: start the orders API first, which creates them`,
      );

    if (opts.replay) {
      await replay(admin, grupo, topics);
      saida.info(
        `replay: the offsets of group ${grupo} are back at the earliest offset; reading everything again`,
      );
    }
    const end = await fimDasParticoes(admin, topics);
    const low = await inicioDasParticoes(admin, topics);
    const committed = await offsetsDoGrupo(admin, grupo, topics);
    const posicao: Posicoes = new Map();
    for (const key of end.keys()) posicao.set(key, committed.get(key) ?? low.get(key) ?? 0);
    const total = [...end].reduce(
      (sum, [key, high]) => sum + Math.max(0, high - (posicao.get(key) ?? 0)),
      0,
    );
    const resumed = [...committed.values()].some((c) => c !== null);
    saida.info(
      `analytics: group ${grupo}, ${total} records to read up to the current end` +
        (resumed && !opts.replay
          ? " (resuming from the group's committed offsets: the view covers only what is read now; --replay rebuilds it from offset 0)"
          : " (from offset 0)"),
    );

    const visao = criarVisao();
    let lidos = 0;
    let invalidos = 0;
    const caughtUp = () => [...end].every(([key, high]) => (posicao.get(key) ?? 0) >= high);

    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    opts.signal?.addEventListener("abort", () => finish(), { once: true });
    if (opts.untilCaughtUp && caughtUp()) finish();

    const consumer = kafka.consumer({
      groupId: grupo,
      maxWaitTimeInMs: 500,
      maxBytesPerPartition: 1024 * 1024,
    });
    let crashed: Error | null = null;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) {
        crashed = payload.error;
        finish();
      }
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics, fromBeginning: true });
      await consumer.run({
        eachBatch: async ({ batch }) => {
          // With --quiet nothing per record or per batch is shown: build none of it (on a
          // replay of a million records the lines and per-batch dashboards were most of
          // the garbage and much of the time).
          const detalhar = !saida.silenciosa;
          const linhas: string[] = [];
          for (const message of batch.messages) {
            const isCriado = batch.topic === nomes.topicos.pedidosCriados;
            const decoded = isCriado
              ? PedidoCriado.decode(message.value)
              : ResultadoPagamento.decode(message.value);
            const where = () =>
              `${batch.topic} partition=${batch.partition} offset=${message.offset}`;
            if (!decoded.ok) {
              invalidos++;
              if (detalhar)
                linhas.push(`${where()} INVALID ${escapeControls(decoded.error.reason)}`);
            } else {
              if (isCriado) aplicarPedidoCriado(visao, decoded.value as PedidoCriado);
              else aplicarResultado(visao, decoded.value as ResultadoPagamento);
              if (detalhar) linhas.push(`${where()} pedido=${decoded.value.pedidoId}`);
            }
            lidos++;
          }
          posicao.set(tp(batch.topic, batch.partition), Number(batch.lastOffset()) + 1);
          if (detalhar || opts.onPainel) {
            const atual = painel(visao);
            if (detalhar) saida.lote(linhas, painelTexto(grupo, atual, invalidos));
            opts.onPainel?.(atual);
          }
          saida.progresso(lidos, total);
          if (opts.untilCaughtUp && caughtUp()) finish();
        },
      });
      await done;
    } finally {
      await consumer.disconnect(); // commits what was read
    }
    if (crashed) throw crashed;
    saida.progresso(lidos, total, true);

    // The lag the platform panel and /metrics report, from the same computation.
    const lag: LagParticao[] = (
      await groupsLag(admin, Object.fromEntries(topics.map((t) => [t, [grupo]])))
    ).flatMap(({ topic, particoes }) =>
      particoes.map((p) => ({
        topic,
        partition: p.partition,
        endOffset: p.endOffset,
        committedOffset: p.grupos[0]?.committedOffset ?? null,
        lag: p.grupos[0]?.lag ?? 0,
      })),
    );
    const resumo: Resumo = { grupo, painel: painel(visao), lidos, invalidos, lag };
    saida.final(resumo);
    return resumo;
  } finally {
    await admin.disconnect();
  }
}
