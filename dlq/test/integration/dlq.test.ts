import { randomUUID } from "node:crypto";
import { ERROR_QUEUES, EXCHANGES, kafkaNames, ROUTING_KEYS } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig as brokerOrdersConfig } from "../../../broker/orders/src/config.ts";
import { type OrdersService, startOrders } from "../../../broker/orders/src/server.ts";
import { createVhost, type ShopVhost } from "../../../harness/vhost.ts";
import { freePort } from "../../../infra/ports.ts";
import { readConfig as ordersConfig } from "../../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../../orders-api/src/server.ts";
import { brokerEnv, publishRaw, readyCount } from "../../../test/helpers/broker.ts";
import { runTool, STACK_FRAME } from "../../../test/helpers/cli.ts";
import { collectMessages, testKafka } from "../../../test/helpers/kafka.ts";
import {
  capturingLogger,
  http,
  serviceEnv,
  tempDb,
  uniquePrefix,
} from "../../../test/helpers/shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";

/**
 * The dead-letter CLI as a person runs it, without holding this process: the orders API and
 * orders service this file runs here go on heartbeating meanwhile. Run with spawnSync, a CLI
 * that took longer than the consumers' 6 s session on a busy machine cost the orders API its
 * group membership, and the records it had dead-lettered and not yet committed were read and
 * dead-lettered again (9 letters where 6 were counted, 2026-12-01).
 */
const dlq = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  runTool("dlq/src/main.ts", args, env, 60_000);

describe("Dead letters of the event-log edition", () => {
  const prefix = uniquePrefix("dlq");
  const nomes = kafkaNames(prefix);
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
      topic: nomes.topics.pagamentosResultados,
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

    const list = await dlq(env, "list", "--edition", "kafka");
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(
      new RegExp(
        `kafka:${nomes.dlq.pagamentosResultados}:0:0 {2}\\[pendente\\] {2}from ${nomes.topics.pagamentosResultados}\\[\\d\\]@\\d+ {2}attempts=1 {2}reason=ResultadoPagamento: unknown versao 9`,
      ),
    );
    const show = await dlq(
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

    const redrive = await dlq(env, "redrive", "--all", "--edition", "kafka");
    expect(redrive.out).toMatch(/1 dead letter\(s\) redriven/);
    await waitFor(async () => (await dead()) === 2, { what: "the record to fail again" });
    await admin.disconnect();

    const after = await dlq(env, "list", "--edition", "kafka", "--json");
    const cartas = JSON.parse(after.out) as { estado: string; tentativas: number; chave: string }[];
    expect(cartas.map((c) => [c.estado, c.tentativas, c.chave])).toEqual([
      ["reenviada", 1, "7"],
      ["pendente", 2, "7"],
    ]);
    expect((await dlq(env, "redrive", "--all", "--edition", "kafka")).out).toMatch(
      /1 dead letter\(s\) redriven/,
    );
  }, 120_000);
});

/** Every record of a topic now, as bytes, read by a group of its own from offset 0. */
async function registros(topic: string, count: number) {
  const consumer = testKafka().consumer({ groupId: `${topic}-leitor-${randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const lidos = await collectMessages(consumer, count);
    return lidos.map((p) => p.message).sort((a, b) => Number(a.offset) - Number(b.offset));
  } finally {
    await consumer.disconnect();
  }
}

describe("Dead letters of the event-log edition: each letter's own state, bytes kept (issue 14)", () => {
  const prefix = uniquePrefix("dlq-bytes");
  const nomes = kafkaNames(prefix);
  const env = serviceEnv(prefix, { DB_PATH: tempDb("dlq-bytes") });
  let api: OrdersApi;

  beforeAll(async () => {
    api = await startOrdersApi(ordersConfig(env), capturingLogger("orders-api"));
  });
  afterAll(async () => {
    await api?.stop();
  });

  it("When letter 2 of 0, 1, 2 is redriven by its id, then 0 and 1 stay pending, and redrive --all sends exactly the pending ones, letter 2's failed copy among them and letter 2 not again; a letter with a null key, non-UTF-8 bytes and its own headers goes back byte for byte", async () => {
    const lixo = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x1b, 0x5b, 0x32, 0x4a]);
    const cabecalho = Buffer.from([0xc3, 0x28, 0x9b]);
    // Idempotent: a produce kafkajs sends again (its answer late on a busy machine) is
    // written once, so the topic holds exactly the three records the letters count.
    const producer = testKafka().producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({
      topic: nomes.topics.pagamentosResultados,
      acks: -1,
      messages: [
        { key: null, value: lixo, headers: { origem: cabecalho } },
        { key: "8", value: '{"versao": 9}' },
        { key: "9", value: '{"versao": 9}' },
      ],
    });
    await producer.disconnect();
    const dlqTopic = nomes.dlq.pagamentosResultados;

    // The dead letter holds the record as it was, byte for byte, with the reason beside it.
    const bruta = (await registros(dlqTopic, 3)).find((m) => m.key === null);
    expect(bruta?.key).toBeNull();
    expect(bruta?.value).toEqual(lixo);
    expect(bruta?.headers?.origem).toEqual(cabecalho);

    // Letters 0, 1 and 2 of the dead-letter topic (its one partition), in the order the consumer met them.
    const lista = async () =>
      JSON.parse((await dlq(env, "list", "--edition", "kafka", "--json")).out) as {
        id: string;
        estado: string;
        chave: string | null;
        origem: string;
        tentativas: number;
      }[];
    const primeira = await lista();
    const ids = primeira.map((c) => c.id);
    // Said on failure: each letter's place, origin and attempt, and what the original topic
    // holds (red once in CI with 7 letters here, the file's own count at its end).
    const admin = testKafka().admin();
    await admin.connect();
    const origens = (await admin.fetchTopicOffsets(nomes.topics.pagamentosResultados)).map((o) => [
      o.partition,
      o.high,
    ]);
    await admin.disconnect();
    expect(
      ids,
      JSON.stringify({ letters: primeira.map((c) => [c.id, c.origem, c.tentativas]), origens }),
    ).toHaveLength(3);
    const terceira = ids[2] as string;
    const um = await dlq(env, "redrive", terceira, "--edition", "kafka");
    expect(um.out, um.err).toMatch(/1 dead letter\(s\) redriven/);
    const depois = (await lista()).slice(0, 3);
    expect(depois.map((c) => c.estado)).toEqual(["pendente", "pendente", "reenviada"]);
    // Letter 2 fails again and comes back as letter 3, pending, its attempts counted. Waited
    // for: a redrive --all run before it is back would not see it (while this file's orders
    // API ran in a process the CLI held, it was never back before).
    const voltaDaTerceira = (await registros(dlqTopic, 4))[3];
    expect(voltaDaTerceira?.headers?.["dlq-reenviado-de"]?.toString()).toBe(
      terceira.replace(/^kafka:/, ""),
    );
    expect(voltaDaTerceira?.headers?.["dlq-tentativas"]?.toString()).toBe("2");

    // Every pending letter and only them: 0, 1 and 3, never 2 again.
    const todas = await dlq(env, "redrive", "--all", "--edition", "kafka");
    const quarta = (await lista())[3]?.id as string;
    for (const id of [ids[0], ids[1], quarta]) expect(todas.out).toContain(`redriven: ${id}`);
    expect(todas.out).not.toContain(`redriven: ${terceira}`);

    // Each redriven letter fails again: 4 letters redriven, 4 more dead letters, nothing lost.
    const final = await registros(dlqTopic, 7);
    expect(final).toHaveLength(7);
    const voltou = final.slice(4).find((m) => m.key === null);
    expect(voltou?.value).toEqual(lixo);
    expect(voltou?.headers?.origem).toEqual(cabecalho);
    // Its third attempt if it was letter 2 (a null key lands on any partition, so the
    // consumer may meet it first or last), else its second.
    const nullKeyWasThird = (await lista()).find((c) => c.id === terceira)?.chave === null;
    expect(voltou?.headers?.["dlq-tentativas"]?.toString()).toBe(nullKeyWasThird ? "3" : "2");
    expect((await lista()).map((c) => c.estado)).toEqual([
      "reenviada",
      "reenviada",
      "reenviada",
      "reenviada",
      "pendente",
      "pendente",
      "pendente",
    ]);
  }, 120_000);

  it("When a dead letter carries escape sequences in its reason, headers and body, then list and show print them escaped", async () => {
    const producer = testKafka().producer();
    await producer.connect();
    await producer.send({
      topic: nomes.dlq.pedidosCriados,
      acks: -1,
      messages: [
        {
          key: "1",
          value: "\u001b[2J{}",
          headers: {
            "dlq-motivo": "\u001b]0;pwned\u0007",
            "dlq-topico-original": nomes.topics.pedidosCriados,
            x: "a\u009b31m",
          },
        },
      ],
    });
    await producer.disconnect();
    for (const args of [
      ["list"],
      ["list", "--json"],
      ["show", `kafka:${nomes.dlq.pedidosCriados}:0:0`],
    ]) {
      const r = await dlq(env, ...args, "--edition", "kafka");
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain("\\u001b");
      for (const c of ["\u001b", "\u0007", "\u009b"])
        expect(r.out, args.join(" ")).not.toContain(c);
    }
  }, 60_000);

  it("When a record's dead letter was written twice (read again before its commit), then list shows it once, redrive sends it once and redrive --all not again", async () => {
    const topic = nomes.dlq.pedidosCriados;
    const copy = {
      key: "duas-vezes",
      value: '{"versao": 9}',
      headers: {
        "dlq-motivo": "PedidoCriado: unknown versao 9",
        "dlq-tentativas": "1",
        "dlq-topico-original": nomes.topics.pedidosCriados,
        "dlq-particao-original": "2",
        "dlq-offset-original": "41",
      },
    };
    const producer = testKafka().producer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [copy, copy] });
    await producer.disconnect();
    const lettersOfTheKey = async () =>
      (
        JSON.parse((await dlq(env, "list", "--edition", "kafka", "--json")).out) as {
          id: string;
          estado: string;
          chave: string | null;
        }[]
      ).filter((c) => c.chave === "duas-vezes");
    const [letter, ...others] = await lettersOfTheKey();
    expect(others).toEqual([]);
    const list = await dlq(env, "list", "--edition", "kafka");
    expect(list.err).toMatch(/1 dead letter\(s\) written twice/);
    expect(list.err).toContain(`is a copy of ${letter?.id}`);

    const one = await dlq(env, "redrive", letter?.id as string, "--edition", "kafka");
    expect(one.out).toMatch(/1 dead letter\(s\) redriven/);
    const all = await dlq(env, "redrive", "--all", "--edition", "kafka");
    expect(all.out).not.toContain(`-> ${nomes.topics.pedidosCriados}[2]@41`);
    expect((await lettersOfTheKey()).map((c) => c.estado)).toEqual(["reenviada"]);
    // What went back to the original topic: this record once, beside the hand-written letter
    // of the test before (redriven by --all), and not its copy too.
    const admin = testKafka().admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(nomes.topics.pedidosCriados);
    await admin.disconnect();
    expect(offsets.reduce((s, o) => s + Number(o.high), 0)).toBe(2);
    const back = await registros(nomes.topics.pedidosCriados, 2);
    expect(back.filter((m) => m.key?.toString() === "duas-vezes")).toHaveLength(1);
  }, 60_000);
});

describe("Dead letters of the broker edition", () => {
  let vhost: ShopVhost;
  let orders: OrdersService;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    vhost = await createVhost("dlq");
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
    await publishRaw(vhost, EXCHANGES.events, ROUTING_KEYS.resultado, resultado);
    await waitFor(async () => (await readyCount(vhost, ERROR_QUEUES.resultados)) === 1, {
      what: "the result in .erros",
    });

    const list = await dlq(env, "list", "--edition", "rabbitmq");
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(
      /rabbitmq:pedidos\.resultados\.erros:1 {2}\[pendente\] {2}from pedidos\.resultados .*attempts=3 {2}reason=rejected/,
    );
    expect(await readyCount(vhost, ERROR_QUEUES.resultados)).toBe(1); // listing took nothing away

    // The request the result belongs to now exists (PENDENTE: no payments service runs here).
    expect(
      (
        await http("POST", `${orders.url}/pedidos/${pedido.id}/pagamentos`, {
          solicitacaoId: key,
          cenario: "APROVAR",
        })
      ).status,
    ).toBe(202);
    const redrive = await dlq(
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
    expect(await readyCount(vhost, ERROR_QUEUES.resultados)).toBe(0);
  }, 60_000);

  it("When a poison message is redriven, then it fails again and comes back with its attempts counted", async () => {
    await publishRaw(vhost, EXCHANGES.events, ROUTING_KEYS.resultado, "{not json");
    await waitFor(async () => (await readyCount(vhost, ERROR_QUEUES.resultados)) === 1);
    await dlq(env, "redrive", "--all", "--edition", "rabbitmq");
    await waitFor(
      async () =>
        JSON.parse((await dlq(env, "list", "--edition", "rabbitmq", "--json")).out)[0]
          ?.tentativas === 6,
      {
        // Five more tries with their pauses, then a dlq CLI run per look: 22 s on the
        // machine of 2026-11-27, which ran the suite 2.3 times slower than the one before.
        timeoutMs: 45_000,
        what: "the message back in .erros with 6 attempts",
      },
    );
    const [c] = JSON.parse((await dlq(env, "list", "--edition", "rabbitmq", "--json")).out) as {
      cabecalhos: Record<string, string>;
      corpo: string;
    }[];
    expect(c?.corpo).toBe("{not json");
    expect(c?.cabecalhos["x-reenvios"]).toBe("1");
  }, 60_000);

  it("When a poison message is redriven with --corpo, then a fixed copy goes back instead of the poison and the order is PAGO; --corpo refuses --all and a body that is not JSON", async () => {
    const key = randomUUID();
    const pedido = (
      await http<{ id: string }>("POST", `${orders.url}/pedidos`, {
        clienteId: "c",
        itens: [{ sku: "A", quantidade: 2, precoUnitario: 5 }],
      })
    ).body;
    const pedir = { solicitacaoId: key, cenario: "APROVAR" };
    expect(
      (await http("POST", `${orders.url}/pedidos/${pedido.id}/pagamentos`, pedir)).status,
    ).toBe(202);
    // The letters other tests of this vhost left stay; this one is found by its key.
    const before = await readyCount(vhost, ERROR_QUEUES.resultados);
    // A result whose aprovado is a string: it breaks the contract and is dead-lettered.
    const poison = { versao: 1, solicitacaoId: key, pedidoId: pedido.id, valor: 10 };
    await publishRaw(
      vhost,
      EXCHANGES.events,
      ROUTING_KEYS.resultado,
      JSON.stringify({ ...poison, aprovado: "sim", motivo: "ok" }),
    );
    await waitFor(async () => (await readyCount(vhost, ERROR_QUEUES.resultados)) === before + 1, {
      what: "the poison result in .erros",
    });
    const letter = (
      JSON.parse((await dlq(env, "list", "--edition", "rabbitmq", "--json")).out) as {
        id: string;
        corpo: string;
      }[]
    ).find((c) => c.corpo.includes(key));
    const fixed = JSON.stringify({ ...poison, aprovado: true, motivo: "ok" });
    expect(
      (await dlq(env, "redrive", "--all", "--corpo", fixed, "--edition", "rabbitmq")).code,
    ).toBe(2);
    expect(
      (await dlq(env, "redrive", letter?.id as string, "--corpo", "{x", "--edition", "rabbitmq"))
        .code,
    ).toBe(2);
    expect(await readyCount(vhost, ERROR_QUEUES.resultados)).toBe(before + 1);

    const redrive = await dlq(
      env,
      "redrive",
      letter?.id as string,
      "--corpo",
      fixed,
      "--edition",
      "rabbitmq",
    );
    expect(redrive.out).toContain(`redriven (a fixed copy): ${letter?.id}`);
    await waitFor(
      async () =>
        (await http<{ status: string }>("GET", `${orders.url}/pedidos/${pedido.id}`)).body
          .status === "PAGO",
      { what: "the fixed copy applied" },
    );
    expect(await readyCount(vhost, ERROR_QUEUES.resultados)).toBe(before);
  }, 60_000);
});

describe("Issue 34: the dead-letter CLI says what is wrong in a sentence, and lists what it can", () => {
  let vhost: ShopVhost;
  let env: NodeJS.ProcessEnv;
  const polite = (r: { out: string; err: string }) => {
    expect(r.out).not.toMatch(STACK_FRAME);
    expect(r.err).not.toMatch(STACK_FRAME);
  };

  beforeAll(async () => {
    // A vhost where the broker edition never ran: none of the shop's queues.
    vhost = await createVhost("dlq-empty");
    env = { ...brokerEnv(vhost, "dlq-empty"), ...serviceEnv(uniquePrefix("dlq-empty")) };
  });
  afterAll(async () => {
    await vhost?.dispose();
  });

  it("When RabbitMQ has none of the shop's queues yet, then list shows Kafka's letters, says so in one line, and exits 0", async () => {
    const r = await dlq(env, "list");
    polite(r);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(
      `dlq: RabbitMQ (vhost ${vhost.vhost}) has none of the shop's dead-letter queues yet`,
    );
    expect(r.out).toMatch(/^0 dead letter\(s\), 0 pending$/m);
    const json = await dlq(env, "list", "--json");
    expect(JSON.parse(json.out)).toEqual([]);
  });

  it("When a Kafka letter is redriven and RabbitMQ has no queues, then RabbitMQ is not asked, and an id that is not there exits 1 with a sentence", async () => {
    const r = await dlq(env, "redrive", "kafka:nowhere.dlq:0:0");
    polite(r);
    expect(r.code).toBe(1);
    expect(r.err).toContain("no pending dead letter kafka:nowhere.dlq:0:0");
    expect(r.err).not.toContain("RabbitMQ");
  });

  it("When RabbitMQ refuses the user, then the sentence names the settings; Kafka is still listed (0), and RabbitMQ alone exits 1", async () => {
    const refused = { ...env, BROKER_PASSWORD: "not-the-password" };
    const both = await dlq(refused, "list");
    polite(both);
    expect(both.code).toBe(0);
    expect(both.err).toMatch(/dlq: RabbitMQ at .* refused the connection \(BROKER_USER/);
    const alone = await dlq(refused, "list", "--edition", "rabbitmq");
    polite(alone);
    expect(alone.code).toBe(1);
  });

  it("When RabbitMQ is not running where BROKER_PORT says, then the sentence says it cannot be reached and how to start it", async () => {
    const down = { ...env, BROKER_PORT: String(await freePort()) };
    const r = await dlq(down, "list", "--edition", "rabbitmq");
    polite(r);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cannot be reached .*npm run infra -- rabbitmq start/);
  });

  it("When the vhost does not exist, then the sentence names BROKER_VHOST", async () => {
    const r = await dlq(
      { ...env, BROKER_VHOST: `${vhost.vhost}-missing` },
      "list",
      "--edition",
      "rabbitmq",
    );
    polite(r);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/has no vhost .* \(BROKER_VHOST/);
  });

  it("When an argument is unknown, then usage and exit 2, with no stack trace", async () => {
    const r = await dlq(env, "list", "--bogus");
    polite(r);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bogus/);
  });
});
