import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { EXCHANGES, kafkaNames, type Pedido, QUEUES } from "@shop/contracts";
import { attachSpanExporter, currentTraceparent, MESSAGING } from "@shop/service";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig as brokerOrdersConfig } from "../../broker/orders/src/config.ts";
import { startOrders } from "../../broker/orders/src/server.ts";
import { readConfig as brokerPaymentsConfig } from "../../broker/payments/src/config.ts";
import { startPayments as startBrokerPayments } from "../../broker/payments/src/server.ts";
import { otlpCollector } from "../../harness/otlp.ts";
import { createVhost } from "../../harness/vhost.ts";
import { readConfig as ordersConfig } from "../../orders-api/src/config.ts";
import { startOrdersApi } from "../../orders-api/src/server.ts";
import { readConfig as paymentsConfig } from "../../payments/src/config.ts";
import { startPayments } from "../../payments/src/server.ts";
import { brokerEnv } from "../helpers/broker.ts";
import {
  capturingLogger,
  http,
  ServiceProcess,
  serviceEnv,
  tempDb,
  uniquePrefix,
} from "../helpers/shop.ts";
import { waitFor } from "../helpers/wait.ts";

/**
 * Issue 20, part 2: OpenTelemetry. One order is one trace, from the HTTP request through
 * every message to the result applied, in both editions, each hop a span with the
 * attributes OpenTelemetry's semantic conventions give messaging. The services run in this
 * process, so that the SDK's in-memory exporter sees every span they end.
 */
const exporter = new InMemorySpanExporter();
let detach: () => void = () => {};
beforeAll(() => {
  detach = attachSpanExporter(exporter);
});
afterAll(() => detach());

const traceIdOf = (traceparent: string | null) => traceparent?.split("-")[1] as string;

/** The spans of one trace once `last` is among them, ordered parent before child. */
async function chainOf(traceId: string, last: (s: ReadableSpan) => boolean) {
  const spans = await waitFor(
    () => {
      const mine = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      return mine.some(last) ? mine : null;
    },
    { what: `the trace ${traceId} down to its last span` },
  );
  const byParent = new Map(spans.map((s) => [s.parentSpanContext?.spanId, s]));
  const root = spans.find(
    (s) =>
      s.kind === SpanKind.SERVER &&
      !spans.some((p) => p.spanContext().spanId === s.parentSpanContext?.spanId),
  );
  const chain: ReadableSpan[] = [];
  for (let s = root; s; s = byParent.get(s.spanContext().spanId)) chain.push(s);
  return { spans, chain };
}

const summary = (s: ReadableSpan) => ({
  name: s.name,
  kind: SpanKind[s.kind],
  system: s.attributes[MESSAGING.system],
  operation: s.attributes[MESSAGING.operationType],
});

describe("OpenTelemetry: one order, one trace (both editions)", () => {
  it("Event log: POST /pedidos -> send pedidos-criados -> payments processes it -> send pagamentos-resultados -> the orders API applies it, one trace, each span the child of the one before", async () => {
    const prefix = uniquePrefix("otel");
    const names = kafkaNames(prefix);
    const api = await startOrdersApi(
      ordersConfig(serviceEnv(prefix, { DB_PATH: tempDb("otel") })),
      capturingLogger("orders-api"),
    );
    const payments = await startPayments(
      paymentsConfig(serviceEnv(prefix, { TEMPO_DECISAO_MS: "0", INSTANCIA: "caixa-o" })),
      capturingLogger("payments"),
      () => {},
    );
    try {
      const res = await http<Pedido>("POST", `${api.url}/pedidos`, {
        cliente: "Ana",
        item: "caneca",
        quantidade: 1,
        precoUnitario: 10,
      });
      expect(res.status).toBe(201);
      const traceId = traceIdOf(res.headers.get("traceparent"));
      const applied = (s: ReadableSpan) =>
        s.name === `process ${names.topics.pagamentosResultados}`;
      const { spans, chain } = await chainOf(traceId, applied);

      expect(chain.map(summary)).toEqual([
        { name: "POST /pedidos", kind: "SERVER", system: undefined, operation: undefined },
        {
          name: `send ${names.topics.pedidosCriados}`,
          kind: "PRODUCER",
          system: "kafka",
          operation: "send",
        },
        {
          name: `process ${names.topics.pedidosCriados}`,
          kind: "CONSUMER",
          system: "kafka",
          operation: "process",
        },
        {
          name: `send ${names.topics.pagamentosResultados}`,
          kind: "PRODUCER",
          system: "kafka",
          operation: "send",
        },
        {
          name: `process ${names.topics.pagamentosResultados}`,
          kind: "CONSUMER",
          system: "kafka",
          operation: "process",
        },
      ]);
      // Nothing else of this order's work started a trace of its own or hangs outside the chain.
      expect(spans).toHaveLength(chain.length);

      const [server, send, process_, sendResult, apply] = chain as ReadableSpan[];
      expect(server?.attributes).toMatchObject({
        "http.request.method": "POST",
        "http.route": "/pedidos",
        "http.response.status_code": 201,
      });
      const key = String(res.body.id);
      expect(send?.attributes).toMatchObject({
        [MESSAGING.destination]: names.topics.pedidosCriados,
        [MESSAGING.operationName]: "send",
        [MESSAGING.kafkaKey]: key,
      });
      // The acknowledgement says where the record went.
      expect(send?.attributes[MESSAGING.partition]).toMatch(/^[0-2]$/);
      expect(send?.attributes[MESSAGING.kafkaOffset]).toMatch(/^\d+$/);
      expect(process_?.attributes).toMatchObject({
        [MESSAGING.consumerGroup]: names.groups.pagamentos,
        [MESSAGING.partition]: send?.attributes[MESSAGING.partition],
        [MESSAGING.kafkaOffset]: send?.attributes[MESSAGING.kafkaOffset],
        [MESSAGING.kafkaKey]: key,
      });
      expect(sendResult?.attributes[MESSAGING.kafkaKey]).toBe(key);
      expect(apply?.attributes).toMatchObject({
        [MESSAGING.consumerGroup]: names.groups.pedidosApi,
        [MESSAGING.operationName]: "process",
      });
    } finally {
      await payments.stop();
      await api.stop();
    }
  });

  it("Broker: POST /pedidos/{id}/pagamentos -> publish the request -> payments processes it -> publish the result -> orders applies it, one trace", async () => {
    const vhost = await createVhost("otel");
    const orders = await startOrders(
      brokerOrdersConfig(brokerEnv(vhost, "otel-orders")),
      capturingLogger("broker-orders"),
    );
    const payments = await startBrokerPayments(
      brokerPaymentsConfig(brokerEnv(vhost, "otel-payments")),
      capturingLogger("broker-payments"),
    );
    try {
      const pedido = await http<{ id: string }>("POST", `${orders.url}/pedidos`, {
        clienteId: "otel",
        itens: [{ sku: "CAFE", quantidade: 1, precoUnitario: 10 }],
      });
      const res = await http("POST", `${orders.url}/pedidos/${pedido.body.id}/pagamentos`, {
        solicitacaoId: crypto.randomUUID(),
        cenario: "APROVAR",
      });
      expect(res.status).toBe(202);
      const traceId = traceIdOf(res.headers.get("traceparent"));
      const resultQueue = QUEUES.resultados;
      const { spans, chain } = await chainOf(traceId, (s) => s.name === `process ${resultQueue}`);

      expect(chain.map(summary)).toEqual([
        {
          name: "POST /pedidos/:id/pagamentos",
          kind: "SERVER",
          system: undefined,
          operation: undefined,
        },
        {
          name: `publish ${EXCHANGES.commands}`,
          kind: "PRODUCER",
          system: "rabbitmq",
          operation: "send",
        },
        {
          name: `process ${QUEUES.solicitacoes}`,
          kind: "CONSUMER",
          system: "rabbitmq",
          operation: "process",
        },
        {
          name: `publish ${EXCHANGES.events}`,
          kind: "PRODUCER",
          system: "rabbitmq",
          operation: "send",
        },
        {
          name: `process ${resultQueue}`,
          kind: "CONSUMER",
          system: "rabbitmq",
          operation: "process",
        },
      ]);
      expect(spans).toHaveLength(chain.length);
      const [, publish, consume] = chain as ReadableSpan[];
      expect(publish?.attributes[MESSAGING.messageId]).toMatch(/^[0-9a-f-]{36}$/);
      expect(consume?.attributes[MESSAGING.messageId]).toBe(
        publish?.attributes[MESSAGING.messageId],
      );
      expect(publish?.attributes[MESSAGING.rabbitRoutingKey]).toBe(
        consume?.attributes[MESSAGING.rabbitRoutingKey],
      );
    } finally {
      await payments.stop();
      await orders.stop();
      await vhost.dispose();
    }
  });

  it("When no exporter is attached, then nothing is recorded, and the trace id still reaches the answer", async () => {
    detach();
    const before = exporter.getFinishedSpans().length;
    const prefix = uniquePrefix("otel-off");
    const api = await startOrdersApi(
      ordersConfig(serviceEnv(prefix, { DB_PATH: tempDb("otel-off") })),
      capturingLogger("orders-api"),
    );
    try {
      const res = await http<Pedido>("POST", `${api.url}/pedidos`, {
        cliente: "Bia",
        item: "x",
        quantidade: 1,
        precoUnitario: 1,
      });
      expect(res.status).toBe(201);
      // Not sampled (flag 00): nothing downstream records it either.
      expect(res.headers.get("traceparent")).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
      expect(exporter.getFinishedSpans()).toHaveLength(before);
    } finally {
      await api.stop();
      detach = attachSpanExporter(exporter);
    }
  });

  it("When a service runs with OTEL_EXPORTER_OTLP_ENDPOINT set, then it exports its spans there over OTLP/HTTP (protobuf), the order's trace among them", async () => {
    const collector = await otlpCollector({ keepBodies: true });
    const prefix = uniquePrefix("otel-otlp");
    const api = await ServiceProcess.start("orders-api", "orders-api", {
      ...serviceEnv(prefix, { DB_PATH: tempDb("otel-otlp") }),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: "200",
    });
    try {
      const res = await http<Pedido>("POST", `${api.url()}/pedidos`, {
        cliente: "Caio",
        item: "x",
        quantidade: 1,
        precoUnitario: 1,
      });
      expect(res.status).toBe(201);
      // Sampled now: the answer's flag is 01.
      const traceparent = res.headers.get("traceparent") as string;
      expect(traceparent).toMatch(/-01$/);
      const traceId = Buffer.from(traceIdOf(traceparent), "hex");
      // In OTLP's protobuf a span's trace id is its 16 bytes and its name is UTF-8.
      const exported = await waitFor(
        () => {
          const all = Buffer.concat(collector.bodies);
          return all.includes(traceId) && all.includes("POST /pedidos") ? all : null;
        },
        { what: "the order's spans at the OTLP endpoint" },
      );
      expect(exported.includes(`send ${kafkaNames(prefix).topics.pedidosCriados}`)).toBe(true);
      expect(exported.includes("orders-api")).toBe(true); // service.name
    } finally {
      await api.stop();
      await collector.close();
    }
  });

  it("When work outside any trace asks for a traceparent (an event stored with no request around it), then it gets a new one each time, and no span is made for it", async () => {
    const before = exporter.getFinishedSpans().length;
    const [a, b] = await Promise.all([
      new Promise<string>((resolve) => setImmediate(() => resolve(currentTraceparent()))),
      new Promise<string>((resolve) => setImmediate(() => resolve(currentTraceparent()))),
    ]);
    for (const t of [a, b]) expect(t).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(traceIdOf(a)).not.toBe(traceIdOf(b));
    expect(exporter.getFinishedSpans()).toHaveLength(before);
  });
});
