import { EventEmitter } from "node:events";

/**
 * What both broker wrappers (libs/kafka's startConsumer, libs/amqp's consumir) tell about
 * each message, as typed events that tests and metrics subscribe to instead of reading
 * log lines. `origem` is the topic or queue; `onde` says where the message was: a Kafka
 * record's `topic[partition]@offset`, an AMQP delivery's `queue#attempt`.
 */
export interface Mensagem {
  origem: string;
  onde: string;
  /** The record's key (Kafka) or null. */
  chave: string | null;
}

export interface EventosDoConsumidor {
  /** A message arrived, before it is decoded. */
  received: [Mensagem];
  /** Its handler finished without an error (its effect is committed). */
  handled: [Mensagem];
  /** Its handling failed and it will be tried again (`tentativa` is the one that failed). */
  retried: [Mensagem & { tentativa: number; erro: string }];
  /** It broke its contract or used up its attempts: it went to the dead letters. */
  "dead-lettered": [Mensagem & { motivo: string }];
  /** Settled with the broker: an AMQP ack, or a Kafka offset resolved for the next commit. */
  acked: [Mensagem];
  /** Kafka only: the group's committed offset of a partition moved (the next record to read). */
  committed: [{ origem: string; particao: number; offset: string }];
}

export class EventosDeConsumo extends EventEmitter<EventosDoConsumidor> {}
