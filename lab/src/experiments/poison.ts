import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { pedidoKey, ResultadoPagamento } from "@shop/contracts";
import { waitFor } from "@shop/service";
import { listOrders, placeOrder } from "../../../harness/http.ts";
import {
  clientOf,
  committedOffsets,
  endOffsets,
  kafkajsPartition,
} from "../../../harness/kafka.ts";
import { programArgs } from "../../../harness/process.ts";
import type { LabWorld } from "../world.ts";

const run = promisify(execFile);

export const poison = {
  name: "poison",
  summary:
    "a record that breaks the contract goes to <topic>.dlq; the partition moves on; a fixed copy is redriven",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "A poison record is one its consumer can never handle: here a ResultadoPagamento whose\n" +
        "status is neither APROVADO nor RECUSADO. The orders API copies it to\n" +
        "pagamentos-resultados.dlq with the reason and moves on, so the records behind it in\n" +
        "the same partition are not held up. A person reads the letter, fixes it, and sends the\n" +
        "fixed copy back with the dead-letter CLI.",
    );
    say.doing(
      "Starting Kafka and the orders API (no payments instance: the lab writes the results)",
    );
    const { brokers, url } = await w.eventLogShop();
    const { topics, dlq, groups } = w.names;

    say.doing("Placing four orders, and picking two whose results share a partition");
    const ids: number[] = [];
    for (let n = 0; n < 4; n++) ids.push((await placeOrder(url, 2 * n)).body.id);
    const partitionOf = (id: number) => kafkajsPartition(pedidoKey(id));
    const a = ids.find((id) => ids.some((o) => o !== id && partitionOf(o) === partitionOf(id)));
    const b = ids.find((id) => id !== a && partitionOf(id) === partitionOf(a as number));
    if (a === undefined || b === undefined) throw new Error("no two orders share a partition");
    const partition = partitionOf(a);
    say.saw(
      `orders ${a} and ${b}: their results go to partition ${partition} of ${topics.pagamentosResultados}`,
    );

    const processadoEm = new Date().toISOString();
    const poison = {
      versao: 1,
      pedidoId: a,
      status: "TALVEZ",
      motivo: null,
      instancia: "lab",
      processadoEm,
    };
    say.doing(
      `Writing a poison result for order ${a} (status "TALVEZ"), then a good one for order ${b}`,
    );
    say.watch("the orders API's log: a warning naming the topic, partition, offset and reason");
    const before = (await endOffsets(brokers, topics.pagamentosResultados)).get(partition) ?? 0;
    const producer = clientOf(brokers).producer();
    await producer.connect();
    try {
      await producer.send({
        topic: topics.pagamentosResultados,
        acks: -1,
        messages: [
          { key: pedidoKey(a), value: JSON.stringify(poison) },
          {
            key: pedidoKey(b),
            value: ResultadoPagamento.encode({
              versao: 1,
              pedidoId: b,
              status: "APROVADO",
              motivo: null,
              instancia: "lab",
              processadoEm,
            }),
          },
        ],
      });
    } finally {
      await producer.disconnect();
    }
    say.saw(`written at offsets ${before} and ${before + 1} of partition ${partition}`);

    const status = async (id: number) => (await listOrders(url)).find((o) => o.id === id)?.status;
    await waitFor(async () => (await status(b)) === "PAGO", {
      timeoutMs: 30_000,
      what: `order ${b} PAGO`,
    });
    const dlqEnd = await waitFor(
      async () => [...(await endOffsets(brokers, dlq.pagamentosResultados)).values()][0],
      { timeoutMs: 30_000, what: "the dead letter" },
    );
    const committed = await waitFor(
      async () => {
        const c = (
          await committedOffsets(brokers, groups.pedidosApi, topics.pagamentosResultados)
        ).get(partition);
        return c !== undefined && c >= before + 2 && c;
      },
      { timeoutMs: 30_000, what: "the group's offset past both records" },
    );

    const env = { ...process.env, KAFKA_BROKERS: brokers, KAFKA_PREFIXO: w.prefix };
    const dlqCli = async (...args: string[]) =>
      (await run(process.execPath, [...programArgs("dlq"), ...args], { env, encoding: "utf8" }))
        .stdout;
    say.doing(
      `Listing the dead letters as a person would: KAFKA_PREFIXO=${w.prefix} npm run dlq -- list --edition kafka`,
    );
    for (const line of (await dlqCli("list", "--edition", "kafka")).trim().split("\n"))
      say.saw(line);
    const letters = JSON.parse(await dlqCli("list", "--edition", "kafka", "--json")) as {
      id: string;
      motivo: string;
      origem: string;
      chave: string | null;
    }[];
    const letter = letters.find((l) => l.chave === pedidoKey(a));

    const fixed = JSON.stringify({ ...poison, status: "APROVADO" });
    say.doing(`Sending a fixed copy back: npm run dlq -- redrive ${letter?.id} --corpo '${fixed}'`);
    for (const line of (
      await dlqCli("redrive", letter?.id ?? "?", "--corpo", fixed, "--edition", "kafka")
    )
      .trim()
      .split("\n"))
      say.saw(line);
    await waitFor(async () => (await status(a)) === "PAGO", {
      timeoutMs: 30_000,
      what: `order ${a} PAGO after the fixed copy`,
    }).catch(() => undefined);
    const after = JSON.parse(await dlqCli("list", "--edition", "kafka", "--json")) as {
      id: string;
      estado: string;
    }[];
    const all = await listOrders(url);

    say.check(
      dlqEnd === 1 &&
        letter !== undefined &&
        /status/.test(letter.motivo) &&
        letter.origem === `${topics.pagamentosResultados}[${partition}]@${before}`,
      `the poison is the one letter in ${dlq.pagamentosResultados}, from partition ${partition} offset ${before}, reason: ${letter?.motivo}`,
    );
    say.check(
      (await status(b)) === "PAGO" && committed >= before + 2,
      `the partition moved on: order ${b}'s result behind the poison applied (PAGO), the group's offset at ${committed}`,
    );
    say.check(
      all.find((o) => o.id === a)?.status === "PAGO" &&
        after.find((l) => l.id === letter?.id)?.estado === "reenviada",
      `the fixed copy was applied: order ${a} PAGO, its letter marked redriven`,
    );
    const others = ids.filter((id) => id !== a && id !== b);
    say.check(
      others.every((id) => all.find((o) => o.id === id)?.status === "AGUARDANDO_PAGAMENTO"),
      `nothing else moved: orders ${others.join(" and ")} still AGUARDANDO_PAGAMENTO (no result was written for them)`,
    );
  },
};
