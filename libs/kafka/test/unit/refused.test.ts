import { KafkaJSProtocolError } from "kafkajs";
import { describe, expect, it } from "vitest";
import { producerStateLost, refusedForGood } from "../../src/client.ts";
import { PublishNotConfirmed } from "../../src/publisher.ts";

/** A broker's error answer as kafkajs raises it (its constructor takes the error table's entry). */
const brokerError = (type: string, code: number, retriable: boolean) =>
  new KafkaJSProtocolError({ type, code, retriable, message: type } as unknown as Error);

/** As the outbox relay meets it: our time limit's error, caused by kafkajs's. */
const asRelaySeesIt = (cause: Error) =>
  new PublishNotConfirmed("pedidos-criados", "1 (+3)", cause, false);

describe("Kafka's refusals: a record refused for good, or a producer whose state Kafka no longer agrees with", () => {
  it("When Kafka refuses a record for good (too large, not authorised), then the relay sets it aside, and the producer is kept", () => {
    for (const e of [
      brokerError("MESSAGE_TOO_LARGE", 10, false),
      brokerError("TOPIC_AUTHORIZATION_FAILED", 29, false),
    ]) {
      expect(refusedForGood(asRelaySeesIt(e)), e.type).toBe(true);
      expect(producerStateLost(asRelaySeesIt(e)), e.type).toBe(false);
    }
  });

  it("When an idempotent producer's sequence numbers or id are refused, then no record is set aside: a new producer id sends them again", () => {
    for (const e of [
      brokerError("OUT_OF_ORDER_SEQUENCE_NUMBER", 45, false),
      brokerError("DUPLICATE_SEQUENCE_NUMBER", 46, false),
      brokerError("INVALID_PRODUCER_EPOCH", 47, false),
      brokerError("UNKNOWN_PRODUCER_ID", 59, false),
      brokerError("INVALID_PRODUCER_ID_MAPPING", 49, false),
    ]) {
      expect(refusedForGood(asRelaySeesIt(e)), e.type).toBe(false);
      expect(producerStateLost(asRelaySeesIt(e)), e.type).toBe(true);
    }
  });

  it("When Kafka is only slow or moving (a retriable answer, no answer), then neither: the relay tries again as it is", () => {
    for (const e of [
      brokerError("NOT_LEADER_OR_FOLLOWER", 6, true),
      new Error("Connection error: connect ECONNREFUSED 127.0.0.1:9092"),
    ]) {
      expect(refusedForGood(asRelaySeesIt(e))).toBe(false);
      expect(producerStateLost(asRelaySeesIt(e))).toBe(false);
    }
  });
});
