import type { MessageContract } from "@shop/contracts";
import { ConsumerEvents, inConsumerSpan, type Logger, MESSAGING, metrics } from "@shop/service";
import type { Channel, ConsumeMessage } from "amqplib";
import type { AmqpClient, ChannelConsumer } from "./client.ts";
import { ATTEMPTS } from "./topology.ts";

export interface Delivery {
  /** 1 for the first delivery; counted by the broker, so it survives a consumer restart. */
  attempt: number;
  redelivered: boolean;
  /** The message's AMQP headers (metadata outside the body's contract). */
  headers: Record<string, unknown>;
}

export interface ConsumerOptions<T> {
  client: AmqpClient;
  queue: string;
  contract: MessageContract<T>;
  /** The business handler: returns once the effect is committed, or throws. */
  handle: (value: T, delivery: Delivery) => Promise<void>;
  log: Logger;
  attempts?: number;
  /** Wait before a failed message is returned to its queue (attempt × this). */
  retryDelayMs?: number;
  /**
   * Consumers on the queue, each with prefetch 1, on one channel (default 1). Messages
   * of this edition are independent (idempotent by solicitacaoId), so several may be
   * handled at once while each consumer still holds one unacknowledged message.
   */
  consumers?: number;
  /** PAUSA_ANTES_DO_ACK_MS: wait this long after the handler finished, before the ack. */
  pauseBeforeAckMs?: number;
}

/** A running consumer of a queue, as the Kafka wrapper's: stop it before closing the client. */
export interface RunningConsumer {
  /** Cancels the consumers, then waits for the messages being handled to be settled. */
  stop(): Promise<void>;
  /** received, handled, retried, dead-lettered, acked: the same events as the Kafka wrapper's. */
  events: ConsumerEvents;
}

/**
 * The one consumer of the broker edition: prefetch 1 per consumer; decode and validate with the
 * contract; ack only after the handler finished; a failure (invalid contract, conflict,
 * exception) is returned to the queue until the third attempt, then rejected without
 * requeue, so that the broker dead-letters it to `<queue>.erros`. Nothing is swallowed.
 * stop() cancels the consumers and waits for the messages in hand: their effects are
 * committed and acked before the service closes its connection. A message paused before
 * its ack (PAUSA_ANTES_DO_ACK_MS) is left unacked instead: redelivered, as after a crash.
 */
export async function startConsumer<T>(opts: ConsumerOptions<T>): Promise<RunningConsumer> {
  const attempts = opts.attempts ?? ATTEMPTS;
  const { client, queue, contract, handle, log } = opts;
  const inHand = new Set<Promise<void>>();
  const events = new ConsumerEvents();
  let stopping = false;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });

  async function handleMessage(ch: Channel, msg: ConsumeMessage): Promise<void> {
    // The channel may have closed meanwhile: the broker then redelivers the message.
    const settle = (what: () => void) => {
      try {
        what();
      } catch (error) {
        log.warn("could not settle a delivery; the broker will redeliver it", {
          queue,
          error: String(error),
        });
      }
    };
    const attempt = Number(msg.properties.headers?.["x-delivery-count"] ?? 0) + 1;
    const message = {
      source: queue,
      where: `${queue}#${attempt}`,
      key: (msg.properties.messageId as string | undefined) ?? null,
    };
    events.emit("received", message);
    try {
      const decoded = contract.decode(msg.content);
      if (!decoded.ok) throw new Error(decoded.error.reason);
      const headers = msg.properties.headers ?? {};
      // The message continues the trace of whoever published it, in a consumer span.
      await inConsumerSpan(
        `process ${queue}`,
        headers,
        {
          [MESSAGING.system]: "rabbitmq",
          [MESSAGING.destination]: queue,
          [MESSAGING.operationType]: "process",
          [MESSAGING.operationName]: "process",
          [MESSAGING.rabbitRoutingKey]: msg.fields.routingKey,
          ...(message.key ? { [MESSAGING.messageId]: message.key } : {}),
        },
        async () => {
          await handle(decoded.value, {
            attempt: attempt,
            redelivered: msg.fields.redelivered,
            headers,
          });
          return {};
        },
      );
      events.emit("handled", message);
      const pause = opts.pauseBeforeAckMs ?? 0;
      if (pause > 0) {
        log.warn(`handled; pausing ${pause} ms before the ack (PAUSA_ANTES_DO_ACK_MS)`, {
          queue,
          mensagem: msg.content.toString("utf8"),
        });
        await Promise.race([new Promise((r) => setTimeout(r, pause)), stopped]);
        // Stopped during the pause: no ack, so the broker redelivers it, as after a crash.
        if (stopping) return;
      }
      settle(() => ch.ack(msg));
      metrics.consumed.inc({ destino: queue });
      events.emit("acked", message);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      metrics.failed.inc({ destino: queue });
      if (attempt >= attempts) {
        // `evento` names the wrapper's event in the line, for readers outside the process.
        log.error(`message failed ${attempt} times: dead-lettered to ${queue}.erros`, {
          queue,
          reason,
          evento: "dead-lettered",
          tentativa: attempt,
        });
        settle(() => ch.reject(msg, false));
        metrics.deadLettered.inc({ destino: queue });
        events.emit("dead-lettered", { ...message, reason: reason });
      } else {
        log.warn(`message failed (attempt ${attempt} of ${attempts}); returned to the queue`, {
          queue,
          reason,
          evento: "retried",
          tentativa: attempt,
        });
        await new Promise((r) => setTimeout(r, attempt * (opts.retryDelayMs ?? 200)));
        // basic.reject, not basic.nack: from RabbitMQ 4.3 a nack with requeue no longer
        // raises a quorum queue's x-delivery-count (rabbitmq-server #15387), so a poison
        // message returned that way would loop forever and never reach .erros.
        settle(() => ch.reject(msg, true));
        events.emit("retried", { ...message, attempt: attempt, error: reason });
      }
    }
  }

  const channelConsumer: ChannelConsumer = {
    queue,
    prefetch: 1,
    consumers: opts.consumers ?? 1,
    onMessage(ch, msg) {
      const handling = handleMessage(ch, msg);
      inHand.add(handling);
      void handling.finally(() => inHand.delete(handling));
      return handling;
    },
  };
  await client.consume(channelConsumer);
  return {
    events: events,
    async stop() {
      stopping = true;
      wake();
      await client.cancel(channelConsumer, () => Promise.allSettled([...inHand]));
    },
  };
}
