import { EventEmitter } from "node:events";

/**
 * What both broker wrappers (libs/kafka's startConsumer, libs/amqp's startConsumer) tell about
 * each message, as typed events that tests and metrics subscribe to instead of reading
 * log lines. `source` is the topic or queue; `where` says where the message was: a Kafka
 * record's `topic[partition]@offset`, an AMQP delivery's `queue#attempt`.
 */
export interface ConsumedMessage {
  source: string;
  where: string;
  /** The record's key (Kafka) or null. */
  key: string | null;
}

export interface ConsumerEventMap {
  /** A message arrived, before it is decoded. */
  received: [ConsumedMessage];
  /** Its handler finished without an error (its effect is committed). */
  handled: [ConsumedMessage];
  /** Its handling failed and it will be tried again (`attempt` is the one that failed). */
  retried: [ConsumedMessage & { attempt: number; error: string }];
  /** It broke its contract or used up its attempts: it went to the dead letters. */
  "dead-lettered": [ConsumedMessage & { reason: string }];
  /** Settled with the broker: an AMQP ack, or a Kafka offset resolved for the next commit. */
  acked: [ConsumedMessage];
  /** Kafka only: the group's committed offset of a partition moved (the next record to read). */
  committed: [{ source: string; partition: number; offset: string }];
}

export class ConsumerEvents extends EventEmitter<ConsumerEventMap> {}
