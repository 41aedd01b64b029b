import { trace } from "@opentelemetry/api";
import type { Express, RequestHandler } from "express";
import { Counter, collectDefaultMetrics, Gauge, Histogram, register } from "prom-client";

/**
 * Prometheus metrics, one registry per process (each service is its own process). The
 * shared libraries count messages here; each service adds its own gauges and serves
 * GET /metrics. prom-client is the maintained Node client, with the text format, default
 * process metrics and collect-on-scrape gauges done right.
 */
// This module may be evaluated twice in one process (a test runner's module graphs share
// prom-client's global registry): each metric is made once and reused.
function single<M>(name: string, create: () => M): M {
  return (register.getSingleMetric(name) as M | undefined) ?? create();
}

/**
 * Node's default metrics, the event loop's delay sampled every 100 ms rather than every
 * 10 ms: the sampling timer woke every process (each service, CLI and test worker) 100
 * times a second, 1.1 % of a core each at rest, where an idle orders API took 1.9 % in all
 * (issue 55). A delay is still measured to the nanosecond, from a tenth of the samples.
 */
if (!register.getSingleMetric("process_cpu_user_seconds_total"))
  collectDefaultMetrics({ eventLoopMonitoringPrecision: 100 });

export const httpDuration = single(
  "shop_http_request_duration_seconds",
  () =>
    new Histogram({
      name: "shop_http_request_duration_seconds",
      help: "HTTP request latency by method, route and status",
      labelNames: ["method", "route", "status"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
);

const messages = (name: string, help: string) =>
  single(name, () => new Counter({ name, help, labelNames: ["destino"] as const }));

/** Messages, by topic or exchange/queue: published, confirmed, consumed, failed, dead-lettered. */
export const metrics = {
  published: messages("shop_messages_published_total", "messages handed to the broker"),
  confirmed: messages(
    "shop_messages_confirmed_total",
    "messages the broker acknowledged (Kafka acks=all, RabbitMQ publisher confirm)",
  ),
  consumed: messages("shop_messages_consumed_total", "messages handled successfully by a consumer"),
  failed: messages(
    "shop_messages_failed_total",
    "publishes not confirmed, and consumer handler failures",
  ),
  deadLettered: messages(
    "shop_messages_dead_lettered_total",
    "messages sent to a dead-letter destination",
  ),
  lateWritten: messages(
    "shop_messages_late_written_total",
    "records reported not confirmed (the time limit passed) that the broker wrote afterwards",
  ),
  abandoned: messages(
    "shop_messages_abandoned_total",
    "records reported not confirmed that were never written: the client gave up on them",
  ),
  relayRounds: single(
    "shop_outbox_relay_rounds_total",
    () =>
      new Counter({
        name: "shop_outbox_relay_rounds_total",
        help: "rounds the outbox relay finished (a claim sent and marked, or nothing to claim)",
        labelNames: ["instancia"] as const,
      }),
  ),
  retried: messages(
    "shop_consumer_retries_total",
    "records tried again after their handling failed (their partition waits meanwhile)",
  ),
};

/**
 * Requests this process's Kafka clients sent, by Kafka API (Produce, Fetch, Heartbeat,
 * OffsetCommit...): what a record costs in round trips, which batching moves.
 */
export const kafkaRequests = single(
  "shop_kafka_requests_total",
  () =>
    new Counter({
      name: "shop_kafka_requests_total",
      help: "requests sent to Kafka by this process's producers and consumers, by API",
      labelNames: ["api"] as const,
    }),
);

/** A gauge whose value is read when Prometheus scrapes. */
export function gauge(
  name: string,
  help: string,
  labelNames: string[],
  read: (g: Gauge) => void | Promise<void>,
): Gauge {
  const existing = register.getSingleMetric(name);
  if (existing) register.removeSingleMetric(name);
  return new Gauge({
    name,
    help,
    labelNames,
    async collect() {
      await read(this);
    },
  });
}

/** Times every request; the route is Express's pattern (/pedidos/:id), never the raw URL. */
export const measureHttp: RequestHandler = (req, res, next) => {
  const end = httpDuration.startTimer({ method: req.method });
  // The request's span (OpenTelemetry's http instrumentation) ends at "close", after this:
  // it is named after the route too, as the semantic conventions name a server span.
  const span = trace.getActiveSpan();
  res.on("finish", () => {
    const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : "(no route)";
    end({ route, status: String(res.statusCode) });
    if (span && req.route?.path) {
      span.setAttribute("http.route", route);
      span.updateName(`${req.method} ${route}`);
    }
  });
  next();
};

export function serveMetrics(app: Express): void {
  app.get("/metrics", async (_req, res) => {
    res.type(register.contentType).send(await register.metrics());
  });
}
