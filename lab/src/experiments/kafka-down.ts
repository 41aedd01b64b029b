import { kafkaNames, pedidoKey } from "@shop/contracts";
import { waitFor } from "@shop/service";
import { listOrders, metricCounter, placeOrder, send } from "../../../harness/http.ts";
import { readTopic } from "../../../harness/kafka.ts";
import type { ServiceProcess } from "../../../harness/process.ts";
import { queryRows } from "../../../harness/process.ts";
import type { LabWorld } from "../world.ts";

interface Setting {
  outbox: "ligado" | "desligado";
  prefix: string;
  api: ServiceProcess;
  db: string;
  before: number[];
  during: number[];
}

export const kafkaDown = {
  name: "kafka-down",
  summary:
    "Kafka stops under a stream of orders: the outbox keeps and charges them, OUTBOX=desligado orphans them",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "Saving an order and publishing its PedidoCriado are two writes with no common\n" +
        "transaction. With Kafka down, POST /pedidos answers 500 after its 5 s wait and the\n" +
        "order stays saved. With the outbox (the default) the event was saved with the order and\n" +
        "is published once Kafka is back; with OUTBOX=desligado (the spec's configuration) it\n" +
        "is lost, and the order is the spec's orphan: nothing will ever charge it.",
    );
    say.doing(
      "Starting a Kafka of the experiment's own, and two orders APIs side by side, each with a payments instance",
    );
    const kafka = await w.ownKafka();
    const settings: Setting[] = [];
    for (const outbox of ["ligado", "desligado"] as const) {
      const prefix = `${w.prefix}${outbox}.`;
      const db = w.dbPath(`pedidos-${outbox}`);
      const env = { KAFKA_BROKERS: kafka.brokers, KAFKA_PREFIXO: prefix };
      const api = await w.start(`orders-api OUTBOX=${outbox}`, "orders-api", {
        ...env,
        OUTBOX: outbox,
        DB_PATH: db,
        ...(outbox === "ligado" ? { PORTA: String(w.options.port) } : {}),
      });
      await w.start(`caixa-${outbox}`, "payments", { ...env, INSTANCIA: `caixa-${outbox}` });
      settings.push({ outbox, prefix, api, db, before: [], during: [] });
      say.saw(`OUTBOX=${outbox}: orders API on ${api.url()}`);
    }
    say.watch("each API's GET /saude: outbox.pendentes while Kafka is down (OUTBOX=ligado)");

    let n = 0;
    say.doing("Placing an order on each while Kafka runs");
    for (const s of settings) s.before.push((await placeOrder(s.api.url(), 2 * n++)).body.id);

    say.doing("Stopping Kafka, and placing two orders on each while it is down");
    await kafka.stop();
    const answers = await Promise.all(
      settings.flatMap((s) =>
        [0, 1].map(async () => {
          const started = Date.now();
          const res = await placeOrder(s.api.url(), 2 * n++);
          const id = Number(res.body.erro?.match(/order (\d+)/)?.[1]);
          if (res.status === 500 && Number.isInteger(id)) s.during.push(id);
          return { s, status: res.status, seconds: (Date.now() - started) / 1000 };
        }),
      ),
    );
    for (const a of answers)
      say.saw(`OUTBOX=${a.s.outbox}: ${a.status} after ${a.seconds.toFixed(1)} s`);
    const [ligado, desligado] = settings as [Setting, Setting];
    const pending = (
      await send<{ outbox: { pendentes: number } }>("GET", `${ligado.api.url()}/saude`)
    ).body.outbox.pendentes;
    say.saw(`OUTBOX=ligado's outbox holds ${pending} events waiting for Kafka`);

    // kafkajs keeps trying a send after the 500: back too soon, Kafka would still get the
    // record. Kafka stays down until that publisher has given the records up, as counted.
    const topic = kafkaNames(desligado.prefix).topics.pedidosCriados;
    say.doing(
      "Waiting until OUTBOX=desligado's publisher has given its records up (shop_messages_abandoned_total)",
    );
    await waitFor(
      async () =>
        (await metricCounter(desligado.api.url(), "shop_messages_abandoned_total", topic)) >= 2,
      {
        timeoutMs: 90_000,
        intervalMs: 500,
        what: "the publisher to give both records up",
      },
    );
    say.doing("Starting Kafka again");
    await kafka.start();
    say.doing(
      "Placing one more order on OUTBOX=desligado: it goes all the way, behind the lost ones",
    );
    const after = (await placeOrder(desligado.api.url(), 2 * n++)).body.id;

    const decided = (s: Setting, ids: number[]) =>
      waitFor(
        async () => {
          const list = await listOrders(s.api.url());
          return ids.every((id) => list.find((o) => o.id === id)?.status === "PAGO") && list;
        },
        {
          timeoutMs: 60_000,
          intervalMs: 250,
          what: `orders ${ids.join(", ")} PAGO (OUTBOX=${s.outbox})`,
        },
      );
    await decided(ligado, [...ligado.before, ...ligado.during]);
    await decided(desligado, [...desligado.before, after]);
    const eventsOf = async (s: Setting) =>
      (await readTopic(kafka.brokers, kafkaNames(s.prefix).topics.pedidosCriados)).map(
        (r) => r.key,
      );
    const [ligadoEvents, desligadoEvents] = [await eventsOf(ligado), await eventsOf(desligado)];
    const desligadoOrders = await listOrders(desligado.api.url());
    const outboxLeft = queryRows<{ n: number }>(
      ligado.db,
      "SELECT COUNT(*) AS n FROM outbox WHERE enviado_em IS NULL",
    )[0]?.n;
    for (const id of desligado.during) {
      say.saw(
        `OUTBOX=desligado, order ${id}: ${desligadoOrders.find((o) => o.id === id)?.status}, no PedidoCriado: the orphan`,
      );
    }

    say.check(
      answers.every((a) => a.status === 500 && a.seconds >= 4 && a.seconds <= 8) &&
        ligado.during.length === 2 &&
        desligado.during.length === 2,
      "with Kafka down, every POST /pedidos answered 500 after about 5 s, under both settings, and the order was saved",
    );
    const onceEach = (events: (string | null)[], ids: number[]) =>
      ids.every((id) => events.filter((k) => k === pedidoKey(id)).length === 1);
    say.check(
      onceEach(ligadoEvents, ligado.during) && outboxLeft === 0,
      `OUTBOX=ligado: the orders saved during the outage (${ligado.during.join(", ")}) were published once Kafka returned, with no new request, and charged (PAGO)`,
    );
    say.check(
      desligado.during.every(
        (id) =>
          !desligadoEvents.includes(pedidoKey(id)) &&
          desligadoOrders.find((o) => o.id === id)?.status === "AGUARDANDO_PAGAMENTO",
      ) && onceEach(desligadoEvents, [after]),
      `OUTBOX=desligado: orders ${desligado.during.join(", ")} have no PedidoCriado and stay AGUARDANDO_PAGAMENTO while order ${after}, placed after, was charged: the spec's orphan orders`,
    );
  },
};
