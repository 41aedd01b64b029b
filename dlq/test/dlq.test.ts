import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { EXCHANGES, FILAS_ERROS, nomesKafka, ROUTING_KEYS } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig as brokerOrdersConfig } from "../../broker/orders/src/config.ts";
import { type OrdersService, startOrders } from "../../broker/orders/src/server.ts";
import { ROOT } from "../../infra/config.ts";
import { readConfig as ordersConfig } from "../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../orders-api/src/server.ts";
import { brokerEnv, prontas, publicarCru } from "../../test/helpers/broker.ts";
import { testKafka } from "../../test/helpers/kafka.ts";
import { createTestVhost, type TestVhost } from "../../test/helpers/rabbit.ts";
import { capturingLogger, http, serviceEnv, tempDb, testPrefix } from "../../test/helpers/shop.ts";
import { waitFor } from "../../test/helpers/wait.ts";

/** The dead-letter CLI as a person runs it. */
function dlq(env: NodeJS.ProcessEnv, ...args: string[]) {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", join(ROOT, "dlq/src/main.ts"), ...args],
    {
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("Dead letters of the event-log edition", () => {
  const prefix = testPrefix("dlq");
  const nomes = nomesKafka(prefix);
  const env = serviceEnv(prefix, { DB_PATH: tempDb("dlq") });
  let api: OrdersApi;

  beforeAll(async () => {
    api = await startOrdersApi(ordersConfig(env), capturingLogger("orders-api"));
  });
  afterAll(async () => {
    await api?.stop();
  });

  it("When a poison record is dead-lettered, then list shows it with reason, origin and attempts; redrive puts it back, it fails again and returns with 2 attempts; nothing is lost", async () => {
    const producer = testKafka().producer();
    await producer.connect();
    await producer.send({
      topic: nomes.topicos.pagamentosResultados,
      acks: -1,
      messages: [{ key: "7", value: '{"versao": 9}' }],
    });
    await producer.disconnect();
    const admin = testKafka().admin();
    await admin.connect();
    const dead = async () =>
      (await admin.fetchTopicOffsets(nomes.dlq.pagamentosResultados)).reduce(
        (s, o) => s + Number(o.high),
        0,
      );
    await waitFor(async () => (await dead()) === 1, { what: "the dead letter" });

    const list = dlq(env, "list", "--edition", "kafka");
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(
      new RegExp(
        `kafka:${nomes.dlq.pagamentosResultados}:0:0 {2}\\[pendente\\] {2}from ${nomes.topicos.pagamentosResultados}\\[\\d\\]@\\d+ {2}attempts=1 {2}reason=ResultadoPagamento: unknown versao 9`,
      ),
    );
    const show = dlq(
      env,
      "show",
      `kafka:${nomes.dlq.pagamentosResultados}:0:0`,
      "--edition",
      "kafka",
    );
    expect(JSON.parse(show.out)).toMatchObject({
      chave: "7",
      corpo: '{"versao": 9}',
      tentativas: 1,
    });

    const redrive = dlq(env, "redrive", "--all", "--edition", "kafka");
    expect(redrive.out).toMatch(/1 dead letter\(s\) redriven/);
    await waitFor(async () => (await dead()) === 2, { what: "the record to fail again" });
    await admin.disconnect();

    const after = dlq(env, "list", "--edition", "kafka", "--json");
    const cartas = JSON.parse(after.out) as { estado: string; tentativas: number; chave: string }[];
    expect(cartas.map((c) => [c.estado, c.tentativas, c.chave])).toEqual([
      ["reenviada", 1, "7"],
      ["pendente", 2, "7"],
    ]);
    expect(dlq(env, "redrive", "--all", "--edition", "kafka").out).toMatch(
      /1 dead letter\(s\) redriven/,
    );
  }, 120_000);
});

describe("Dead letters of the broker edition", () => {
  let vhost: TestVhost;
  let orders: OrdersService;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    vhost = await createTestVhost("dlq");
    env = brokerEnv(vhost, "dlq-orders");
    orders = await startOrders(brokerOrdersConfig(env), capturingLogger("broker-orders"));
  });
  afterAll(async () => {
    await orders?.stop();
    await vhost?.dispose();
  });

  it("When a result failed for an unknown key, then list shows it; once the key exists, redrive applies it (PAGO) and .erros is empty", async () => {
    const key = randomUUID();
    const pedido = (
      await http<{ id: string }>("POST", `${orders.url}/pedidos`, {
        clienteId: "c",
        itens: [{ sku: "A", quantidade: 1, precoUnitario: 12.5 }],
      })
    ).body;
    const resultado = JSON.stringify({
      versao: 1,
      solicitacaoId: key,
      pedidoId: pedido.id,
      valor: 12.5,
      aprovado: true,
      motivo: "ok",
    });
    await publicarCru(vhost, EXCHANGES.eventos, ROUTING_KEYS.resultado, resultado);
    await waitFor(async () => (await prontas(vhost, FILAS_ERROS.resultados)) === 1, {
      what: "the result in .erros",
    });

    const list = dlq(env, "list", "--edition", "rabbitmq");
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(
      /rabbitmq:pedidos\.resultados\.erros:1 {2}\[pendente\] {2}from pedidos\.resultados .*attempts=3 {2}reason=rejected/,
    );
    expect(await prontas(vhost, FILAS_ERROS.resultados)).toBe(1); // listing took nothing away

    // The request the result belongs to now exists (PENDENTE: no payments service runs here).
    expect(
      (
        await http("POST", `${orders.url}/pedidos/${pedido.id}/pagamentos`, {
          solicitacaoId: key,
          cenario: "APROVAR",
        })
      ).status,
    ).toBe(202);
    const redrive = dlq(
      env,
      "redrive",
      "rabbitmq:pedidos.resultados.erros:1",
      "--edition",
      "rabbitmq",
    );
    expect(redrive.out).toMatch(/1 dead letter\(s\) redriven/);
    await waitFor(
      async () =>
        (await http<{ status: string }>("GET", `${orders.url}/pedidos/${pedido.id}`)).body
          .status === "PAGO",
    );
    expect(await prontas(vhost, FILAS_ERROS.resultados)).toBe(0);
  }, 60_000);

  it("When a poison message is redriven, then it fails again and comes back with its attempts counted", async () => {
    await publicarCru(vhost, EXCHANGES.eventos, ROUTING_KEYS.resultado, "{not json");
    await waitFor(async () => (await prontas(vhost, FILAS_ERROS.resultados)) === 1);
    dlq(env, "redrive", "--all", "--edition", "rabbitmq");
    await waitFor(
      async () =>
        JSON.parse(dlq(env, "list", "--edition", "rabbitmq", "--json").out)[0]?.tentativas === 6,
      {
        what: "the message back in .erros with 6 attempts",
      },
    );
    const [c] = JSON.parse(dlq(env, "list", "--edition", "rabbitmq", "--json").out) as {
      cabecalhos: Record<string, string>;
      corpo: string;
    }[];
    expect(c?.corpo).toBe("{not json");
    expect(c?.cabecalhos["x-reenvios"]).toBe("1");
  }, 60_000);
});
