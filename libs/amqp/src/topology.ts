import type { Binding } from "@shop/contracts";
import type { Channel } from "amqplib";

/** How many times a message is tried in all before it goes to its .erros queue. */
export const ATTEMPTS = 3;

/**
 * Declares the spec's topology when absent. The error queues come first; the main queues
 * are quorum queues (durable, replicated log) so that the broker itself counts deliveries
 * (x-delivery-count): the attempt count survives a consumer restart. Their dead-letter
 * target is the default exchange with `<queue>.erros`, and x-delivery-limit bounds even a
 * message that crashes its consumer every time.
 */
export async function declareTopology(
  ch: Channel,
  bindings: readonly Binding[],
  { cluster = false } = {},
): Promise<void> {
  for (const l of bindings) {
    await ch.assertExchange(l.exchange, l.exchangeType, { durable: true });
    // On a cluster the error queues are quorum queues too: a classic queue lives on one
    // node, and while that node is down it can be neither declared nor read, which would
    // keep the services from connecting at all. On one node they stay classic, as every
    // existing installation declared them (a queue's type cannot change).
    await ch.assertQueue(l.deadLetterQueue, {
      durable: true,
      ...(cluster ? { arguments: { "x-queue-type": "quorum" } } : {}),
    });
    await ch.assertQueue(l.queue, {
      durable: true,
      arguments: {
        "x-queue-type": "quorum",
        "x-dead-letter-exchange": "",
        "x-dead-letter-routing-key": l.deadLetterQueue,
        "x-delivery-limit": ATTEMPTS,
      },
    });
    await ch.bindQueue(l.queue, l.exchange, l.routingKey);
  }
}
