import { AmqpClient, amqpUrl, type BrokerAddress } from "@shop/amqp";
import { ERROR_QUEUES } from "@shop/contracts";
import type { Logger } from "@shop/service";
import amqp, { type Channel, type GetMessage } from "amqplib";
import type { CartaMorta } from "./cartas.ts";

interface XDeath {
  count: number;
  reason: string;
  queue: string;
  exchange: string;
  "routing-keys": string[];
}

/** A message's headers and its latest death (x-death, newest first). */
function lerMorte(m: GetMessage) {
  const headers = (m.properties.headers ?? {}) as Record<string, unknown>;
  const [morte] = (headers["x-death"] ?? []) as XDeath[];
  return { headers, morte };
}

function carta(queue: string, posicao: number, m: GetMessage): CartaMorta {
  const { headers, morte } = lerMorte(m);
  return {
    id: `rabbitmq:${queue}:${posicao}`,
    edicao: "rabbitmq",
    onde: `${queue} #${posicao}`,
    origem: morte
      ? `${morte.queue} (exchange ${morte.exchange || "(default)"}, key ${morte["routing-keys"]?.[0]})`
      : "?",
    motivo: `${morte?.reason ?? "?"} (the consumer's log has why)`,
    // 3 deliveries per passage through the queue; x-death counts the passages.
    tentativas: 3 * (morte?.count ?? 1),
    estado: "pendente",
    chave: m.properties.messageId ?? null,
    cabecalhos: Object.fromEntries(
      Object.entries(headers)
        .filter(([k]) => k !== "x-death")
        .map(([k, v]) => [k, String(v)])
        .concat(morte ? [["x-death", `${morte.reason} x${morte.count} from ${morte.queue}`]] : []),
    ),
    corpo: m.content.toString("utf8"),
  };
}

/**
 * RabbitMQ's dead letters are messages in the `.erros` queues. Listing looks without
 * taking (each message is fetched and put back); redrive republishes a message to the
 * exchange and routing key it came from (x-death), confirmed and routed, and only then
 * removes it from `.erros`. A message that fails again comes back with x-death's count raised.
 */
export function rabbitDlq(r: BrokerAddress, log: Logger) {
  const filas = [ERROR_QUEUES.solicitacoes, ERROR_QUEUES.resultados];

  /**
   * Fetches, one by one, the messages each `.erros` queue holds now and hands each to
   * `visitar` (unacked: whatever visitar does not ack goes back when the channel closes);
   * `aoFimDaFila` runs after each queue.
   */
  async function percorrer(
    visitar: (ch: Channel, queue: string, posicao: number, m: GetMessage) => Promise<void>,
    aoFimDaFila: (ch: Channel) => void = () => {},
  ): Promise<void> {
    const conn = await amqp.connect(amqpUrl(r));
    try {
      const ch = await conn.createChannel();
      for (const queue of filas) {
        const { messageCount } = await ch.checkQueue(queue).catch(() => ({ messageCount: 0 }));
        for (let i = 0; i < messageCount; i++) {
          const m = await ch.get(queue, { noAck: false });
          if (!m) break;
          await visitar(ch, queue, i + 1, m);
        }
        aoFimDaFila(ch);
      }
      await ch.close();
    } finally {
      await conn.close();
    }
  }

  async function ler(): Promise<CartaMorta[]> {
    const cartas: CartaMorta[] = [];
    await percorrer(
      async (_ch, queue, posicao, m) => {
        cartas.push(carta(queue, posicao, m));
      },
      // Put them all back, in order; closing the channel would do the same.
      (ch) => ch.nackAll(true),
    );
    return cartas;
  }

  async function reenviar(filtro: (c: CartaMorta) => boolean): Promise<CartaMorta[]> {
    const client = new AmqpClient({ url: amqpUrl(r), log, topology: async () => {} });
    const feitos: CartaMorta[] = [];
    try {
      await percorrer(async (ch, queue, posicao, m) => {
        const c = carta(queue, posicao, m);
        const { headers, morte } = lerMorte(m);
        if (!filtro(c) || !morte) return; // left unacked: back in the queue when the channel closes
        await client.publish(
          morte.exchange,
          morte["routing-keys"]?.[0] ?? "",
          m.content.toString("utf8"),
          5000,
          {
            // x-death stays: when it fails again, the broker raises its count.
            ...headers,
            "x-reenvios": Number(headers["x-reenvios"] ?? 0) + 1,
          },
        );
        ch.ack(m);
        feitos.push(c);
      });
    } finally {
      await client.close();
    }
    return feitos;
  }

  return { ler, reenviar };
}
