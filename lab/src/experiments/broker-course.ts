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

export const brokerCourse = {
  name: "broker-course",
  summary: "the course's eight validation scenarios against the broker edition (RabbitMQ)",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "The broker edition ports a course whose lessons end with eight checks: a request waits\n" +
        "in its queue while payments is down, the HTTP rules answer 202/409/404/400, duplicates\n" +
        "and redeliveries decide once, a refusal then an approval never reopen a paid order,\n" +
        "divergent content is dead-lettered, a broker down answers 503 and recovers with the\n" +
        "same key, and the old approval shortcut is gone. Each runs here, checked from the\n" +
        "queues and both services' databases.",
    );
    say.doing("Starting a RabbitMQ node of the experiment's own, and the orders service");
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
    let orders: ServiceProcess = await startOrders();
    const url = () => orders.url();
    say.saw(`orders service on ${url()}`);
    say.watch(
      "the queues (pagamentos.solicitacoes, pedidos.resultados, the .erros ones) as each scenario runs",
    );

    const connection = await amqp.connect(rabbit.urlAdmin);
    w.atEnd(() => connection.close().catch(() => {}));
    const channel = await connection.createConfirmChannel();
    const depth = async (queue: string) => (await channel.checkQueue(queue)).messageCount;
    const publish = async (exchange: string, key: string, body: unknown) => {
      channel.publish(exchange, key, Buffer.from(JSON.stringify(body)), {
        persistent: true,
        contentType: "application/json",
      });
      await channel.waitForConfirms();
    };
    const novoPedido = async () =>
      (
        await send<PedidoBroker>("POST", `${url()}/pedidos`, {
          clienteId: "lab",
          itens: [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }],
        })
      ).body;
    const requestPagamento = (id: string, solicitacaoId: string, cenario: string) =>
      send<Record<string, unknown>>("POST", `${url()}/pedidos/${id}/pagamentos`, {
        solicitacaoId,
        cenario,
      });
    const status = async (id: string) =>
      (await send<PedidoBroker>("GET", `${url()}/pedidos/${id}`)).body.status;
    const until = (id: string, want: PedidoBroker["status"], what = `order ${id} ${want}`) =>
      waitFor(async () => (await status(id)) === want, {
        timeoutMs: 30_000,
        intervalMs: 100,
        what,
      });
    const decisoes = (key: string) =>
      queryRows<Decisao>(paymentsDb, "SELECT * FROM decisoes WHERE solicitacao_id = ?", key);

    // 1. Payments down: the request is accepted and waits in its queue.
    say.doing("1. Payments is not running: requesting an approval");
    const p1 = await novoPedido();
    const k1 = randomUUID();
    const r1 = await requestPagamento(p1.id, k1, APROVAR);
    const ready1 = await depth(QUEUES.solicitacoes);
    say.saw(
      `answer ${r1.status}; order ${await status(p1.id)}; ${ready1} message Ready in ${QUEUES.solicitacoes}`,
    );
    say.check(
      r1.status === 202 && (await status(p1.id)) === "EM_PAGAMENTO" && ready1 === 1,
      "1. consumer stopped: 202, the order EM_PAGAMENTO, the message Ready in pagamentos.solicitacoes",
    );

    // 2. The HTTP rules.
    say.doing(
      "2. The HTTP rules: a pending repeat, a conflict, an unknown order, a bad key, locked items",
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
      `answers: pending repeat ${codes[0]}, conflict ${codes[1]}, unknown ${codes[2]}, bad format ${codes[3]}, item ${codes[4]}`,
    );
    say.check(
      codes.join(",") === "202,409,404,400,409",
      "2. pending repeat 202, conflict 409, unknown order 404, bad format 400, items locked 409",
    );

    // 3. Two deliveries of one request: one decision.
    say.doing(
      `3. Starting payments: ${await depth(QUEUES.solicitacoes)} deliveries of one request wait (the first and its repeat)`,
    );
    let payments = await startPayments();
    await until(p1.id, "PAGO");
    await waitFor(async () => (await depth(QUEUES.solicitacoes)) === 0, {
      timeoutMs: 15_000,
      what: "the queue drained",
    });
    const d3 = decisoes(k1);
    say.saw(
      `decisions stored for the key: ${d3.length}; deliveries recognised as repeats: ${d3[0]?.repeticoes}`,
    );
    say.check(
      d3.length === 1 && (d3[0]?.repeticoes ?? 0) >= 1 && (await status(p1.id)) === "PAGO",
      "3. an approval delivered twice gave one stored decision and a PAGO order",
    );

    // 4. Refusal, then approval; the old refusal replayed does not reopen.
    say.doing(
      "4. Refusal, then approval on the same order; then the old refusal's result arrives again",
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
      "4. refusal (ABERTO), then approval (PAGO); the old refusal replayed was recognised as a repeat and did not reopen the order",
    );

    // 5. A real redelivery: payments killed after deciding, before its ack; both restarted.
    say.doing("5. Payments decides and is killed before its ack; then both services restart");
    await payments.stop();
    payments = await startPayments({ PAUSA_ANTES_DO_ACK_MS: "60000" });
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
      `decision stored, payments killed (SIGKILL) before its ack: the message is ${requeued ? "Ready again" : "not back"} in ${QUEUES.solicitacoes}`,
    );
    await orders.stop();
    orders = await startOrders();
    payments = await startPayments();
    await until(p5.id, "PAGO");
    const d5 = decisoes(k5);
    say.saw(`after the restart: ${d5.length} decision, ${d5[0]?.repeticoes} redelivery recognised`);
    say.check(
      requeued === true && d5.length === 1 && (d5[0]?.repeticoes ?? 0) >= 1,
      "5. a real redelivery after restarting both services: the same decision, once, and the order PAGO",
    );

    // 6. Divergent content, in either direction.
    say.doing(
      "6. Divergent content under decided keys: a request with another valor, a result with another valor",
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
    say.saw("each was tried 3 times, then dead-lettered to its .erros queue");
    say.check(
      d6.length === 1 &&
        d6[0]?.valor_centavos === d5[0]?.valor_centavos &&
        record?.valor_centavos === Math.round(p4.total * 100) &&
        record?.aprovado === 1 &&
        (await status(p4.id)) === "PAGO" &&
        (await status(p5.id)) === "PAGO",
      "6. divergent content in either direction was dead-lettered, and neither decision nor order changed",
    );

    // 7. Broker down.
    say.doing("7. Stopping RabbitMQ (the experiment's own node) and requesting a payment");
    const p7 = await novoPedido();
    const k7 = randomUUID();
    await rabbit.node.stopApp();
    const started = Date.now();
    const down = await requestPagamento(p7.id, k7, APROVAR);
    const seconds = (Date.now() - started) / 1000;
    const kept = queryRows<{ estado: string }>(
      ordersDb,
      "SELECT estado FROM solicitacoes WHERE solicitacao_id = ?",
      k7,
    )[0]?.estado;
    say.saw(
      `answer ${down.status} after ${seconds.toFixed(1)} s ("${down.body.mensagem}"); the record stays ${kept}`,
    );
    await rabbit.node.startApp();
    say.doing("RabbitMQ is back: repeating the same request, with the same key");
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
      "7. broker down: 503 within the 5 s wait naming the key, the record kept PENDENTE; with it back, the same key recovered (202, then PAGO)",
    );

    // 8. The old shortcut.
    say.doing("8. The old shortcut: the client approving its own payment");
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
      `the old routes answer ${old.join(", ")}; aprovado sent to the new one: ${smuggled.status}`,
    );
    say.check(
      old.every((s) => s === 404) && smuggled.status === 400 && (await status(p8.id)) === "ABERTO",
      "8. the old approval shortcut is gone: 404, and a client's aprovado is refused (400); the order stays ABERTO",
    );
  },
};
