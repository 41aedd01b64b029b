import { waitFor } from "@shop/service";
import {
  describeHolders,
  listOrders,
  type PedidoWire,
  paymentsAssignment,
  placeOrder,
} from "../../../harness/http.ts";
import { readTopic } from "../../../harness/kafka.ts";
import { queryRows } from "../../../harness/process.ts";
import type { LabWorld } from "../world.ts";

const INSTANCES = ["caixa-1", "caixa-2", "caixa-3"];
const PER_PHASE = 6;

export const rebalance = {
  name: "rebalance",
  summary: "three payments instances share the partitions; two leave, the last takes over",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "The group `pagamentos` shares pedidos-criados's three partitions among its members: each\n" +
        "partition is read by one instance. When an instance leaves, Kafka moves its partitions\n" +
        "to the others (a rebalance) and they go on from the group's committed offsets.",
    );
    say.doing("Starting Kafka, the orders API and three payments instances");
    const { brokers, url, ordersDb } = await w.eventLogShop();
    const payments = new Map();
    for (const instancia of INSTANCES) {
      const p = await w.startEventLog(instancia, "payments", brokers, { INSTANCIA: instancia });
      p.onLine((line) => {
        if (line.includes(" decision=")) say.saw(line.replace(/ trace=\S+/, ""));
      });
      payments.set(instancia, p);
    }
    say.watch(`the group's members and their partitions: ${url}/plataforma (or the web page`);
    say.watch(`with VITE_API_URL=${url} npm run dev -w web); the decision lines below`);

    const { groups, topics } = w.names;
    const settle = (count: number) =>
      waitFor(
        async () => {
          const a = await paymentsAssignment(url, groups.pagamentos, topics.pedidosCriados);
          const held = [...a.holders.values()].flat().sort().join(",");
          return a.state === "Stable" && a.holders.size === count && held === "0,1,2" && a;
        },
        { timeoutMs: 60_000, intervalMs: 250, what: `the group to settle with ${count} members` },
      );

    const phases: { who: string[]; holders: Map<string, number[]>; ids: number[] }[] = [];
    let n = 0;
    const phase = async (who: string[]) => {
      const a = await settle(who.length);
      say.saw(`Kafka's group description: ${describeHolders(a.holders)}`);
      say.doing(`Placing ${PER_PHASE} orders; watch who decides them`);
      const ids: number[] = [];
      for (let i = 0; i < PER_PHASE; i++) {
        const res = await placeOrder(url, n++);
        if (res.status === 201) ids.push(res.body.id);
      }
      await waitFor(
        async () => {
          const all = await listOrders(url);
          return ids.every((id) => all.find((o) => o.id === id)?.status !== "AGUARDANDO_PAGAMENTO");
        },
        { timeoutMs: 60_000, intervalMs: 250, what: "this phase's orders to be decided" },
      );
      phases.push({ who, holders: a.holders, ids });
    };

    await phase(INSTANCES);
    say.doing("Stopping caixa-3 (SIGTERM: it leaves the group)");
    await payments.get("caixa-3").stop();
    await phase(["caixa-1", "caixa-2"]);
    say.doing("Stopping caixa-2");
    await payments.get("caixa-2").stop();
    await phase(["caixa-1"]);

    say.doing("Reading the outcome from the orders database and the topics");
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

    const [first, second, third] = phases as [
      (typeof phases)[0],
      (typeof phases)[0],
      (typeof phases)[0],
    ];
    say.check(
      [...first.holders.values()].every((ps) => ps.length === 1),
      `three instances held one partition each (${describeHolders(first.holders)})`,
    );
    say.check(
      second.holders.size === 2 && !second.holders.has("caixa-3"),
      `after caixa-3 left, its partition moved: ${describeHolders(second.holders)}`,
    );
    say.check(
      third.holders.size === 1 && third.holders.get("caixa-1")?.length === 3,
      `after caixa-2 left, caixa-1 held all three partitions`,
    );
    const byWhom = (ids: number[]) => new Set(ids.map((id) => byId.get(id)?.processadoPor));
    say.check(
      created.length === 3 * PER_PHASE &&
        [...byWhom(third.ids)].every((who) => who === "caixa-1") &&
        byWhom(first.ids).size >= 2,
      `decisions went on: the first ${PER_PHASE} orders decided by ${[...byWhom(first.ids)].sort().join(", ")}, the last ${PER_PHASE} by caixa-1 alone`,
    );
    const lost = created.filter(
      (id) => byId.get(id)?.status === "AGUARDANDO_PAGAMENTO" || !decisions.has(id),
    );
    say.check(
      lost.length === 0 && appliedOnce === created.length,
      `nothing lost: ${created.length} orders, each decided (a ResultadoPagamento in the topic) and applied once in the orders database`,
    );
    say.saw(
      twice === 0
        ? "No order was decided twice: each instance committed its offsets as it left."
        : `${twice} orders were decided twice (at-least-once: an instance left before committing); the orders API applied each once.`,
    );
  },
};
