import { waitFor } from "@shop/service";
import {
  describeHolders,
  groupSettled,
  listOrders,
  type PedidoWire,
  placeOrder,
} from "../../../harness/http.ts";
import { readTopic } from "../../../harness/kafka.ts";
import { queryRows } from "../../../harness/process.ts";
import type { LabWorld } from "../world.ts";

const INSTANCES = ["caixa-1", "caixa-2", "caixa-3"];
const PER_PHASE = 6;

interface Phase {
  who: string[];
  holders: Map<string, number[]>;
  ids: number[];
}

/** The shop with three payments instances, each printing its decision lines into the story. */
async function threeInstances(w: LabWorld) {
  const { say } = w;
  say.doing("Iniciando o Kafka, a API de pedidos e três instâncias de pagamento");
  const { brokers, url, ordersDb } = await w.eventLogShop();
  const payments = new Map();
  for (const instancia of INSTANCES) {
    const p = await w.startEventLog(instancia, "payments", brokers, { INSTANCIA: instancia });
    p.onLine((line) => {
      if (line.includes(" decision=")) say.saw(line.replace(/ trace=\S+/, ""));
    });
    payments.set(instancia, p);
  }
  say.watch(`os membros do grupo e as suas partições: ${url}/plataforma (ou a página web`);
  say.watch(`com VITE_API_URL=${url} npm run dev -w web); as linhas de decisão abaixo`);

  return { brokers, url, ordersDb, payments };
}

/** One phase: the group settled with `who`, PER_PHASE orders placed from `first`, all decided. */
async function phase(w: LabWorld, url: string, who: string[], first: number): Promise<Phase> {
  const { say } = w;
  const { groups, topics } = w.names;
  const a = await groupSettled(url, groups.pagamentos, topics.pedidosCriados, who.length);
  say.saw(`A descrição do grupo no Kafka: ${describeHolders(a.holders)}`);
  say.doing(`Fazendo ${PER_PHASE} pedidos; observe quem os decide`);
  const ids: number[] = [];
  for (let i = 0; i < PER_PHASE; i++) {
    const res = await placeOrder(url, first + i);
    if (res.status === 201) ids.push(res.body.id);
  }
  await waitFor(
    async () => {
      const all = await listOrders(url);
      return ids.every((id) => all.find((o) => o.id === id)?.status !== "AGUARDANDO_PAGAMENTO");
    },
    { timeoutMs: 60_000, intervalMs: 250, what: "this phase's orders to be decided" },
  );
  return { who, holders: a.holders, ids };
}

/** The orders database and the results topic read: who decided what, and how many times. */
async function readOutcome(
  w: LabWorld,
  { brokers, url, ordersDb }: { brokers: string; url: string; ordersDb: string },
  phases: Phase[],
) {
  const { say } = w;
  const { topics } = w.names;
  say.doing("Lendo o resultado do banco de pedidos e dos tópicos");
  const all = await listOrders(url);
  const byId = new Map<number, PedidoWire>(all.map((o) => [o.id, o]));
  const created = phases.flatMap((p) => p.ids);
  const results = await readTopic(brokers, topics.pagamentosResultados);
  const decisions = new Map<number, number>();
  for (const r of results) {
    const id = Number(r.value.pedidoId);
    decisions.set(id, (decisions.get(id) ?? 0) + 1);
  }
  const applied = queryRows<{ pedido_id: number; n: number }>(
    ordersDb,
    "SELECT pedido_id, COUNT(*) AS n FROM historico WHERE etapa = 'resultado-aplicado' GROUP BY pedido_id",
  );
  const appliedOnce = applied.filter((r) => r.n === 1).length;
  const twice = [...decisions.values()].filter((c) => c > 1).length;

  return { byId, created, decisions, appliedOnce, twice };
}

export const rebalance = {
  name: "rebalance",
  summary: "três instâncias de pagamento dividem as partições; duas saem, a última assume",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "O grupo `pagamentos` divide as três partições de pedidos-criados entre os seus membros:\n" +
        "cada partição é lida por uma instância. Quando uma instância sai, o Kafka passa as\n" +
        "partições dela para as outras (um rebalanceamento), que seguem dos offsets confirmados do grupo.",
    );
    const shop = await threeInstances(w);
    const phases: Phase[] = [];
    phases.push(await phase(w, shop.url, INSTANCES, 0));
    say.doing("Parando caixa-3 (SIGTERM: ela sai do grupo)");
    await shop.payments.get("caixa-3").stop();
    phases.push(await phase(w, shop.url, ["caixa-1", "caixa-2"], PER_PHASE));
    say.doing("Parando caixa-2");
    await shop.payments.get("caixa-2").stop();
    phases.push(await phase(w, shop.url, ["caixa-1"], 2 * PER_PHASE));
    tellRebalance(say, phases, await readOutcome(w, shop, phases));
  },
};

/** The checks: one partition each, the partitions moved twice, the decisions followed, nothing lost. */
function tellRebalance(
  say: LabWorld["say"],
  phases: Phase[],
  { byId, created, decisions, appliedOnce, twice }: Awaited<ReturnType<typeof readOutcome>>,
) {
  const [first, second, third] = phases as [
    (typeof phases)[0],
    (typeof phases)[0],
    (typeof phases)[0],
  ];
  say.check(
    [...first.holders.values()].every((ps) => ps.length === 1),
    `três instâncias com uma partição cada (${describeHolders(first.holders)})`,
  );
  say.check(
    second.holders.size === 2 && !second.holders.has("caixa-3"),
    `depois que caixa-3 saiu, a partição dela mudou de dono: ${describeHolders(second.holders)}`,
  );
  say.check(
    third.holders.size === 1 && third.holders.get("caixa-1")?.length === 3,
    `depois que caixa-2 saiu, caixa-1 ficou com as três partições`,
  );
  const byWhom = (ids: number[]) => new Set(ids.map((id) => byId.get(id)?.processadoPor));
  say.check(
    created.length === 3 * PER_PHASE &&
      [...byWhom(third.ids)].every((who) => who === "caixa-1") &&
      byWhom(first.ids).size >= 2,
    `as decisões seguiram: os primeiros ${PER_PHASE} pedidos decididos por ${[...byWhom(first.ids)].sort().join(", ")}, os últimos ${PER_PHASE} só por caixa-1`,
  );
  const lost = created.filter(
    (id) => byId.get(id)?.status === "AGUARDANDO_PAGAMENTO" || !decisions.has(id),
  );
  say.check(
    lost.length === 0 && appliedOnce === created.length,
    `nada perdido: ${created.length} pedidos, cada um decidido (um ResultadoPagamento no tópico) e aplicado uma vez no banco de pedidos`,
  );
  say.saw(
    twice === 0
      ? "Nenhum pedido foi decidido duas vezes: cada instância confirmou os seus offsets ao sair."
      : `${twice} pedidos foram decididos duas vezes (pelo menos uma vez: uma instância saiu antes de confirmar); a API de pedidos aplicou cada um uma vez.`,
  );
}
