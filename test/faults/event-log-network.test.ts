import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownKafka } from "../../harness/own-kafka.ts";
import { queryRows, type ServiceProcess } from "../helpers/shop.ts";
import { waitFor } from "../helpers/wait.ts";
import { eventLogShop, publishedAfter, streamOfOrders } from "./harness.ts";
import { beyondFirst, tally } from "./report.ts";

/**
 * Network faults on the event-log edition: a broker of this file's own that advertises a
 * TCP proxy's address, so that every client goes through the proxy, which drops, holds or
 * loses traffic. A file of its own, beside event-log.test.ts, so that the fault files run
 * two at a time in about the same time each; counted like every event-log scenario
 * (harness.ts).
 */
const proxied = ownKafka("faults-proxied", { proxied: true });
const running: ServiceProcess[] = [];

/** The shop on the proxied broker, its processes stopped with the file's. */
const shop = (name: string) => eventLogShop(running, name, { broker: proxied });

describe("Fault injection: event-log edition", () => {
  describe("through a TCP proxy between the services and Kafka", () => {
    beforeAll(async () => {
      await proxied.start();
    }, 120_000);
    afterAll(async () => {
      await Promise.all(running.splice(0).map((p) => p.stop()));
      await proxied.dispose();
    }, 120_000);

    /** Orders whose PedidoCriado waited at least `ms` in the outbox before Kafka took it. */
    const waitedInOutbox = (dbPath: string, ms: number) =>
      queryRows<{ criado_em: string; enviado_em: string }>(
        dbPath,
        "SELECT criado_em, enviado_em FROM outbox WHERE enviado_em IS NOT NULL",
      ).filter((r) => Date.parse(r.enviado_em) - Date.parse(r.criado_em) >= ms).length;

    /** Orders made since `since` whose event has waited at least `ms` in the outbox, unsent. */
    const waitingInOutbox = (dbPath: string, since: number, ms: number) =>
      queryRows<{ criado_em: string }>(
        dbPath,
        "SELECT criado_em FROM outbox WHERE enviado_em IS NULL",
      ).filter(
        (r) => Date.parse(r.criado_em) >= since && Date.now() - Date.parse(r.criado_em) >= ms,
      ).length;

    async function underLoad(name: string) {
      const s = shop(name);
      const api = await s.start("orders-api", "orders-api");
      await s.payments("caixa-1");
      const stream = streamOfOrders(() => api.url(), 80, 2, 100);
      await waitFor(() => stream.created.length >= 10);
      return { s, api, stream };
    }

    it("When every connection to Kafka is dropped and refused under load, then the services reconnect, the outbox publishes what waited, and each order is applied once", async () => {
      const { s, api, stream } = await underLoad("f-kafka-cut");
      const cutAt = Date.now();
      proxied.proxy.cutConnections();
      // Refused until the fault is felt: an order made after the cut has waited 2 s in the
      // outbox, its event unsent (the database's state, not a fixed sleep).
      await waitFor(() => waitingInOutbox(s.dbPath, cutAt, 2000) > 0, {
        timeoutMs: 20_000,
        intervalMs: 100,
        what: "an order's event waiting 2 s in the outbox while the connections are refused",
      });
      proxied.proxy.restore();
      const backAt = Date.now();
      await stream.done;
      await s.finish(
        api,
        stream,
        {
          scenario: "Kafka connections dropped (event-log)",
          fault:
            "TCP proxy drops every connection to Kafka and refuses new ones until an order's event has waited 2 s in the outbox",
          end: "the proxy accepting again",
        },
        () => {
          const waited = waitedInOutbox(s.dbPath, 2000);
          return {
            hit: waited > 0,
            text: `${waited} orders' events waited over 2 s in the outbox while the connections were down`,
          };
        },
        backAt,
      );
    }, 240_000);

    it("When traffic to Kafka is black-holed past the 5 s confirmation, then orders answer 500 saved, and everything is published and applied once after", async () => {
      const { s, api, stream } = await underLoad("f-kafka-blackhole");
      proxied.proxy.blackHole();
      await waitFor(() => stream.unconfirmed.length >= 1, {
        timeoutMs: 20_000,
        what: "an order answered 500 while traffic is held",
      });
      proxied.proxy.restore();
      const backAt = Date.now();
      await stream.done;
      const unconfirmed = [...stream.unconfirmed];
      await s.finish(
        api,
        stream,
        {
          scenario: "Kafka traffic black-holed (event-log)",
          fault:
            "TCP proxy holds every byte to and from Kafka until an order is answered 500 (past the 5 s confirmation), then lets it through",
          end: "the proxy letting bytes through",
        },
        publishedAfter(unconfirmed, "nothing moved"),
        backAt,
      );
    }, 240_000);

    it("When a Produce request reaches Kafka but its answer is lost and the connection cut, then kafkajs sends it again: the outbox relay's, idempotent, is written once; payments' is written twice and applied once", async () => {
      const { s, api, stream } = await underLoad("f-kafka-lost-ack");
      const lostAt = Date.now();
      // The relay's produce first (the orders API's client id), then a payment's.
      const relayLost = await proxied.proxy.loseNextAck("orders-api");
      await proxied.proxy.loseNextAck("payments-caixa-1");
      await stream.done;
      let criadosTwice = -1;
      await s.finish(
        api,
        stream,
        {
          scenario: "Kafka produce answer lost (event-log)",
          fault:
            "TCP proxy lets a Produce request through, drops Kafka's answer and cuts the connection: the outbox relay's, then a payment's",
          end: "the connection cut with the answer",
        },
        (state) => {
          // The same bytes twice: a produce sent again, not a decision made again (a new
          // decision has its own processadoEm).
          const twice = (records: { value: unknown }[]) =>
            beyondFirst(tally(records.map((r) => JSON.stringify(r.value))));
          criadosTwice = twice(state.criados);
          const resultados = twice(state.resultados);
          const lost = relayLost?.batches[0];
          // The relay's batch sent again as it was: the same producer id and first sequence.
          const again = lost
            ? proxied.proxy.produced.filter(
                (p) =>
                  p !== relayLost &&
                  p.client === relayLost?.client &&
                  p.batches.some(
                    (b) =>
                      b.topic === lost.topic &&
                      b.partition === lost.partition &&
                      b.producerId === lost.producerId &&
                      b.sequence === lost.sequence,
                  ),
              ).length
            : 0;
          const where = lost
            ? `${lost.topic.split(".").pop()}[${lost.partition}] from sequence ${lost.sequence}, producer ${lost.producerId}`
            : "none read";
          return {
            hit: lost !== undefined && lost.producerId >= 0n && again > 0 && resultados > 0,
            text: `the relay's Produce (${where}) lost its answer and was sent again ${again}× with the same producer id and sequence: PedidoCriado written twice ${criadosTwice}; a payment's Produce (not idempotent) lost its answer too: ResultadoPagamento written twice ${resultados}, applied once`,
          };
        },
        lostAt,
      );
      // The relay's producer is idempotent (orders-api/src/server.ts): Kafka recognised the repeat.
      expect(criadosTwice).toBe(0);
    }, 240_000);
  });
});
