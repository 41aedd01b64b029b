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

type Say = LabWorld["say"];
const statusOf = async (url: string, id: number) =>
  (await listOrders(url)).find((o) => o.id === id)?.status;
/** The letter the dlq CLI lists, as its --json gives it. */
interface Letter {
  id: string;
  motivo: string;
  origem: string;
  chave: string | null;
  estado: string;
}

/** Four orders; two whose results share a partition of pagamentos-resultados. */
async function twoSharingAPartition(w: LabWorld, url: string) {
  const { say } = w;
  const { topics } = w.names;
  say.doing("Fazendo quatro pedidos e escolhendo dois cujos resultados dividem uma partição");
  const ids: number[] = [];
  for (let n = 0; n < 4; n++) ids.push((await placeOrder(url, 2 * n)).body.id);
  const partitionOf = (id: number) => kafkajsPartition(pedidoKey(id));
  const a = ids.find((id) => ids.some((o) => o !== id && partitionOf(o) === partitionOf(id)));
  const b = ids.find((id) => id !== a && partitionOf(id) === partitionOf(a as number));
  if (a === undefined || b === undefined) throw new Error("no two orders share a partition");
  const partition = partitionOf(a);
  say.saw(
    `pedidos ${a} e ${b}: os resultados deles vão para a partição ${partition} de ${topics.pagamentosResultados}`,
  );

  return { ids, a, b, partition };
}

/** A result whose status is neither APROVADO nor RECUSADO for `a`, then a good one for `b`, behind it. */
async function writePoisonThenGood(
  w: LabWorld,
  brokers: string,
  { a, b, partition }: { a: number; b: number; partition: number },
) {
  const { say } = w;
  const { topics } = w.names;
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
    `Escrevendo um resultado envenenado para o pedido ${a} (status "TALVEZ"), depois um bom para o pedido ${b}`,
  );
  say.watch("o log da API de pedidos: um aviso com o tópico, a partição, o offset e o motivo");
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
  say.saw(`escritos nos offsets ${before} e ${before + 1} da partição ${partition}`);

  return { poison, before };
}

/** Until `b` is PAGO, the letter is in the dlq topic, and the group's offset is past both records. */
async function partitionMovedOn(
  w: LabWorld,
  brokers: string,
  url: string,
  { b, partition, before }: { b: number; partition: number; before: number },
) {
  const { topics, dlq, groups } = w.names;
  await waitFor(async () => (await statusOf(url, b)) === "PAGO", {
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

  return { dlqEnd, committed };
}

/** The dlq CLI, as a person runs it: the letters listed, then a fixed copy of the poison redriven. */
async function readAndRedrive(
  w: LabWorld,
  { brokers, url }: { brokers: string; url: string },
  a: number,
  poison: object,
) {
  const { say } = w;
  const env = { ...process.env, KAFKA_BROKERS: brokers, KAFKA_PREFIXO: w.prefix };
  const dlqCli = async (...args: string[]) =>
    (await run(process.execPath, [...programArgs("dlq"), ...args], { env, encoding: "utf8" }))
      .stdout;
  say.doing(
    `Listando as cartas mortas como uma pessoa faria: KAFKA_PREFIXO=${w.prefix} npm run dlq -- list --edition kafka`,
  );
  // Its --json, told in pt-BR: the CLI's own table is English, as its logs are.
  const letters = JSON.parse(await dlqCli("list", "--edition", "kafka", "--json")) as Letter[];
  for (const l of letters)
    say.saw(
      `carta ${l.id}: de ${l.origem}, chave ${l.chave ?? "nenhuma"}, ${l.estado}; motivo: ${l.motivo}`,
    );
  const letter = letters.find((l) => l.chave === pedidoKey(a));

  const fixed = JSON.stringify({ ...poison, status: "APROVADO" });
  say.doing(
    `Reenviando uma cópia corrigida: npm run dlq -- redrive ${letter?.id} --corpo '${fixed}'`,
  );
  await dlqCli("redrive", letter?.id ?? "?", "--corpo", fixed, "--edition", "kafka");
  say.saw(`a carta ${letter?.id} foi reenviada corrigida para a partição de onde veio`);
  await waitFor(async () => (await statusOf(url, a)) === "PAGO", {
    timeoutMs: 30_000,
    what: `order ${a} PAGO after the fixed copy`,
  }).catch(() => undefined);
  const after = JSON.parse(await dlqCli("list", "--edition", "kafka", "--json")) as Letter[];
  return { letter, after };
}

export const poison = {
  name: "poison",
  summary:
    "um registro que quebra o contrato vai para <tópico>.dlq; a partição segue; uma cópia corrigida é reenviada",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "Um registro envenenado é um que o consumidor nunca consegue tratar: aqui um\n" +
        "ResultadoPagamento cujo status não é APROVADO nem RECUSADO. A API de pedidos o copia para\n" +
        "pagamentos-resultados.dlq com o motivo e segue, e os registros atrás dele na mesma\n" +
        "partição não ficam presos. Uma pessoa lê a carta, corrige e reenvia a cópia corrigida\n" +
        "com o CLI de cartas mortas.",
    );
    say.doing(
      "Iniciando o Kafka e a API de pedidos (sem instância de pagamento: o laboratório escreve os resultados)",
    );
    const { brokers, url } = await w.eventLogShop();
    const { ids, a, b, partition } = await twoSharingAPartition(w, url);
    const { poison, before } = await writePoisonThenGood(w, brokers, { a, b, partition });
    const { dlqEnd, committed } = await partitionMovedOn(w, brokers, url, { b, partition, before });
    const { letter, after } = await readAndRedrive(w, { brokers, url }, a, poison);
    await tellPoison(w.say, w.names, url, {
      ids,
      a,
      b,
      partition,
      before,
      dlqEnd,
      committed,
      letter,
      after,
    });
  },
};

/** The four checks: the one letter, the partition moved on, the fixed copy applied, nothing else changed. */
async function tellPoison(
  say: Say,
  { topics, dlq }: LabWorld["names"],
  url: string,
  r: {
    ids: number[];
    a: number;
    b: number;
    partition: number;
    before: number;
    dlqEnd: number;
    committed: number;
    letter: Letter | undefined;
    after: Letter[];
  },
) {
  const { ids, a, b, partition, before, dlqEnd, committed, letter, after } = r;
  const all = await listOrders(url);
  const status = (id: number) => all.find((o) => o.id === id)?.status;
  say.check(
    dlqEnd === 1 &&
      letter !== undefined &&
      /status/.test(letter.motivo) &&
      letter.origem === `${topics.pagamentosResultados}[${partition}]@${before}`,
    `o veneno é a única carta em ${dlq.pagamentosResultados}, da partição ${partition} offset ${before}, motivo: ${letter?.motivo}`,
  );
  say.check(
    status(b) === "PAGO" && committed >= before + 2,
    `a partição seguiu: o resultado do pedido ${b}, atrás do veneno, aplicado (PAGO), o offset do grupo em ${committed}`,
  );
  say.check(
    status(a) === "PAGO" && after.find((l) => l.id === letter?.id)?.estado === "reenviada",
    `a cópia corrigida foi aplicada: pedido ${a} PAGO, a carta marcada reenviada`,
  );
  const others = ids.filter((id) => id !== a && id !== b);
  say.check(
    others.every((id) => status(id) === "AGUARDANDO_PAGAMENTO"),
    `nada mais mudou: pedidos ${others.join(" e ")} ainda AGUARDANDO_PAGAMENTO (nenhum resultado foi escrito para eles)`,
  );
}
