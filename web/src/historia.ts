import type { Plataforma } from "@shop/contracts";
import { useEffect, useRef, useState } from "react";
import { formatarHoraCurta, listarParticoes } from "./formato.ts";

/** A payments instance's name as people know it: its Kafka client id without `payments-`. */
export const instanciaDe = (clientId: string) => clientId.replace(/^payments-/, "");

/** Who holds each partition now: `grupo` → `topic` → partition → instance. */
export type Donos = Map<string, Map<string, Map<number, string>>>;

export function donosDe(p: Plataforma): Donos {
  const donos: Donos = new Map();
  for (const g of p.grupos) {
    const porTopico = new Map<string, Map<number, string>>();
    for (const m of g.membros) {
      for (const [topic, ps] of Object.entries(m.particoes)) {
        const t = porTopico.get(topic) ?? new Map<number, string>();
        for (const partition of ps) t.set(partition, instanciaDe(m.clientId));
        porTopico.set(topic, t);
      }
    }
    donos.set(g.grupo, porTopico);
  }
  return donos;
}

const membrosDe = (p: Plataforma, grupo: string) =>
  new Set(p.grupos.find((g) => g.grupo === grupo)?.membros.map((m) => instanciaDe(m.clientId)));

/**
 * What changed in each group between two polls, in a sentence a person reads: who joined
 * or left, and which partitions changed hands ("caixa-2 entrou às 11:05:03; partições 1 e
 * 2 mudaram de dono"). Nothing when nothing changed.
 */
export function rebalanceamentos(antes: Plataforma, agora: Plataforma, quando: Date): string[] {
  const [donosAntes, donosAgora] = [donosDe(antes), donosDe(agora)];
  const frases: string[] = [];
  for (const g of agora.grupos) {
    const [eram, sao] = [membrosDe(antes, g.grupo), membrosDe(agora, g.grupo)];
    const quem = [
      ...[...sao].filter((m) => !eram.has(m)).map((m) => `${m} entrou`),
      ...[...eram].filter((m) => !sao.has(m)).map((m) => `${m} saiu`),
    ];
    const topicos = new Set([
      ...(donosAntes.get(g.grupo)?.keys() ?? []),
      ...(donosAgora.get(g.grupo)?.keys() ?? []),
    ]);
    const mudaram: string[] = [];
    for (const topic of [...topicos].sort()) {
      const [a, b] = [donosAntes.get(g.grupo)?.get(topic), donosAgora.get(g.grupo)?.get(topic)];
      const ps = [...new Set([...(a?.keys() ?? []), ...(b?.keys() ?? [])])]
        .filter((p) => a?.get(p) !== b?.get(p))
        .sort((x, y) => x - y);
      if (ps.length > 0)
        mudaram.push(
          `${topicos.size > 1 ? `${topic}: ` : ""}${listarParticoes(ps)} ${ps.length > 1 ? "mudaram" : "mudou"} de dono`,
        );
    }
    if (quem.length === 0 && mudaram.length === 0) continue;
    const inicio = quem.length > 0 ? quem.join(", ") : "rebalanceamento";
    frases.push(
      `${g.grupo}: ${inicio} às ${formatarHoraCurta(quando)}${mudaram.length ? `; ${mudaram.join("; ")}` : ""}`,
    );
  }
  return frases;
}

/** Each group's lag summed over its partitions of every topic it reads. */
export function lagPorGrupo(p: Plataforma): Map<string, number> {
  const lag = new Map<string, number>();
  for (const t of p.topicos)
    for (const part of t.particoes)
      for (const g of part.grupos) lag.set(g.grupo, (lag.get(g.grupo) ?? 0) + g.lag);
  return lag;
}

/** How far back the lag chart goes. */
export const JANELA_MS = 5 * 60_000;

export interface Historia {
  /** Per group, its total lag at each poll of the last JANELA_MS. */
  lag: Map<string, { t: number; lag: number }[]>;
  /** The latest rebalances, newest first (at most 8), each with an id of its own. */
  eventos: { id: number; texto: string }[];
}

/** What the page keeps of the platform across polls: in the browser only, lost on reload. */
export function useHistoria(plataforma: Plataforma | null): Historia {
  const anterior = useRef<Plataforma | null>(null);
  const contador = useRef(0);
  const [historia, setHistoria] = useState<Historia>({ lag: new Map(), eventos: [] });
  useEffect(() => {
    if (!plataforma || plataforma === anterior.current) return;
    const agora = Date.now();
    const antes = anterior.current;
    anterior.current = plataforma;
    setHistoria((h) => {
      const lag = new Map<string, { t: number; lag: number }[]>();
      for (const [grupo, valor] of lagPorGrupo(plataforma)) {
        const pontos = (h.lag.get(grupo) ?? []).filter((p) => agora - p.t <= JANELA_MS);
        lag.set(grupo, [...pontos, { t: agora, lag: valor }]);
      }
      const novos = (antes ? rebalanceamentos(antes, plataforma, new Date(agora)) : []).map(
        (texto) => ({ id: ++contador.current, texto }),
      );
      return { lag, eventos: [...novos.reverse(), ...h.eventos].slice(0, 8) };
    });
  }, [plataforma]);
  return historia;
}
