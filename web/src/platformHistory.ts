import type { Plataforma } from "@shop/contracts";
import { useEffect, useMemo, useRef, useState } from "react";
import { formatTimeOfDay, listParticoes } from "./format.ts";

/** A payments instance's name as people know it: its Kafka client id without `payments-`. */
export const instanciaOf = (clientId: string) => clientId.replace(/^payments-/, "");

/** Who holds each partition now: `grupo` → `topic` → partition → instance. */
export type Holders = Map<string, Map<string, Map<number, string>>>;

export function holdersOf(p: Plataforma): Holders {
  const holders: Holders = new Map();
  for (const g of p.grupos) {
    const byTopic = new Map<string, Map<number, string>>();
    for (const m of g.membros) {
      for (const [topic, ps] of Object.entries(m.particoes)) {
        const t = byTopic.get(topic) ?? new Map<number, string>();
        for (const partition of ps) t.set(partition, instanciaOf(m.clientId));
        byTopic.set(topic, t);
      }
    }
    holders.set(g.grupo, byTopic);
  }
  return holders;
}

const membersOf = (p: Plataforma, grupo: string) =>
  new Set(p.grupos.find((g) => g.grupo === grupo)?.membros.map((m) => instanciaOf(m.clientId)));

/**
 * What changed in each group between two polls, in a sentence a person reads: who joined
 * or left, and which partitions changed hands ("caixa-2 entrou às 11:05:03; partições 1 e
 * 2 mudaram de dono"). Nothing when nothing changed.
 */
export function rebalanceSentences(
  before: Plataforma,
  nowMs: Plataforma,
  polledAt: Date,
): string[] {
  const [holdersBefore, holdersNow] = [holdersOf(before), holdersOf(nowMs)];
  const sentences: string[] = [];
  for (const g of nowMs.grupos) {
    const [wereMembers, areMembers] = [membersOf(before, g.grupo), membersOf(nowMs, g.grupo)];
    const joinedOrLeft = [
      ...[...areMembers].filter((m) => !wereMembers.has(m)).map((m) => `${m} entrou`),
      ...[...wereMembers].filter((m) => !areMembers.has(m)).map((m) => `${m} saiu`),
    ];
    const topics = new Set([
      ...(holdersBefore.get(g.grupo)?.keys() ?? []),
      ...(holdersNow.get(g.grupo)?.keys() ?? []),
    ]);
    const changedHands: string[] = [];
    for (const topic of [...topics].sort()) {
      const [a, b] = [holdersBefore.get(g.grupo)?.get(topic), holdersNow.get(g.grupo)?.get(topic)];
      const ps = [...new Set([...(a?.keys() ?? []), ...(b?.keys() ?? [])])]
        .filter((p) => a?.get(p) !== b?.get(p))
        .sort((x, y) => x - y);
      if (ps.length > 0)
        changedHands.push(
          `${topics.size > 1 ? `${topic}: ` : ""}${listParticoes(ps)} ${ps.length > 1 ? "mudaram" : "mudou"} de dono`,
        );
    }
    if (joinedOrLeft.length === 0 && changedHands.length === 0) continue;
    const opening = joinedOrLeft.length > 0 ? joinedOrLeft.join(", ") : "rebalanceamento";
    sentences.push(
      `${g.grupo}: ${opening} às ${formatTimeOfDay(polledAt)}${changedHands.length ? `; ${changedHands.join("; ")}` : ""}`,
    );
  }
  return sentences;
}

/** Each group's lag summed over its partitions of every topic it reads. */
export function lagPerGroup(p: Plataforma): Map<string, number> {
  const lag = new Map<string, number>();
  for (const t of p.topicos)
    for (const part of t.particoes)
      for (const g of part.grupos) lag.set(g.grupo, (lag.get(g.grupo) ?? 0) + g.lag);
  return lag;
}

/** How far back the lag chart goes. */
export const WINDOW_MS = 5 * 60_000;

export interface PlatformHistory {
  /** Per group, its total lag at each poll of the last WINDOW_MS. */
  lag: Map<string, { t: number; lag: number }[]>;
  /** The latest rebalances, newest first (at most 8), each with an id of its own. */
  events: { id: number; text: string }[];
}

/** What the page keeps of the platform across polls: in the browser only, lost on reload. */
export function usePlatformHistory(plataforma: Plataforma | null): PlatformHistory {
  const previous = useRef<Plataforma | null>(null);
  const counter = useRef(0);
  const [history, setHistory] = useState<PlatformHistory>({ lag: new Map(), events: [] });
  useEffect(() => {
    if (!plataforma || plataforma === previous.current) return;
    const nowMs = Date.now();
    const before = previous.current;
    previous.current = plataforma;
    setHistory((h) => {
      const lag = new Map<string, { t: number; lag: number }[]>();
      for (const [grupo, valor] of lagPerGroup(plataforma)) {
        const points = (h.lag.get(grupo) ?? []).filter((p) => nowMs - p.t <= WINDOW_MS);
        lag.set(grupo, [...points, { t: nowMs, lag: valor }]);
      }
      const fresh = (before ? rebalanceSentences(before, plataforma, new Date(nowMs)) : []).map(
        (text) => ({ id: ++counter.current, text: text }),
      );
      return { lag, events: [...fresh.reverse(), ...h.events].slice(0, 8) };
    });
  }, [plataforma]);
  return history;
}

/**
 * What the page shows of the platform: the latest reading, or, when Kafka did not answer
 * it (`indisponivel`), the last reading that had Kafka's state with this reading's outbox,
 * and why as the error, so the panel says so and the picture's outbox goes on counting.
 */
export function useKafkaView(
  reading: Plataforma | null,
  error: string | null,
): { plataforma: Plataforma | null; error: string | null } {
  const lastWithKafka = useRef<Plataforma | null>(null);
  return useMemo(() => {
    if (!reading?.indisponivel) {
      if (reading) lastWithKafka.current = reading;
      return { plataforma: reading, error };
    }
    const last = lastWithKafka.current;
    return {
      plataforma: last ? { ...last, outbox: reading.outbox } : reading,
      error: `o Kafka não respondeu: ${reading.indisponivel}`,
    };
  }, [reading, error]);
}
