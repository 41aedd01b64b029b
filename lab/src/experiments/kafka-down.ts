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

type OwnKafka = Awaited<ReturnType<LabWorld["ownKafka"]>>;
type Answer = { s: Setting; status: number; seconds: number };

/** Two orders APIs side by side on the experiment's Kafka, OUTBOX=ligado and =desligado, each with a payments instance. */
async function twoApis(w: LabWorld): Promise<{ kafka: OwnKafka; settings: Setting[] }> {
  const { say } = w;
  say.doing(
    "Iniciando um Kafka só do experimento, e duas APIs de pedidos lado a lado, cada uma com uma instância de pagamento",
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
    say.saw(`OUTBOX=${outbox}: API de pedidos em ${api.url()}`);
  }
  say.watch(
    "o GET /saude de cada API: outbox.pendentes enquanto o Kafka está fora (OUTBOX=ligado)",
  );

  return { kafka, settings };
}

/** An order on each with Kafka up; Kafka stopped, two orders on each; Kafka back once the publisher gave up; one more order. */
async function ordersThroughTheOutage(w: LabWorld, kafka: OwnKafka, settings: Setting[]) {
  const { say } = w;
  let n = 0;
  say.doing("Fazendo um pedido em cada uma com o Kafka no ar");
  for (const s of settings) s.before.push((await placeOrder(s.api.url(), 2 * n++)).body.id);

  say.doing("Parando o Kafka e fazendo dois pedidos em cada uma enquanto ele está fora");
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
    say.saw(`OUTBOX=${a.s.outbox}: ${a.status} depois de ${a.seconds.toFixed(1)} s`);
  const [ligado, desligado] = settings as [Setting, Setting];
  const pending = (
    await send<{ outbox: { pendentes: number } }>("GET", `${ligado.api.url()}/saude`)
  ).body.outbox.pendentes;
  say.saw(`a outbox de OUTBOX=ligado guarda ${pending} eventos esperando o Kafka`);

  // kafkajs keeps trying a send after the 500: back too soon, Kafka would still get the
  // record. Kafka stays down until that publisher has given the records up, as counted.
  const topic = kafkaNames(desligado.prefix).topics.pedidosCriados;
  say.doing(
    "Esperando o publicador de OUTBOX=desligado desistir dos seus registros (shop_messages_abandoned_total)",
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
  say.doing("Iniciando o Kafka de novo");
  await kafka.start();
  say.doing("Fazendo mais um pedido em OUTBOX=desligado: ele vai até o fim, atrás dos perdidos");
  const after = (await placeOrder(desligado.api.url(), 2 * n++)).body.id;

  return { answers, after };
}

/** Until every order that should be paid is PAGO; then the events each topic holds and the outbox left. */
async function outcomes(kafka: OwnKafka, [ligado, desligado]: [Setting, Setting], after: number) {
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
    (await readTopic(kafka.brokers, kafkaNames(s.prefix).topics.pedidosCriados)).map((r) => r.key);
  const [ligadoEvents, desligadoEvents] = [await eventsOf(ligado), await eventsOf(desligado)];
  const desligadoOrders = await listOrders(desligado.api.url());
  const outboxLeft = queryRows<{ n: number }>(
    ligado.db,
    "SELECT COUNT(*) AS n FROM outbox WHERE enviado_em IS NULL",
  )[0]?.n;
  return { ligadoEvents, desligadoEvents, desligadoOrders, outboxLeft };
}

export const kafkaDown = {
  name: "kafka-down",
  summary:
    "o Kafka para sob um fluxo de pedidos: a outbox os guarda e cobra, OUTBOX=desligado os deixa órfãos",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "Salvar um pedido e publicar o seu PedidoCriado são duas escritas sem transação em\n" +
        "comum. Com o Kafka fora, POST /pedidos responde 500 depois da espera de 5 s e o pedido\n" +
        "fica salvo. Com a outbox (o padrão) o evento foi salvo com o pedido e é publicado quando\n" +
        "o Kafka volta; com OUTBOX=desligado (a configuração da spec) ele se perde, e o pedido é o\n" +
        "órfão da spec: nada nunca vai cobrá-lo.",
    );
    const { kafka, settings } = await twoApis(w);
    const { answers, after } = await ordersThroughTheOutage(w, kafka, settings);
    const [ligado, desligado] = settings as [Setting, Setting];
    const o = await outcomes(kafka, [ligado, desligado], after);
    tellKafkaDown(w.say, [ligado, desligado], answers, after, o);
  },
};

/** The orphans named; then the three checks: 500 and saved, the outbox published, OUTBOX=desligado's orphans. */
function tellKafkaDown(
  say: LabWorld["say"],
  [ligado, desligado]: [Setting, Setting],
  answers: Answer[],
  after: number,
  o: Awaited<ReturnType<typeof outcomes>>,
) {
  const { ligadoEvents, desligadoEvents, desligadoOrders, outboxLeft } = o;
  for (const id of desligado.during) {
    say.saw(
      `OUTBOX=desligado, pedido ${id}: ${desligadoOrders.find((o) => o.id === id)?.status}, sem PedidoCriado: o órfão`,
    );
  }

  say.check(
    answers.every((a) => a.status === 500 && a.seconds >= 4 && a.seconds <= 8) &&
      ligado.during.length === 2 &&
      desligado.during.length === 2,
    "com o Kafka fora, todo POST /pedidos respondeu 500 depois de uns 5 s, nas duas configurações, e o pedido ficou salvo",
  );
  const onceEach = (events: (string | null)[], ids: number[]) =>
    ids.every((id) => events.filter((k) => k === pedidoKey(id)).length === 1);
  say.check(
    onceEach(ligadoEvents, ligado.during) && outboxLeft === 0,
    `OUTBOX=ligado: os pedidos salvos durante a queda (${ligado.during.join(", ")}) foram publicados quando o Kafka voltou, sem nova requisição, e cobrados (PAGO)`,
  );
  say.check(
    desligado.during.every(
      (id) =>
        !desligadoEvents.includes(pedidoKey(id)) &&
        desligadoOrders.find((o) => o.id === id)?.status === "AGUARDANDO_PAGAMENTO",
    ) && onceEach(desligadoEvents, [after]),
    `OUTBOX=desligado: os pedidos ${desligado.during.join(", ")} não têm PedidoCriado e ficam AGUARDANDO_PAGAMENTO enquanto o pedido ${after}, feito depois, foi cobrado: os pedidos órfãos da spec`,
  );
}
