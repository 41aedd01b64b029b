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

/** What each delivery's handling shares: the options, the events and the stop signal. */
interface Handling<T> {
  opts: ConsumerOptions<T>;
  attempts: number;
  events: ConsumerEvents;
  /** Resolves when stop() is called; `stopping()` says whether it was. */
  stopped: Promise<void>;
  stopping: () => boolean;
}

type Named = { source: string; where: string; key: string | null };

/** The channel may have closed meanwhile: the broker then redelivers the message. */
function settle(log: Logger, queue: string, what: () => void): void {
  try {
    what();
  } catch (error) {
    log.warn("could not settle a delivery; the broker will redeliver it", {
      queue,
      error: String(error),
    });
  }
}

/** Decoded with the contract and handed to the handler, in a consumer span. */
async function runHandler<T>(h: Handling<T>, msg: ConsumeMessage, attempt: number, message: Named) {
  const { queue, contract, handle } = h.opts;
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
      await handle(decoded.value, { attempt, redelivered: msg.fields.redelivered, headers });
      return {};
    },
  );
}

/** The ack, after PAUSA_ANTES_DO_ACK_MS if set; a stop during that pause leaves it unacked. */
async function ack<T>(h: Handling<T>, ch: Channel, msg: ConsumeMessage, message: Named) {
  const { queue, log } = h.opts;
  const pause = h.opts.pauseBeforeAckMs ?? 0;
  if (pause > 0) {
    log.warn(`handled; pausing ${pause} ms before the ack (PAUSA_ANTES_DO_ACK_MS)`, {
      queue,
      mensagem: msg.content.toString("utf8"),
    });
    await Promise.race([new Promise((r) => setTimeout(r, pause)), h.stopped]);
    // Stopped during the pause: no ack, so the broker redelivers it, as after a crash.
    if (h.stopping()) return;
  }
  settle(log, queue, () => ch.ack(msg));
  metrics.consumed.inc({ destino: queue });
  h.events.emit("acked", message);
}

/** A failure: back to the queue until the last attempt, then rejected to `<queue>.erros`. */
async function retryOrDeadLetter<T>(
  h: Handling<T>,
  ch: Channel,
  msg: ConsumeMessage,
  { attempt, message, reason }: { attempt: number; message: Named; reason: string },
) {
  const { queue, log } = h.opts;
  metrics.failed.inc({ destino: queue });
  if (attempt >= h.attempts) {
    // `evento` names the wrapper's event in the line, for readers outside the process.
    log.error(`message failed ${attempt} times: dead-lettered to ${queue}.erros`, {
      queue,
      reason,
      evento: "dead-lettered",
      tentativa: attempt,
    });
    settle(log, queue, () => ch.reject(msg, false));
    metrics.deadLettered.inc({ destino: queue });
    h.events.emit("dead-lettered", { ...message, reason });
    return;
  }
  log.warn(`message failed (attempt ${attempt} of ${h.attempts}); returned to the queue`, {
    queue,
    reason,
    evento: "retried",
    tentativa: attempt,
  });
  await new Promise((r) => setTimeout(r, attempt * (h.opts.retryDelayMs ?? 200)));
  // basic.reject, not basic.nack: from RabbitMQ 4.3 a nack with requeue no longer raises a
  // quorum queue's x-delivery-count (rabbitmq-server #15387), so a poison message returned
  // that way would loop forever and never reach .erros.
  settle(log, queue, () => ch.reject(msg, true));
  h.events.emit("retried", { ...message, attempt, error: reason });
}

async function handleMessage<T>(h: Handling<T>, ch: Channel, msg: ConsumeMessage): Promise<void> {
  const { queue } = h.opts;
  const attempt = Number(msg.properties.headers?.["x-delivery-count"] ?? 0) + 1;
  const message: Named = {
    source: queue,
    where: `${queue}#${attempt}`,
    key: (msg.properties.messageId as string | undefined) ?? null,
  };
  h.events.emit("received", message);
  try {
    await runHandler(h, msg, attempt, message);
    h.events.emit("handled", message);
    await ack(h, ch, msg, message);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    await retryOrDeadLetter(h, ch, msg, { attempt, message, reason });
  }
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
  const inHand = new Set<Promise<void>>();
  let stopping = false;
  let wake: () => void = () => {};
  const handling: Handling<T> = {
    opts,
    attempts: opts.attempts ?? ATTEMPTS,
    events: new ConsumerEvents(),
    stopped: new Promise<void>((resolve) => {
      wake = resolve;
    }),
    stopping: () => stopping,
  };
  const channelConsumer: ChannelConsumer = {
    queue: opts.queue,
    prefetch: 1,
    consumers: opts.consumers ?? 1,
    onMessage(ch, msg) {
      const handled = handleMessage(handling, ch, msg);
      inHand.add(handled);
      void handled.finally(() => inHand.delete(handled));
      return handled;
    },
  };
  await opts.client.consume(channelConsumer);
  return {
    events: handling.events,
    async stop() {
      stopping = true;
      wake();
      await opts.client.cancel(channelConsumer, () => Promise.allSettled([...inHand]));
    },
  };
}
