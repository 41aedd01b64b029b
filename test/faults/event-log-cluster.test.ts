import type { Plataforma } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientOf } from "../helpers/kafka.ts";
import { ownKafkaCluster } from "../helpers/own-kafka.ts";
import { http, type ServiceProcess } from "../helpers/shop.ts";
import { step, waitFor } from "../helpers/wait.ts";
import { eventLogShop, streamOfOrders } from "./harness.ts";

/**
 * Failover on a Kafka cluster of three of the file's own (replication 3,
 * min.insync.replicas 2): the partition leader, the active controller, two of three
 * brokers killed under a stream of orders. A file of its own, so that it runs beside the
 * other fault files; counted like every event-log scenario (harness.ts).
 */
const running: ServiceProcess[] = [];

describe("Fault injection: event-log edition", () => {
  describe("on a Kafka cluster of three", () => {
    const cluster = ownKafkaCluster("faults-cluster");
    beforeAll(async () => {
      await cluster.start();
    }, 120_000);
    afterAll(async () => {
      await Promise.all(running.splice(0).map((p) => p.stop()));
      await cluster.dispose();
    }, 120_000);

    const metadata = async (topic: string) => {
      const admin = clientOf(cluster.brokers).admin();
      await admin.connect();
      try {
        const [t] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
        const configs = await admin.describeConfigs({
          includeSynonyms: false,
          resources: [{ type: 2, name: topic, configNames: ["min.insync.replicas"] }],
        });
        return {
          partitions: t?.partitions ?? [],
          minInsync: configs.resources[0]?.configEntries[0]?.configValue,
        };
      } finally {
        await admin.disconnect();
      }
    };

    it("When the shop creates its topics on a cluster of three, then every partition has three replicas, all in sync, and min.insync.replicas is 2", async () => {
      const s = eventLogShop(running, "f-cluster-topics", { broker: cluster });
      await s.start("orders-api", "orders-api");
      for (const topic of [s.names.topics.pedidosCriados, s.names.topics.pagamentosResultados]) {
        const m = await metadata(topic);
        expect(m.partitions).toHaveLength(3);
        for (const p of m.partitions) {
          expect(p.replicas).toHaveLength(3);
          expect(p.isr).toHaveLength(3);
        }
        expect(m.minInsync).toBe("2");
      }
    }, 120_000);

    /** Restarts the nodes that are down and waits until every partition has 3 in sync again. */
    const restartInSync = async (topic: string) => {
      await cluster.start();
      const backAt = Date.now();
      await waitFor(
        async () => (await metadata(topic)).partitions.every((p) => p.isr.length === 3),
        { timeoutMs: 60_000, intervalMs: 500, what: "the restarted nodes back in every ISR" },
      );
      return backAt;
    };

    /** The shop on the cluster, a payments instance, and a stream of orders under way. */
    const underLoad = async (name: string) => {
      const s = eventLogShop(running, name, { broker: cluster });
      const api = await s.start("orders-api", "orders-api");
      await s.payments("caixa-1");
      const stream = streamOfOrders(() => api.url(), 60, 2, 100);
      await waitFor(() => stream.created.length >= 10);
      return { s, api, stream };
    };

    /** The platform panel of the orders API now (GET /plataforma): leaders, replicas, ISR. */
    const panel = async (api: ServiceProcess) =>
      (await http<Plataforma>("GET", `${api.url()}/plataforma`)).body;

    it("When two of three brokers are killed -9 under load, then POST /pedidos answers 500 within the 5 s wait with the order kept, and once they return nothing acknowledged is lost", async () => {
      const s = eventLogShop(running, "f-cluster-two-down", { broker: cluster });
      const api = await s.start("orders-api", "orders-api");
      await s.payments("caixa-1");
      const stream = streamOfOrders(() => api.url(), 60, 2, 150);
      const mark = (what: string) => step("two-down", what);
      await waitFor(() => stream.created.length >= 10);
      mark("10 created; killing 2 and 3");
      const downAt = Date.now();
      await Promise.all([cluster.kill(2), cluster.kill(3)]);
      mark("killed");
      await waitFor(() => stream.unconfirmed.length >= 2, {
        timeoutMs: 30_000,
        what: "orders answered 500 with two brokers down",
      });
      mark("2 answered 500; restarting");
      await cluster.start(); // brings back the two that are down
      mark("restarted");
      const backAt = Date.now();
      const during = [...stream.unconfirmed];
      await stream.done;
      mark("stream done");
      await s.finish(
        api,
        stream,
        {
          scenario: "two of three Kafka brokers killed (event-log, cluster)",
          fault:
            "kill -9 two of three brokers (replication 3, min.insync.replicas 2), restart both",
        },
        (state) => {
          const published = during.filter((id) => state.criadosPerPedido.has(id));
          return {
            hit: during.length > 0 && published.length === during.length,
            text: `${during.length} orders answered 500 in the ${Math.round((backAt - downAt) / 1000)} s without a majority (slowest ${Math.max(...stream.unconfirmedMs)} ms); ${published.length} of them published after`,
          };
        },
        backAt,
        downAt,
      );
      // The spec's 5 s wait for the confirmation, plus the request's own time.
      expect(Math.max(...stream.unconfirmedMs)).toBeLessThanOrEqual(6500);
    }, 240_000);

    it("When the broker leading the partitions being written is killed -9 under load, then leadership moves, the panel shows it and flags the partitions under-replicated, nothing is lost, and after a restart it is back in sync", async () => {
      const { s, api, stream } = await underLoad("f-cluster-leader");
      const before = await metadata(s.names.topics.pedidosCriados);
      const leader = before.partitions[0]?.leader as number;
      const killedAt = Date.now();
      await cluster.kill(leader);
      const moved = await waitFor(
        async () => {
          const now = await metadata(s.names.topics.pedidosCriados);
          return now.partitions.every((p) => p.leader !== leader && p.leader >= 0) && now;
        },
        { timeoutMs: 30_000, what: "every partition led by another broker" },
      );
      // What a learner sees meanwhile: the killed broker missing, its partitions under-replicated.
      const seen = await waitFor(
        async () => {
          const p = await panel(api);
          const topic = p.topicos.find((t) => t.topic === s.names.topics.pedidosCriados);
          return (
            topic?.particoes.every((x) => x.leader !== leader && !x.isr.includes(leader)) &&
            !p.cluster?.brokers.some((b) => b.nodeId === leader) &&
            topic
          );
        },
        { timeoutMs: 30_000, intervalMs: 500, what: "the panel to show the broker gone" },
      );
      expect(seen.particoes.every((x) => x.isr.length < x.replicas.length)).toBe(true);
      const backAt = await restartInSync(s.names.topics.pedidosCriados);
      await stream.done;
      await s.finish(
        api,
        stream,
        {
          scenario: "partition leader killed (event-log, cluster)",
          fault: "kill -9 the broker leading pedidos-criados[0], restart it",
        },
        () => ({
          hit: before.partitions.some((p) => p.leader === leader),
          text: `broker ${leader} led ${before.partitions.filter((p) => p.leader === leader).length} of 3 partitions; leaders after the kill: ${moved.partitions.map((p) => p.leader).join(", ")}; the panel flagged all 3 under-replicated; back in every ISR after the restart`,
        }),
        backAt,
        killedAt,
      );
    }, 240_000);

    it("When the active controller is killed -9 under load, then another node becomes controller, nothing is lost, and it rejoins after a restart", async () => {
      const { s, api, stream } = await underLoad("f-cluster-controller");
      const controller = await cluster.controller();
      const killedAt = Date.now();
      await cluster.kill(controller);
      const next = await waitFor(
        async () => {
          const c = await cluster.controller();
          return c !== controller && c > 0 && c;
        },
        { timeoutMs: 30_000, intervalMs: 500, what: "another node elected controller" },
      );
      const backAt = await restartInSync(s.names.topics.pedidosCriados);
      await stream.done;
      await s.finish(
        api,
        stream,
        {
          scenario: "active controller killed (event-log, cluster)",
          fault: "kill -9 the KRaft active controller of three, restart it",
        },
        () => ({
          hit: next !== controller,
          text: `node ${controller} was the active controller; node ${next} took over; back in every ISR after the restart`,
        }),
        backAt,
        killedAt,
      );
    }, 240_000);
  });
});
