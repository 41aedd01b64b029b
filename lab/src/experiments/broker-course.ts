import { randomUUID } from "node:crypto";
import { ERROR_QUEUES, EXCHANGES, QUEUES, ROUTING_KEYS } from "@shop/contracts";
import { waitFor } from "@shop/service";
import amqp from "amqplib";
import { send } from "../../../harness/http.ts";
import { queryRows, type ServiceProcess } from "../../../harness/process.ts";
import type { LabWorld } from "../world.ts";

const APROVAR = "APROVAR";
const RECUSAR = "RECUSAR";

interface PedidoBroker {
  id: string;
  status: "ABERTO" | "EM_PAGAMENTO" | "PAGO";
  total: number;
}

interface Decisao {
  solicitacao_id: string;
  valor_centavos: number;
  aprovado: number;
  repeticoes: number;
}

/** The course's shop: a RabbitMQ node of its own, the orders service, and what each step uses. */
async function courseShop(w: LabWorld) {
  const { say } = w;
  say.doing("Iniciando um nó RabbitMQ só do experimento, e o serviço de pedidos");
  const rabbit = await w.ownRabbit();
  const ordersDb = w.dbPath("broker-orders");
  const paymentsDb = w.dbPath("broker-payments");
  const startOrders = () =>
    w.start("broker-orders", "broker/orders", {
      ...rabbit.env,
      DB_PATH: ordersDb,
      PORTA: String(w.options.port),
    });
  const startPayments = (extra: Record<string, string> = {}) =>
    w.start("broker-payments", "broker/payments", {
      ...rabbit.env,
      DB_PATH: paymentsDb,
      ...extra,
    });
  const orders: ServiceProcess = await startOrders();
  say.saw(`serviço de pedidos em ${orders.url()}`);
  say.watch(
    "as filas (pagamentos.solicitacoes, pedidos.resultados, as .erros) enquanto cada cenário roda",
  );

  // The orders service a step restarted: the address the next request goes to.
  const live = { orders };
  return {
    say,
    rabbit,
    ordersDb,
    live,
    startOrders,
    startPayments,
    url: () => live.orders.url(),
    ...(await courseChannel(w, rabbit.urlAdmin)),
    ...ordersClient(() => live.orders.url()),
    decisoes: (key: string) =>
      queryRows<Decisao>(paymentsDb, "SELECT * FROM decisoes WHERE solicitacao_id = ?", key),
  };
}

/** A confirm channel of the course's own: a queue's depth, and a publish that waits for its confirm. */
async function courseChannel(w: LabWorld, urlAdmin: string) {
  const connection = await amqp.connect(urlAdmin);
  w.atEnd(() => connection.close().catch(() => {}));
  const channel = await connection.createConfirmChannel();
  return {
    depth: async (queue: string) => (await channel.checkQueue(queue)).messageCount,
    publish: async (exchange: string, key: string, body: unknown) => {
      channel.publish(exchange, key, Buffer.from(JSON.stringify(body)), {
        persistent: true,
        contentType: "application/json",
      });
      await channel.waitForConfirms();
    },
  };
}

/** The orders service's HTTP API as the course uses it (its address may change on a restart). */
function ordersClient(url: () => string) {
  const status = async (id: string) =>
    (await send<PedidoBroker>("GET", `${url()}/pedidos/${id}`)).body.status;
  return {
    novoPedido: async () =>
      (
        await send<PedidoBroker>("POST", `${url()}/pedidos`, {
          clienteId: "lab",
          itens: [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }],
        })
      ).body,
    requestPagamento: (id: string, solicitacaoId: string, cenario: string) =>
      send<Record<string, unknown>>("POST", `${url()}/pedidos/${id}/pagamentos`, {
        solicitacaoId,
        cenario,
      }),
    status,
    until: (id: string, want: PedidoBroker["status"], what = `order ${id} ${want}`) =>
      waitFor(async () => (await status(id)) === want, {
        timeoutMs: 30_000,
        intervalMs: 100,
        what,
      }),
  };
}
type Course = Awaited<ReturnType<typeof courseShop>>;

/** 1. Payments down: the request is accepted (202) and waits in its queue. */
async function pendingWhilePaymentsDown(c: Course) {
  const { say, depth, novoPedido, requestPagamento, status } = c;
  say.doing("1. O pagamento não está rodando: pedindo uma aprovação");
  const p1 = await novoPedido();
  const k1 = randomUUID();
  const r1 = await requestPagamento(p1.id, k1, APROVAR);
  const ready1 = await depth(QUEUES.solicitacoes);
  say.saw(
    `resposta ${r1.status}; pedido ${await status(p1.id)}; ${ready1} mensagem Ready em ${QUEUES.solicitacoes}`,
  );
  say.check(
    r1.status === 202 && (await status(p1.id)) === "EM_PAGAMENTO" && ready1 === 1,
    "1. consumidor parado: 202, o pedido EM_PAGAMENTO, a mensagem Ready em pagamentos.solicitacoes",
  );

  return { p1, k1 };
}

/** 2. The HTTP rules: a pending repeat, a conflict, an unknown order, a bad key, locked items. */
async function httpRules(c: Course, p1: PedidoBroker, k1: string) {
  const { say, requestPagamento, url } = c;
  say.doing(
    "2. As regras HTTP: uma repetição pendente, um conflito, um pedido desconhecido, uma chave inválida, itens travados",
  );
  const repeat = await requestPagamento(p1.id, k1, APROVAR);
  const conflict = await requestPagamento(p1.id, k1, RECUSAR);
  const unknown = await requestPagamento(
    "00000000-0000-4000-8000-000000000000",
    randomUUID(),
    APROVAR,
  );
  const bad = await requestPagamento(p1.id, "nao-e-uuid", APROVAR);
  const item = await send("POST", `${url()}/pedidos/${p1.id}/itens`, {
    sku: "PAO",
    quantidade: 1,
    precoUnitario: 1.5,
  });
  const codes = [repeat, conflict, unknown, bad, item].map((r) => r.status);
  say.saw(
    `respostas: repetição pendente ${codes[0]}, conflito ${codes[1]}, desconhecido ${codes[2]}, formato inválido ${codes[3]}, item ${codes[4]}`,
  );
  say.check(
    codes.join(",") === "202,409,404,400,409",
    "2. repetição pendente 202, conflito 409, pedido desconhecido 404, formato inválido 400, itens travados 409",
  );
}

/** 3. Two deliveries of one request: one decision stored. */
async function twoDeliveriesOneDecision(c: Course, p1: PedidoBroker, k1: string) {
  const { say, depth, status, until, decisoes } = c;
  say.doing(
    `3. Iniciando o pagamento: ${await depth(QUEUES.solicitacoes)} entregas de uma solicitação esperam (a primeira e a repetição)`,
  );
  const payments = await c.startPayments();
  await until(p1.id, "PAGO");
  await waitFor(async () => (await depth(QUEUES.solicitacoes)) === 0, {
    timeoutMs: 15_000,
    what: "the queue drained",
  });
  const d3 = decisoes(k1);
  say.saw(
    `decisões guardadas para a chave: ${d3.length}; entregas reconhecidas como repetição: ${d3[0]?.repeticoes}`,
  );
  say.check(
    d3.length === 1 && (d3[0]?.repeticoes ?? 0) >= 1 && (await status(p1.id)) === "PAGO",
    "3. uma aprovação entregue duas vezes deu uma decisão guardada e um pedido PAGO",
  );

  return payments;
}

/** 4. A refusal, then an approval; the old refusal replayed does not reopen the order. */
async function refusalThenApproval(c: Course) {
  const { say, publish, novoPedido, requestPagamento, status, until, ordersDb } = c;
  say.doing(
    "4. Recusa, depois aprovação no mesmo pedido; depois o resultado da velha recusa chega de novo",
  );
  const p4 = await novoPedido();
  const recusa = randomUUID();
  await requestPagamento(p4.id, recusa, RECUSAR);
  await until(p4.id, "ABERTO", "the refused order back to ABERTO");
  const aprovacao = randomUUID();
  await requestPagamento(p4.id, aprovacao, APROVAR);
  await until(p4.id, "PAGO");
  const repeatsBefore =
    queryRows<{ n: number }>(
      ordersDb,
      "SELECT resultados_repetidos AS n FROM solicitacoes WHERE solicitacao_id = ?",
      recusa,
    )[0]?.n ?? 0;
  await publish(EXCHANGES.events, ROUTING_KEYS.resultado, {
    versao: 1,
    solicitacaoId: recusa,
    pedidoId: p4.id,
    valor: p4.total,
    aprovado: false,
    motivo: "recusado pelo simulador (cenário RECUSAR)",
  });
  await waitFor(
    () =>
      (queryRows<{ n: number }>(
        ordersDb,
        "SELECT resultados_repetidos AS n FROM solicitacoes WHERE solicitacao_id = ?",
        recusa,
      )[0]?.n ?? 0) > repeatsBefore,
    { timeoutMs: 15_000, what: "the old refusal recognised as a repeat" },
  );
  say.check(
    (await status(p4.id)) === "PAGO" &&
      (await requestPagamento(p4.id, randomUUID(), APROVAR)).status === 409,
    "4. recusa (ABERTO), depois aprovação (PAGO); a velha recusa repetida foi reconhecida como repetição e não reabriu o pedido",
  );

  return { p4, aprovacao };
}

/** 5. A real redelivery: payments killed after deciding, before its ack; both services restarted. */
async function realRedelivery(c: Course, running: ServiceProcess) {
  const { say, depth, novoPedido, requestPagamento, until, decisoes } = c;
  say.doing("5. O pagamento decide e é morto antes do ack; depois os dois serviços reiniciam");
  let payments = running;
  await payments.stop();
  payments = await c.startPayments({ PAUSA_ANTES_DO_ACK_MS: "60000" });
  const p5 = await novoPedido();
  const k5 = randomUUID();
  await requestPagamento(p5.id, k5, APROVAR);
  await waitFor(() => decisoes(k5).length === 1, {
    timeoutMs: 15_000,
    what: "the decision stored",
  });
  await payments.kill();
  // The broker takes the unacknowledged delivery back once it sees the connection gone.
  const requeued = await waitFor(async () => (await depth(QUEUES.solicitacoes)) === 1, {
    timeoutMs: 15_000,
    what: "the unacknowledged message back in the queue",
  }).catch(() => false);
  say.saw(
    `decisão guardada, pagamento morto (SIGKILL) antes do ack: a mensagem ${requeued ? "está Ready de novo" : "não voltou"} em ${QUEUES.solicitacoes}`,
  );
  await c.live.orders.stop();
  c.live.orders = await c.startOrders();
  payments = await c.startPayments();
  await until(p5.id, "PAGO");
  const d5 = decisoes(k5);
  say.saw(`depois do reinício: ${d5.length} decisão, ${d5[0]?.repeticoes} reentrega reconhecida`);
  say.check(
    requeued === true && d5.length === 1 && (d5[0]?.repeticoes ?? 0) >= 1,
    "5. uma reentrega real depois de reiniciar os dois serviços: a mesma decisão, uma vez, e o pedido PAGO",
  );

  return { p5, k5, d5 };
}

/** 6. Divergent content under decided keys, in either direction: to the .erros queues. */
async function divergentContent(
  c: Course,
  earlier: { p4: PedidoBroker; aprovacao: string; p5: PedidoBroker; k5: string; d5: Decisao[] },
) {
  const { say, depth, publish, status, decisoes, ordersDb } = c;
  const { p4, aprovacao, p5, k5, d5 } = earlier;
  say.doing(
    "6. Conteúdo divergente sob chaves decididas: uma solicitação com outro valor, um resultado com outro valor",
  );
  const before = {
    solicitacoes: await depth(ERROR_QUEUES.solicitacoes),
    resultados: await depth(ERROR_QUEUES.resultados),
  };
  await publish(EXCHANGES.commands, ROUTING_KEYS.solicitar, {
    versao: 1,
    solicitacaoId: k5,
    pedidoId: p5.id,
    valor: 99.99,
    cenario: APROVAR,
  });
  await publish(EXCHANGES.events, ROUTING_KEYS.resultado, {
    versao: 1,
    solicitacaoId: aprovacao,
    pedidoId: p4.id,
    valor: 1.23,
    aprovado: true,
    motivo: "divergente",
  });
  await waitFor(
    async () =>
      (await depth(ERROR_QUEUES.solicitacoes)) === before.solicitacoes + 1 &&
      (await depth(ERROR_QUEUES.resultados)) === before.resultados + 1,
    { timeoutMs: 30_000, what: "both divergent messages in .erros" },
  );
  const d6 = decisoes(k5);
  const record = queryRows<{ valor_centavos: number; aprovado: number }>(
    ordersDb,
    "SELECT valor_centavos, aprovado FROM solicitacoes WHERE solicitacao_id = ?",
    aprovacao,
  )[0];
  say.saw("cada uma foi tentada 3 vezes, depois mandada para a sua fila .erros");
  say.check(
    d6.length === 1 &&
      d6[0]?.valor_centavos === d5[0]?.valor_centavos &&
      record?.valor_centavos === Math.round(p4.total * 100) &&
      record?.aprovado === 1 &&
      (await status(p4.id)) === "PAGO" &&
      (await status(p5.id)) === "PAGO",
    "6. conteúdo divergente nas duas direções foi para a fila de erros, e nem a decisão nem o pedido mudaram",
  );
}

/** 7. The broker down: 503 within the 5 s wait; the same key recovers once it is back. */
async function brokerDown(c: Course) {
  const { say, novoPedido, requestPagamento, until, decisoes, ordersDb } = c;
  say.doing("7. Parando o RabbitMQ (o nó só do experimento) e pedindo um pagamento");
  const p7 = await novoPedido();
  const k7 = randomUUID();
  await c.rabbit.node.stopApp();
  const started = Date.now();
  const down = await requestPagamento(p7.id, k7, APROVAR);
  const seconds = (Date.now() - started) / 1000;
  const kept = queryRows<{ estado: string }>(
    ordersDb,
    "SELECT estado FROM solicitacoes WHERE solicitacao_id = ?",
    k7,
  )[0]?.estado;
  say.saw(
    `resposta ${down.status} depois de ${seconds.toFixed(1)} s ("${down.body.mensagem}"); o registro fica ${kept}`,
  );
  await c.rabbit.node.startApp();
  say.doing("O RabbitMQ voltou: repetindo a mesma solicitação, com a mesma chave");
  const back = await waitFor(
    async () => {
      const r = await requestPagamento(p7.id, k7, APROVAR);
      return r.status === 202 && r;
    },
    {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: "the repeat accepted once the services reconnected",
    },
  );
  await until(p7.id, "PAGO");
  say.check(
    down.status === 503 &&
      seconds <= 6 &&
      down.body.solicitacaoId === k7 &&
      kept === "PENDENTE" &&
      back.status === 202 &&
      decisoes(k7).length === 1,
    "7. broker fora: 503 dentro da espera de 5 s citando a chave, o registro mantido PENDENTE; com ele de volta, a mesma chave se recuperou (202, depois PAGO)",
  );
}

/** 8. The old shortcut: a client approving its own payment is refused. */
async function oldShortcut(c: Course) {
  const { say, novoPedido, status, url } = c;
  say.doing("8. O velho atalho: o cliente aprovando o próprio pagamento");
  const p8 = await novoPedido();
  const old = await Promise.all(
    [`/pedidos/${p8.id}/aprovacao`, `/pedidos/${p8.id}/pagamento`, "/pagamentos"].map(
      async (path) =>
        (await send("POST", `${url()}${path}`, { aprovado: true, motivo: "eu mesmo" })).status,
    ),
  );
  const smuggled = await send("POST", `${url()}/pedidos/${p8.id}/pagamentos`, {
    solicitacaoId: randomUUID(),
    cenario: APROVAR,
    aprovado: true,
  });
  say.saw(
    `as rotas velhas respondem ${old.join(", ")}; aprovado enviado à nova: ${smuggled.status}`,
  );
  say.check(
    old.every((s) => s === 404) && smuggled.status === 400 && (await status(p8.id)) === "ABERTO",
    "8. o velho atalho de aprovação acabou: 404, e o aprovado de um cliente é recusado (400); o pedido fica ABERTO",
  );
}

export const brokerCourse = {
  name: "broker-course",
  summary: "os oito cenários de validação do curso contra a edição broker (RabbitMQ)",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "A edição broker porta um curso cujas lições terminam com oito verificações: uma\n" +
        "solicitação espera na fila com o pagamento fora, as regras HTTP respondem\n" +
        "202/409/404/400, duplicatas e reentregas decidem uma vez, uma recusa e depois uma\n" +
        "aprovação nunca reabrem um pedido pago, conteúdo divergente vai para a fila de erros, um\n" +
        "broker fora responde 503 e se recupera com a mesma chave, e o velho atalho de aprovação\n" +
        "acabou. Cada um roda aqui, verificado pelas filas e pelos bancos dos dois serviços.",
    );
    const c = await courseShop(w);
    const { p1, k1 } = await pendingWhilePaymentsDown(c);
    await httpRules(c, p1, k1);
    const payments = await twoDeliveriesOneDecision(c, p1, k1);
    const { p4, aprovacao } = await refusalThenApproval(c);
    const { p5, k5, d5 } = await realRedelivery(c, payments);
    await divergentContent(c, { p4, aprovacao, p5, k5, d5 });
    await brokerDown(c);
    await oldShortcut(c);
  },
};
