import { waitFor } from "@shop/service";
import {
  describeHolders,
  listOrders,
  paymentsAssignment,
  placeOrder,
} from "../../../harness/http.ts";
import { queryOrdersDb } from "../../../harness/orders-store.ts";
import { tempOrdersDatabase } from "../../../infra/postgres.ts";
import type { LabWorld } from "../world.ts";

const PER_PHASE = 10;

export const scaleOut = {
  name: "scale-out",
  summary:
    "two orders APIs share PostgreSQL and split the results' partitions; one is killed, the other takes over",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "With DATABASE_URL the orders API keeps its orders in PostgreSQL, and several instances\n" +
        "share them. They also share the group pedidos-api: pagamentos-resultados's three\n" +
        "partitions are split among them, and each instance's outbox relay publishes orders'\n" +
        "events, whichever instance took the order (docs/scale-out.md).",
    );
    say.doing(
      "Starting Kafka, a PostgreSQL database, two orders APIs and three payments instances",
    );
    const brokers = await w.kafka();
    const database = await tempOrdersDatabase("lab");
    w.atEnd(() => database.drop());
    const api = (n: number, port: number) =>
      w.startEventLog(`orders-api-${n}`, "orders-api", brokers, {
        PORTA: String(port),
        DATABASE_URL: database.url,
        INSTANCIA: String(n),
      });
    const first = await api(1, w.options.port);
    const second = await api(2, 0);
    for (const instancia of ["caixa-1", "caixa-2", "caixa-3"])
      await w.startEventLog(instancia, "payments", brokers, {
        INSTANCIA: instancia,
        TEMPO_DECISAO_MS: "500",
      });
    say.saw(`orders APIs on ${first.url()} and ${second.url()}, one database`);
    say.watch(`which instance holds which result partition: ${second.url()}/plataforma, group`);
    say.watch(
      `${w.names.groups.pedidosApi} (or the web page: VITE_API_URL=${second.url()} npm run dev -w web)`,
    );

    const { groups, topics } = w.names;
    const settle = (url: string, count: number) =>
      waitFor(
        async () => {
          const a = await paymentsAssignment(url, groups.pedidosApi, topics.pagamentosResultados);
          const held = [...a.holders.values()].flat().sort().join(",");
          return a.state === "Stable" && a.holders.size === count && held === "0,1,2" && a;
        },
        { timeoutMs: 60_000, intervalMs: 250, what: `pedidos-api to settle with ${count} members` },
      );
    let n = 0;
    const place = async (urls: string[]) => {
      const ids: number[] = [];
      for (let i = 0; i < PER_PHASE; i++) {
        const res = await placeOrder(urls[i % urls.length] as string, n++);
        if (res.status === 201) ids.push(res.body.id);
      }
      const reader = urls[urls.length - 1] as string;
      await waitFor(
        async () => {
          const all = await listOrders(reader);
          return ids.every((id) => all.find((o) => o.id === id)?.status !== "AGUARDANDO_PAGAMENTO");
        },
        { timeoutMs: 60_000, intervalMs: 250, what: "these orders to be decided" },
      );
      return ids;
    };

    const before = await settle(second.url(), 2);
    say.saw(`Kafka's group description: ${describeHolders(before.holders)}`);
    say.doing(`Placing ${PER_PHASE} orders, alternately on both instances`);
    const early = await place([first.url(), second.url()]);

    say.doing("Killing orders-api-1 (kill -9)");
    await first.kill();
    const after = await settle(second.url(), 1);
    say.saw(`Kafka's group description: ${describeHolders(after.holders)}`);
    say.doing(`Placing ${PER_PHASE} more orders on orders-api-2`);
    const late = await place([second.url()]);

    say.doing("Reading the outcome from the database and the topics");
    const all = await listOrders(second.url());
    const created = [...early, ...late];
    const decided = created.filter(
      (id) => all.find((o) => o.id === id)?.status !== "AGUARDANDO_PAGAMENTO",
    );
    const applied = await queryOrdersDb<{ pedido_id: number; n: number }>(
      database.url,
      "SELECT pedido_id, COUNT(*) AS n FROM historico WHERE etapa = 'resultado-aplicado' GROUP BY pedido_id",
    );
    say.check(
      before.holders.size === 2 && [...before.holders.values()].every((ps) => ps.length > 0),
      `both instances held result partitions (${describeHolders(before.holders)})`,
    );
    say.check(
      after.holders.size === 1 && [...after.holders.values()][0]?.length === 3,
      `after orders-api-1 died, the other took its partitions: ${describeHolders(after.holders)}`,
    );
    say.check(
      early.length === PER_PHASE && late.length === PER_PHASE,
      `every order was answered 201, ${PER_PHASE} on two instances and ${PER_PHASE} on the one left`,
    );
    say.check(
      decided.length === created.length &&
        applied.length === created.length &&
        applied.every((r) => Number(r.n) === 1),
      `nothing lost: ${created.length} orders, each decided and applied once (read from PostgreSQL)`,
    );
  },
};
