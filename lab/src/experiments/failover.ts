import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Plataforma, PlataformaBroker } from "@shop/contracts";
import { waitFor } from "@shop/service";
import { listOrders, placeOrder, send } from "../../../harness/http.ts";
import { readTopic } from "../../../harness/kafka.ts";
import { queryRows } from "../../../harness/process.ts";
import {
  activeController,
  clusterNode,
  deleteCluster,
  SHORT_LIVED_JVM,
  startKafkaCluster,
  stopKafka,
  stopKafkaCluster,
} from "../../../infra/kafka/kafka.ts";
import { freePort, twoFreePorts } from "../../../infra/ports.ts";
import {
  clusterAddresses,
  type RabbitNode,
  rabbitNode,
  startRabbitCluster,
} from "../../../infra/rabbitmq/node.ts";
import { scratchDir } from "../../../infra/scratch.ts";
import { longestWithoutAck } from "../timing.ts";
import type { LabWorld } from "../world.ts";

/** The spec's confirmation wait: the goal for the longest a client waits. */
const WAIT_MS = 5_000;

/** What the client of a stream saw: each acknowledgement's time, the refusals, the slowest answer. */
interface Seen {
  acks: number[];
  refused: number;
  slowestMs: number;
}

export const failover = {
  name: "failover",
  summary:
    "um nó de um cluster de 3 morto sob um fluxo de requisições, nas duas edições: o líder muda, nada perdido nem em dobro, nenhuma espera de 5 s",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "Um cluster de três brokers guarda cada registro nos três e confirma uma escrita quando\n" +
        "dois a têm, então um pode morrer sem perder nada. O que um cliente sente é o failover: o\n" +
        "tempo até os sobreviventes assumirem o que o broker morto liderava. O cluster Kafka da\n" +
        "loja tem três controllers próprios, que cercam um broker calado depois de 2,5 s, e no\n" +
        "RabbitMQ uma publicação perdida com o seu nó é tentada de novo em outro, então a meta é\n" +
        "a própria espera de confirmação da spec: ninguém espera 5 s, nada se perde nem é feito duas vezes.",
    );
    await eventLog(w);
    await broker(w);
  },
};

/**
 * Two clients, each doing `one` request after another 150 ms apart, until the returned
 * function is called (it waits for the requests in flight).
 */
function twoClients(one: () => Promise<void>): () => Promise<void> {
  let streaming = true;
  const client = async () => {
    while (streaming) {
      await one();
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  const stream = Promise.all([client(), client()]);
  return async () => {
    streaming = false;
    await stream;
  };
}

/** Until the stream has an acknowledgement after `at`, 30 s at most. */
const servedAfter = (seen: Seen, at: number) =>
  waitFor(() => seen.acks.some((t) => t > at), { timeoutMs: 30_000, intervalMs: 100 }).catch(
    () => false,
  );

/** A Kafka cluster of the experiment's own: three brokers and three controllers, on ports free now. */
async function kafkaClusterOfItsOwn(w: LabWorld) {
  const { say } = w;
  say.doing("Iniciando um cluster Kafka de três só do experimento, em portas livres agora");
  const name = `lab-failover-${randomBytes(3).toString("hex")}`;
  const nodes = [];
  for (let i = 0; i < 3; i++) {
    const port = await twoFreePorts();
    nodes.push({ port, controllerPort: port + 1 });
  }
  const quiet = () => {};
  w.atEnd(() => deleteCluster(name));
  w.atEnd(() => stopKafkaCluster(quiet, { name }));
  const settings = { host: "127.0.0.1", nodes };
  const started = await startKafkaCluster(settings, quiet, { name, jvm: SHORT_LIVED_JVM });
  const brokers = started.brokers.join(",");
  say.saw(`Cluster Kafka de três em ${brokers} (${(started.ms / 1000).toFixed(1)} s)`);

  return { name, settings, brokers, quiet };
}

/** The orders API and one quick payments instance on the cluster. */
async function eventLogServices(w: LabWorld, brokers: string) {
  const { say } = w;
  const ordersDb = w.dbPath("failover-pedidos");
  const api = await w.startEventLog("orders-api", "orders-api", brokers, {
    PORTA: String(w.options.port),
    DB_PATH: ordersDb,
  });
  const payments = await w.startEventLog("caixa-1", "payments", brokers, {
    INSTANCIA: "caixa-1",
    TEMPO_DECISAO_MS: "100",
  });
  const url = api.url();
  say.saw(`API de pedidos em ${url}`);
  say.watch(`o painel da plataforma: ${url}/plataforma (ou a página web com VITE_API_URL=${url}`);
  say.watch("npm run dev -w web): os líderes mudando, o nó fora, partições sub-replicadas");

  return { api, payments, url, ordersDb };
}

/** The event-log edition on a Kafka cluster of the experiment's own: the leader killed. */
async function eventLog(w: LabWorld) {
  const { say } = w;
  const cluster = await kafkaClusterOfItsOwn(w);
  const { api, payments, url, ordersDb } = await eventLogServices(w, cluster.brokers);
  const seen: Seen = { acks: [], refused: 0, slowestMs: 0 };
  const placed: number[] = [];
  let n = 0;
  say.doing("Fazendo pedidos, dois de cada vez, durante todo o experimento");
  const stop = twoClients(async () => {
    const at = Date.now();
    const res = await placeOrder(url, n++).catch(() => null);
    seen.slowestMs = Math.max(seen.slowestMs, Date.now() - at);
    if (res?.status === 201) {
      seen.acks.push(Date.now());
      placed.push(res.body.id);
    } else seen.refused++;
  });
  await waitFor(async () => placed.length >= 10, { timeoutMs: 30_000, what: "10 orders placed" });
  // The clients stop however the kill ends: a failed step must not leave them running.
  const { killedAt, backAt } = await killKafkaLeader(w, cluster, url, seen).finally(stop);
  await tellKafkaHalf(w, { url, ordersDb, brokers: cluster.brokers }, placed, {
    seen,
    killedAt,
    backAt,
  });
  // Six idle JVMs still heartbeat every 250 ms: stopped now, they take no CPU from the
  // RabbitMQ cluster's election (a RabbitMQ half run beside them waited 5.1-6.3 s, issue 55).
  say.doing("Parando o cluster Kafka e os seus serviços antes da metade RabbitMQ");
  await Promise.all([api.stop(), payments.stop()]);
  await stopKafkaCluster(cluster.quiet, { name: cluster.name });
}

const panelOf = async (url: string) => (await send<Plataforma>("GET", `${url}/plataforma`)).body;

/**
 * A topic's partitions as the panel shows them. The panel answers within 2 s even when it
 * could not read Kafka (no partitions then): a reading counts once it has them.
 */
const partitionsOf = (url: string, topic: string) =>
  waitFor(
    async () => {
      const ps = (await panelOf(url)).topicos.find((t) => t.topic === topic)?.particoes ?? [];
      return ps.length > 0 && ps;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: "the panel to read the partitions" },
  );

/** The leader of pedidos-criados[0] killed -9; until the panel shows it moved, the stream served, the node back in sync. */
async function killKafkaLeader(
  w: LabWorld,
  { name, settings, brokers, quiet }: Awaited<ReturnType<typeof kafkaClusterOfItsOwn>>,
  url: string,
  seen: Seen,
) {
  const { say } = w;
  const { topics } = w.names;
  const panel = () => panelOf(url);
  const partitions = () => partitionsOf(url, topics.pedidosCriados);
  const before = await partitions();
  // The controllers are processes of their own (ids 101-103): a broker's death is one role's.
  const controller = await activeController(brokers);
  const target = before[0] as (typeof before)[number];
  const leader = target.leader;
  say.saw(
    `Líderes de ${topics.pedidosCriados} agora: ${before.map((p) => p.leader).join(", ")}; o nó ${controller}, um controller dedicado, é o ativo`,
  );
  say.doing(
    `Matando o nó ${leader} (kill -9), o líder de ${topics.pedidosCriados}[${target.partition}]`,
  );
  const killedAt = Date.now();
  await stopKafka(quiet, { instance: clusterNode(name, leader), signal: "SIGKILL" });
  const shown = await waitFor(
    async () => {
      const p = await panel();
      const down = !p.cluster?.brokers.some((b) => b.nodeId === leader);
      const ps = p.topicos.find((t) => t.topic === topics.pedidosCriados)?.particoes ?? [];
      // An answer without partitions (metadata unreadable a moment after the kill) is no reading.
      return down && ps.length > 0 && ps.every((x) => x.leader >= 0 && x.leader !== leader) && ps;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: "the panel to show the leader moved" },
  );
  const movedMs = Date.now() - killedAt;
  say.saw(
    `${(movedMs / 1000).toFixed(1)} s depois da morte o painel mostra o nó ${leader} fora, líderes ${shown.map((p) => p.leader).join(", ")}, ${shown.filter((p) => p.isr.length < p.replicas.length).length} partições sub-replicadas`,
  );
  // Down until the stream was served by the survivors (an order confirmed after the move),
  // 30 s at most: a stream that never resumed is what the longest wait then tells.
  await servedAfter(seen, killedAt + movedMs);
  say.doing(`Iniciando o nó ${leader} de novo`);
  await startKafkaCluster(settings, quiet, { name, jvm: SHORT_LIVED_JVM });
  const backAt = Date.now();
  await waitFor(async () => (await partitions()).every((p) => p.isr.length === 3), {
    timeoutMs: 60_000,
    intervalMs: 500,
    what: "every partition with 3 in sync again",
  });
  say.saw(`O nó ${leader} voltou às réplicas em sincronia de toda partição`);
  return { killedAt, backAt };
}

/** Counted from the orders database and the results topic: lost, doubled, the longest wait. */
async function tellKafkaHalf(
  w: LabWorld,
  { url, ordersDb, brokers }: { url: string; ordersDb: string; brokers: string },
  placed: number[],
  { seen, killedAt, backAt }: { seen: Seen; killedAt: number; backAt: number },
) {
  const { say } = w;
  const { topics } = w.names;
  const orders = await waitFor(
    async () => {
      const list = await listOrders(url);
      return list.every((o) => o.status !== "AGUARDANDO_PAGAMENTO") && list;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: "every order decided" },
  ).catch(() => listOrders(url));
  const open = placed.filter(
    (id) => orders.find((o) => o.id === id)?.status === "AGUARDANDO_PAGAMENTO",
  );
  const results = await readTopic(brokers, topics.pagamentosResultados);
  const decisions = new Map<number, number>();
  for (const r of results) {
    const id = Number((r.value as { pedidoId: number }).pedidoId);
    decisions.set(id, (decisions.get(id) ?? 0) + 1);
  }
  const applied = queryRows<{ pedido_id: number; n: number }>(
    ordersDb,
    "SELECT pedido_id, COUNT(*) AS n FROM historico WHERE etapa = 'resultado-aplicado' GROUP BY pedido_id",
  );
  const redone = [...decisions.values()].filter((x) => x > 1).length;
  const longest = longestWithoutAck(seen.acks, killedAt, backAt);

  say.check(
    open.length === 0,
    `Kafka, perdidos: ${placed.length} pedidos confirmados, ${open.length} nunca decididos`,
  );
  say.check(
    applied.every((a) => a.n === 1) && [...decisions.values()].every((x) => x <= 2),
    `Kafka, em dobro: o resultado de cada pedido aplicado uma vez; ${redone} pedidos decididos duas vezes (trabalho que um nó morto impediu de confirmar), nenhum mais`,
  );
  say.check(
    longest < WAIT_MS && seen.refused === 0,
    `Kafka, maior espera: ${(longest / 1000).toFixed(1)} s sem um pedido confirmado a partir da morte (meta abaixo de 5 s), ${seen.refused} responderam 500`,
  );
}

/** A RabbitMQ cluster of the experiment's own: three nodes on ports free now. */
async function rabbitClusterOfItsOwn(w: LabWorld) {
  const { say } = w;
  say.doing("Iniciando um cluster RabbitMQ de três só do experimento, em portas livres agora");
  const tag = randomBytes(3).toString("hex");
  const nodes = [];
  for (let i = 1; i <= 3; i++) {
    const ports = {
      amqp: await freePort(),
      distribution: await freePort(),
      panel: await freePort(),
    };
    const name = `lab-failover-${tag}-${i}`;
    const node = rabbitNode(name, mkdtempSync(join(scratchDir(), `${name}-`)), ports);
    w.atEnd(() => node.remove());
    w.atEnd(() => node.stop());
    nodes.push(node);
  }
  const startedAt = Date.now();
  await startRabbitCluster(nodes, w.config.rabbit, () => {});
  say.saw(
    `Cluster RabbitMQ de três: ${nodes.map((n) => n.node).join(", ")} (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`,
  );
  return nodes;
}

/** Both broker services on the cluster, each with its own database. */
async function brokerServices(w: LabWorld, nodes: RabbitNode[]) {
  const { say } = w;
  const r = w.config.rabbit;
  const env = {
    BROKER_HOST: "127.0.0.1",
    BROKER_VHOST: "/",
    BROKER_USER: r.user,
    BROKER_PASSWORD: r.password,
    BROKER_MONITOR_USER: r.monitor.user,
    BROKER_MONITOR_PASSWORD: r.monitor.password,
    ...clusterAddresses(nodes),
  };
  const ordersDb = w.dbPath("failover-broker-orders");
  const paymentsDb = w.dbPath("failover-broker-payments");
  const orders = await w.start("broker-orders", "broker/orders", {
    ...env,
    DB_PATH: ordersDb,
    PORTA: "0",
  });
  await w.start("broker-payments", "broker/payments", { ...env, DB_PATH: paymentsDb });
  const url = orders.url();
  say.saw(`serviço de pedidos em ${url}`);
  say.watch(`o painel dele: ${url}/plataforma (a página broker também mostra): o líder`);
  say.watch("de pagamentos.solicitacoes mudando, e o nó morto fora");
  const queue = async () =>
    (await send<PlataformaBroker>("GET", `${url}/plataforma`)).body.filas.find(
      (f) => f.nome === "pagamentos.solicitacoes",
    );

  return { url, ordersDb, paymentsDb, queue };
}

/** The broker edition on a RabbitMQ cluster of the experiment's own: the queue's leader killed. */
async function broker(w: LabWorld) {
  const { say } = w;
  const nodes = await rabbitClusterOfItsOwn(w);
  const services = await brokerServices(w, nodes);
  const { url } = services;
  // Payment requests, each repeated with its key after a 503, as the spec tells a client.
  const seen: Seen = { acks: [], refused: 0, slowestMs: 0 };
  const keys: string[] = [];
  let n = 0;
  say.doing("Pedindo pagamentos, dois de cada vez, durante todo o experimento");
  const stop = twoClients(async () => {
    const i = n++;
    const order = await send<{ id: string }>("POST", `${url}/pedidos`, {
      clienteId: `lab-${i}`,
      itens: [{ sku: "caneca", quantidade: 1, precoUnitario: 10 + i }],
    });
    const key = randomUUID();
    keys.push(key);
    await payUntilAccepted(url, order.body.id, key, i % 3 === 0 ? "RECUSAR" : "APROVAR", seen);
  });
  await waitFor(async () => seen.acks.length >= 10, { timeoutMs: 30_000, what: "10 accepted" });
  const { killedAt, backAt } = await killQueueLeader(w, nodes, services, seen).finally(stop);
  await tellBrokerHalf(w, services, keys, { seen, killedAt, backAt });
}

/** One payment request, repeated with its key 500 ms after each refusal until 202 or 200. */
async function payUntilAccepted(
  url: string,
  pedidoId: string,
  key: string,
  cenario: string,
  seen: Seen,
) {
  for (;;) {
    const at = Date.now();
    const res = await send("POST", `${url}/pedidos/${pedidoId}/pagamentos`, {
      solicitacaoId: key,
      cenario,
    }).catch(() => null);
    seen.slowestMs = Math.max(seen.slowestMs, Date.now() - at);
    if (res?.status === 202 || res?.status === 200) {
      seen.acks.push(Date.now());
      return;
    }
    seen.refused++;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The leader of pagamentos.solicitacoes killed -9; until a new one is shown, the stream served, the node a member again. */
async function killQueueLeader(
  w: LabWorld,
  nodes: RabbitNode[],
  { url, queue }: Awaited<ReturnType<typeof brokerServices>>,
  seen: Seen,
) {
  const { say } = w;
  const before = await queue();
  const leader = nodes.find((x) => x.node === before?.lider);
  if (!before || !leader) throw new Error("the panel shows no leader for pagamentos.solicitacoes");
  say.doing(`Matando ${leader.node} (kill -9), o líder de pagamentos.solicitacoes`);
  const killedAt = Date.now();
  await leader.kill();
  const moved = await waitFor(
    async () => {
      const p = await send<PlataformaBroker>("GET", `${url}/plataforma`);
      const q = p.body.filas.find((f) => f.nome === "pagamentos.solicitacoes");
      const down = p.body.nos.find((x) => x.nome === leader.node)?.ativo === false;
      return q?.lider && q.lider !== leader.node && down && q;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: "the panel to show a new leader" },
  );
  say.saw(
    `${((Date.now() - killedAt) / 1000).toFixed(1)} s depois da morte o painel mostra ${moved.lider} liderando e ${leader.node} fora`,
  );
  // Down until the stream was served by the survivors (a request accepted after the move),
  // 30 s at most: a stream that never resumed is what the longest wait then tells.
  await servedAfter(seen, Date.now());
  say.doing(`Iniciando ${leader.node} de novo`);
  await leader.start();
  const backAt = Date.now();
  await waitFor(async () => (await queue())?.emLinha.length === 3, {
    timeoutMs: 60_000,
    intervalMs: 500,
    what: "the node online again as a member",
  });
  say.saw(`${leader.node} é membro em linha de novo`);
  return { killedAt, backAt };
}

/** Counted from both services' databases: lost, doubled, the longest wait. */
async function tellBrokerHalf(
  w: LabWorld,
  { ordersDb, paymentsDb }: Awaited<ReturnType<typeof brokerServices>>,
  keys: string[],
  { seen, killedAt, backAt }: { seen: Seen; killedAt: number; backAt: number },
) {
  const { say } = w;
  const concluded = () =>
    queryRows<{ solicitacao_id: string; estado: string; resultados_aplicados: number }>(
      ordersDb,
      "SELECT solicitacao_id, estado, resultados_aplicados FROM solicitacoes",
    );
  await waitFor(
    async () => {
      const done = new Set(
        concluded()
          .filter((s) => s.estado === "CONCLUIDA")
          .map((s) => s.solicitacao_id),
      );
      return keys.every((k) => done.has(k));
    },
    { timeoutMs: 60_000, intervalMs: 500, what: "every request concluded" },
  ).catch(() => {});
  const rows = concluded();
  const lost = keys.filter((k) => rows.find((s) => s.solicitacao_id === k)?.estado !== "CONCLUIDA");
  const decisions = queryRows<{ solicitacao_id: string; n: number }>(
    paymentsDb,
    "SELECT solicitacao_id, COUNT(*) AS n FROM decisoes GROUP BY solicitacao_id",
  );
  const longest = longestWithoutAck(seen.acks, killedAt, backAt);
  say.check(
    lost.length === 0,
    `RabbitMQ, perdidos: ${keys.length} solicitações de pagamento aceitas, ${lost.length} nunca concluídas`,
  );
  say.check(
    decisions.every((d) => d.n === 1) && rows.every((s) => s.resultados_aplicados <= 1),
    "RabbitMQ, em dobro: cada solicitação decidida uma vez e o seu resultado aplicado uma vez",
  );
  say.check(
    longest < WAIT_MS && seen.refused === 0,
    `RabbitMQ, maior espera: ${(longest / 1000).toFixed(1)} s sem uma solicitação aceita a partir da morte (meta abaixo de 5 s), ${seen.refused} responderam 503`,
  );
}
