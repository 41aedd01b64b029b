import type { Plataforma } from "@shop/contracts";
import { waitFor } from "@shop/service";
import { type Admin, AssignerProtocol } from "kafkajs";
import { withAdmin } from "../../../harness/kafka.ts";
import { queryOrdersDb } from "../../../harness/orders-store.ts";

/**
 * What the page's lab counts its figures from: Kafka's own description of a group, the
 * orders database and the orders API's GET /plataforma (what the panel shows). Never a log
 * line.
 */

/** Who holds which partition of `topic` in `group`, by instance (payments-caixa-2 → caixa-2). */
export interface Holders {
  state: string;
  byInstance: Map<string, number[]>;
}

export function groupHolders(brokers: string, group: string, topic: string): Promise<Holders> {
  return withAdmin(brokers, (admin) => holdersIn(admin, group, topic));
}

async function holdersIn(admin: Admin, group: string, topic: string): Promise<Holders> {
  const [g] = (await admin.describeGroups([group])).groups;
  const byInstance = new Map<string, number[]>();
  for (const m of g?.members ?? []) {
    const a = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
    const ps = [...(a?.assignment[topic] ?? [])].sort((x, y) => x - y);
    byInstance.set(m.clientId.replace(/^payments-/, ""), ps);
  }
  return { state: g?.state ?? "Dead", byInstance };
}

/** "caixa-1: 0, 1; caixa-2: 2", the way the panel reads; "ninguém" for an empty group. */
export function describeHolders(h: Holders): string {
  if (h.byInstance.size === 0) return "ninguém";
  return [...h.byInstance]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([who, ps]) => `${who}: ${ps.length ? ps.join(", ") : "nada"}`)
    .join("; ");
}

/** True when the group is Stable and its members hold all `partitions` partitions. */
export const settled = (h: Holders, partitions = 3) =>
  h.state === "Stable" && [...h.byInstance.values()].flat().length === partitions;

/**
 * Waits until `ok(holders)`, polling Kafka every 100 ms; the holders then, and when that was.
 * `seen` is told of every reading on the way, with when it came: a story that wants two
 * moments of one change takes both from the one client (a second client's start-up, a
 * second late on a busy machine, would count in the second moment).
 * Throws after `timeoutMs` with what the group looked like last.
 */
export async function waitForHolders(
  brokers: string,
  group: string,
  topic: string,
  ok: (h: Holders) => boolean,
  timeoutMs = 60_000,
  seen?: (h: Holders, at: number) => void,
): Promise<{ holders: Holders; at: number }> {
  let last: Holders | null = null;
  let seenAt = 0;
  // One client for the whole wait, asked every 100 ms: the time a story reports is when
  // Kafka's description first showed the change, not a new connection's start-up later.
  const holders = await withAdmin(brokers, (admin) =>
    waitFor(
      async () => {
        last = await holdersIn(admin, group, topic).catch(() => null);
        if (!last) return null;
        const at = Date.now();
        seen?.(last, at);
        if (!ok(last)) return null;
        seenAt = at;
        return last;
      },
      {
        timeoutMs,
        intervalMs: 100,
        what: `the group ${group} (last: ${last ? describeHolders(last) : "no answer"})`,
      },
    ),
  );
  return { holders, at: seenAt };
}

/** The orders database's own counts, for the figures of a story. */
export function ordersDb(where: string) {
  const one = async (sql: string, ...params: unknown[]) =>
    Number((await queryOrdersDb<{ n: number }>(where, sql, ...params))[0]?.n ?? 0);
  return {
    /** Results the orders API received again and ignored (`resultado-repetido` steps). */
    repeatedResults: () =>
      one("SELECT COUNT(*) AS n FROM historico WHERE etapa = 'resultado-repetido'"),
    /** The highest order id so far (0 when none). */
    lastId: () => one("SELECT COALESCE(MAX(id), 0) AS n FROM pedidos"),
    /** Orders after `afterId` still waiting for their payment. */
    waiting: (afterId: number) =>
      one(
        "SELECT COUNT(*) AS n FROM pedidos WHERE id > ? AND status = 'AGUARDANDO_PAGAMENTO'",
        afterId,
      ),
    statuses: async (afterId: number) =>
      new Map(
        (
          await queryOrdersDb<{ status: string; n: number }>(
            where,
            "SELECT status, COUNT(*) AS n FROM pedidos WHERE id > ? GROUP BY status",
            afterId,
          )
        ).map((r) => [r.status, Number(r.n)]),
      ),
    /** Events saved in the outbox and not yet acknowledged by Kafka. */
    outboxPending: () =>
      one("SELECT COUNT(*) AS n FROM outbox WHERE enviado_em IS NULL AND posta_de_lado_em IS NULL"),
    /** The outbox rows of orders made between two instants (ISO text), with when each was sent. */
    outboxBetween: (from: string, to: string) =>
      queryOrdersDb<{ pedido_id: number; criado_em: string; enviado_em: string | null }>(
        where,
        "SELECT pedido_id, criado_em, enviado_em FROM outbox WHERE criado_em >= ? AND criado_em <= ? ORDER BY id",
        from,
        to,
      ),
    /** The first decision applied at or after an instant (ISO text), or null. */
    firstDecisionSince: async (from: string) =>
      (
        await queryOrdersDb<{ em: string | null }>(
          where,
          "SELECT MIN(decidido_em) AS em FROM pedidos WHERE decidido_em >= ?",
          from,
        )
      )[0]?.em ?? null,
  };
}
export type OrdersDb = ReturnType<typeof ordersDb>;

/** What the platform panel shows, in the few numbers a story compares before and after. */
export interface PanelFigures {
  membros: string;
  lag: number;
  subReplicadas: number;
  lideres: string;
  outbox: number | null;
  mortas: number;
}

/** The panel's numbers from GET /plataforma: `group`'s lag summed over its partitions. */
export function panelFigures(p: Plataforma, group: string): PanelFigures {
  const members = p.grupos.find((g) => g.grupo === group)?.membros ?? [];
  const partitions = p.topicos.flatMap((t) => t.particoes.map((x) => ({ topic: t.topic, ...x })));
  return {
    membros:
      members
        .map(
          (m) =>
            `${m.clientId.replace(/^payments-/, "")}: ${Object.values(m.particoes).flat().join(", ") || "nada"}`,
        )
        .join("; ") || "ninguém",
    lag: partitions.reduce((n, x) => n + (x.grupos.find((g) => g.grupo === group)?.lag ?? 0), 0),
    subReplicadas: partitions.filter((x) => x.isr.length < x.replicas.length).length,
    lideres: [...new Set(partitions.map((x) => x.leader))].sort().join(", "),
    outbox: p.outbox?.pendentes ?? null,
    mortas: (p.mortas ?? []).reduce((n, m) => n + m.cartas, 0),
  };
}

const LABELS: Record<keyof PanelFigures, string> = {
  membros: "partições por instância",
  lag: "lag do grupo",
  subReplicadas: "partições sub-replicadas",
  lideres: "líderes (brokers)",
  outbox: "eventos no outbox",
  mortas: "cartas mortas",
};

/** What moved on the panel between two readings, a line a field that changed. */
export function panelMoves(before: PanelFigures | null, after: PanelFigures | null): string[] {
  if (!before || !after)
    return [
      `No painel: ${before ? "" : "antes, o Kafka não respondia"}${!before && !after ? "; " : ""}${after ? "" : "depois, o Kafka não respondia"}.`,
    ];
  const moved = (Object.keys(LABELS) as (keyof PanelFigures)[]).filter(
    (k) => before[k] !== after[k],
  );
  if (moved.length === 0) return ["No painel, nada mudou entre antes e depois."];
  return moved.map((k) => `No painel, ${LABELS[k]}: ${before[k] ?? "—"} → ${after[k] ?? "—"}.`);
}

/** GET /plataforma of the orders API, or null when it cannot read Kafka now. */
export async function readPanel(ordersUrl: string): Promise<Plataforma | null> {
  try {
    const res = await fetch(`${ordersUrl}/plataforma`, { signal: AbortSignal.timeout(5000) });
    return res.ok ? ((await res.json()) as Plataforma) : null;
  } catch {
    return null;
  }
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1).replace(".", ",")} s`;
