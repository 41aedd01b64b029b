import type { IHeaders } from "kafkajs";

/** A record as the publisher takes it (publishBatch). */
export interface OutgoingRecord {
  topic: string;
  /** Text, or bytes kept as they are (a dead letter's key; null when the record had none). */
  key: string | Buffer | null;
  value: string | Buffer;
  /**
   * Sent as they are. A record whose headers carry no traceparent gets its producer span's;
   * one whose headers carry one keeps it (a dead letter is the record as it was).
   */
  headers?: IHeaders;
  /**
   * The traceparent of the work the record belongs to (the outbox row's, the caller's):
   * its producer span's parent. Without it, the work running when it is sent.
   */
  parent?: string;
}
