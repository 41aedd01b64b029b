import { PedidoCriado } from "@shop/contracts";
import { afterAll, describe, expect, it } from "vitest";
import { uniqueName } from "../../../../harness/env.ts";
import { aPedidoCriado } from "../../../../test/helpers/fixtures.ts";
import { createTopic, testKafka } from "../../../../test/helpers/kafka.ts";
import { capturingLogger } from "../../../../test/helpers/shop.ts";
import { waitFor } from "../../../../test/helpers/wait.ts";
import { createPublisher, type RunningConsumer, startConsumer } from "../../src/index.ts";

const kafka = testKafka();
const log = capturingLogger("consumer-test");
const publicador = createPublisher(kafka, 5_000, log);
let running: RunningConsumer | undefined;

afterAll(async () => {
  await running?.stop();
  await publicador.close();
});

describe("startConsumer", () => {
  it("When the handler throws (even an error kafkajs would not restart from), then the record is tried again after a pause, its partition reported stuck meanwhile, and no record is skipped", async () => {
    const topic = uniqueName("crash");
    await createTopic(kafka, topic, 1);
    const evento = aPedidoCriado({ pedidoId: 7 });
    await publicador.publish(topic, "7", JSON.stringify(evento));

    let chamadas = 0;
    const handled: number[] = [];
    let presasNaSegunda: unknown[] = [];
    const eventos: string[] = [];
    running = await startConsumer({
      kafka,
      groupId: uniqueName("crash-group"),
      topics: [topic],
      contract: PedidoCriado,
      keyOf: (v) => String(v.pedidoId),
      deadLetters: publicador,
      log,
      handle: async (v) => {
        chamadas++;
        // A TypeError is one of the errors kafkajs treats as unrecoverable: CRASH, restart false.
        if (chamadas === 1) throw new TypeError("a bug met once");
        presasNaSegunda = running?.status().stuck ?? [];
        handled.push(v.pedidoId);
      },
    });

    for (const nome of ["received", "retried", "handled", "acked", "committed"] as const)
      (running as RunningConsumer).events.on(nome, () => eventos.push(nome));
    await waitFor(() => handled.length === 1, { timeoutMs: 30_000, what: "the record handled" });
    await waitFor(() => eventos.includes("committed"), { what: "the offset committed" });
    expect(handled).toEqual([7]);
    expect(chamadas).toBe(2);
    expect(presasNaSegunda).toEqual([
      expect.objectContaining({
        topic,
        partition: 0,
        offset: "0",
        tentativas: 1,
        ultimoErro: "a bug met once",
      }),
    ]);
    expect(running.status().stuck).toEqual([]);
    // The wrapper's events, in order: the record read again, handled, acked, committed.
    expect(eventos.slice(eventos.lastIndexOf("received")).slice(0, 4)).toEqual([
      "received",
      "handled",
      "acked",
      "committed",
    ]);
  }, 60_000);
});
