import { createRequire } from "node:module";
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { parseTraceParent, W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  RandomIdGenerator,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { RequestHandler } from "express";

/**
 * Tracing, with OpenTelemetry. Every service joins one trace per order: the HTTP request
 * (OpenTelemetry's maintained http instrumentation makes its server span), each message a
 * producer span and each message handled a consumer span, parented through the W3C
 * `traceparent` header of Kafka records and AMQP messages (the outbox stores it with the
 * event). Log lines, the decision line and the timelines carry the trace id.
 *
 * Context and propagation are always on, so trace ids reach the logs whether or not
 * anything is exported. Spans are recorded and exported only when an exporter is attached
 * (and only then is the http instrumentation on):
 * OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, or
 * one a test attaches. Without one, spans are not recorded (the W3C sampled flag is 0) and
 * cost only their ids.
 *
 * The messaging spans are made here, not by the kafkajs and amqplib instrumentations: those
 * give every record of a batch the context active when the batch is sent (the outbox
 * relay's, not each order's), and start an eachBatch consumer's spans in a new trace
 * linked to the producer, so one order would never be one trace.
 */
export interface TraceContext {
  traceId: string;
  spanId: string;
}

/** Names and attributes of OpenTelemetry's messaging semantic conventions (v1.30+). */
export const MESSAGING = {
  system: "messaging.system",
  destination: "messaging.destination.name",
  operationType: "messaging.operation.type",
  operationName: "messaging.operation.name",
  consumerGroup: "messaging.consumer.group.name",
  partition: "messaging.destination.partition.id",
  messageId: "messaging.message.id",
  kafkaKey: "messaging.kafka.message.key",
  kafkaOffset: "messaging.kafka.offset",
  rabbitRoutingKey: "messaging.rabbitmq.destination.routing_key",
  batchCount: "messaging.batch.message_count",
} as const;

// --- The provider: one per process, exporters attached as they come ----------------------

/** What only exporting needs, loaded when it starts. */
const lazy = createRequire(import.meta.url);

const processors: SpanProcessor[] = [];

/** Records (and samples) spans only while something will export them. */
const sampler: Sampler = {
  shouldSample: () => ({
    decision:
      processors.length > 0 ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
  }),
  toString: () => "RecordWhileExporting",
};

/** Hands each span to every attached processor. */
const fanOut: SpanProcessor = {
  onStart: (span, parent) => {
    for (const p of processors) p.onStart(span, parent);
  },
  onEnd: (span: ReadableSpan) => {
    for (const p of processors) p.onEnd(span);
  },
  forceFlush: async () => {
    await Promise.all(processors.map((p) => p.forceFlush()));
  },
  shutdown: async () => {
    await Promise.all(processors.map((p) => p.shutdown()));
  },
};

let started = false;

/**
 * Sets up tracing for this process, once: the context manager, the W3C propagator, the
 * tracer provider named after the service, and the OTLP exporter (with the http
 * instrumentation) when the environment names an endpoint. Later calls change nothing. Each service calls it
 * first in its main; anything that traces before that gets the defaults (service name from
 * OTEL_SERVICE_NAME, or "shop").
 */
export function startTracing(serviceName = process.env.OTEL_SERVICE_NAME ?? "shop"): void {
  if (started) return;
  started = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(
    new TracerProvider({
      resource: resourceFromAttributes({ "service.name": serviceName }),
      sampler,
      spanProcessors: [fanOut],
    }),
  );
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
    // OTLP over HTTP (protobuf); the exporter reads the endpoint and headers from the
    // environment, as OpenTelemetry's settings say. Loaded only then: with protobuf and the
    // instrumentation, about 3 MB of a service's memory at rest that nothing would use.
    const { OTLPTraceExporter } = lazy(
      "@opentelemetry/exporter-trace-otlp-proto",
    ) as typeof import("@opentelemetry/exporter-trace-otlp-proto");
    attachProcessor(new BatchSpanProcessor({ exporter: new OTLPTraceExporter() }));
  }
}

let httpInstrumented = false;

/** Health checks and metric scrapes are no one's work: they get no span. */
const untraced = (url: string | undefined) => /^\/(saude|metrics)\b/.test(url ?? "");

/**
 * Spans are exported from now on: OpenTelemetry's http instrumentation makes each request's
 * span, with the semantic conventions' attributes. Until then traceHttp makes a bare one
 * (not recorded, as nothing would export it; the instrumentation measured about a sixth of
 * the orders API's CPU per request on Node 20 for attributes no one reads).
 */
function attachProcessor(processor: SpanProcessor) {
  processors.push(processor);
  if (httpInstrumented) return;
  httpInstrumented = true;
  // It patches Node's http server, and hooks require(): the require below makes it patch
  // the module even though Express loaded it before this ran.
  const { registerInstrumentations } = lazy(
    "@opentelemetry/instrumentation",
  ) as typeof import("@opentelemetry/instrumentation");
  const { HttpInstrumentation } = lazy(
    "@opentelemetry/instrumentation-http",
  ) as typeof import("@opentelemetry/instrumentation-http");
  registerInstrumentations({
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => untraced(req.url),
        ignoreOutgoingRequestHook: () => true,
      }),
    ],
  });
  lazy("node:http");
}

/**
 * Attaches an exporter (a test's in-memory one): every span ended from now on goes to it as
 * it ends. Returns a function that detaches it.
 */
export function attachSpanExporter(exporter: SpanExporter): () => void {
  startTracing();
  const processor = new SimpleSpanProcessor({ exporter });
  attachProcessor(processor);
  return () => {
    processors.splice(processors.indexOf(processor), 1);
  };
}

/** Sends what is buffered (a service's clean stop calls it). */
export async function flushTracing(): Promise<void> {
  await fanOut.forceFlush();
}

const tracer = () => {
  startTracing();
  return trace.getTracer("@shop/service");
};

// --- Context -------------------------------------------------------------------------

/** The span of the work running now, when it has a valid one. */
function activeSpanContext(): SpanContext | undefined {
  const span = trace.getSpanContext(context.active());
  return span && isSpanContextValid(span) ? span : undefined;
}

/** The context of the work running now, if any. */
export function currentContext(): TraceContext | undefined {
  const span = activeSpanContext();
  return span ? { traceId: span.traceId, spanId: span.spanId } : undefined;
}

const traceparentIn = (ctx: Context): string | undefined => {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
};

/** A span context as its W3C traceparent: what the propagator writes (version 00). */
const traceparentOf = (span: SpanContext): string =>
  `00-${span.traceId}-${span.spanId}-0${(span.traceFlags || TraceFlags.NONE).toString(16)}`;

/** The traceparent of the work running now; an empty one (a new trace) when none. */
export function currentTraceparent(): string {
  startTracing();
  return traceparentOf(activeSpanContext() ?? newSpanContext());
}

/**
 * Whether spans are recorded now: only while an exporter is attached. Until then a span is
 * only its ids, and the code that makes one takes the short way (`unrecordedChild`):
 * OpenTelemetry's would build, per request and per record, a span, its contexts and its
 * attributes for nothing to read (issue 57).
 */
export const spansRecorded = (): boolean => processors.length > 0;

/**
 * A span that is not recorded, as OpenTelemetry's tracer makes one when its sampler says
 * NOT_RECORD: a new span id, in the trace of `parent` when it is a valid one, else in a new
 * trace; not sampled.
 */
export function unrecordedChild(parent: SpanContext | null | undefined): SpanContext {
  return {
    traceId: parent && isSpanContextValid(parent) ? parent.traceId : ids.generateTraceId(),
    spanId: ids.generateSpanId(),
    traceFlags: TraceFlags.NONE,
  };
}

/** The header to send onwards with a message: the current trace, when there is one. */
export function traceHeader(): { traceparent?: string } {
  startTracing();
  const span = activeSpanContext();
  return span ? { traceparent: traceparentOf(span) } : {};
}

const ids = new RandomIdGenerator();

/** The start of a new trace: fresh ids, no span (nothing to record or export). */
const newSpanContext = (): SpanContext => unrecordedChild(null);

/** The parent carried by a message's traceparent (bytes or text); the root when none. */
const headerGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const v = carrier[key];
    if (v === undefined || v === null) return undefined;
    return Buffer.isBuffer(v) ? v.toString("utf8") : String(v);
  },
};

export function parentFrom(headers: Record<string, unknown> | undefined): Context {
  startTracing();
  return headers ? propagation.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
}

// --- Messaging spans ---------------------------------------------------------------------

export interface ProducerSpan {
  /** The traceparent to send with the message: this span's. */
  readonly traceparent: string;
  /** Ends the span: with the broker's answer's attributes, or as failed. */
  end(attributes?: Attributes, error?: unknown): void;
}

/**
 * A producer span for one outgoing message, child of `parent` (the traceparent the message
 * was handed over with: the outbox row's, the caller's) or else of the work running now.
 */
export function startProducerSpan(
  name: string,
  attributes: Attributes,
  parent?: string,
): ProducerSpan {
  if (!spansRecorded()) {
    const of = parent ? parseTraceParent(parent) : trace.getSpanContext(context.active());
    return { traceparent: traceparentOf(unrecordedChild(of)), end: () => {} };
  }
  const parentContext = parent ? parentFrom({ traceparent: parent }) : context.active();
  const span = tracer().startSpan(name, { kind: SpanKind.PRODUCER, attributes }, parentContext);
  return {
    traceparent: traceparentIn(trace.setSpan(parentContext, span)) ?? "",
    end: (more, error) => endSpan(span, more, error),
  };
}

function endSpan(span: Span, attributes?: Attributes, error?: unknown) {
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
    if (error instanceof Error) span.recordException(error);
  }
  span.end();
}

/**
 * Runs `handle` in a consumer span, child of the context the message carries: its logs, and
 * the messages it sends, belong to the publisher's trace. `handle` gives back what is still
 * pending (a pipelined publish); the span ends when that has settled.
 */
export async function inConsumerSpan<T extends { pending?: Promise<unknown> }>(
  name: string,
  headers: Record<string, unknown> | undefined,
  attributes: Attributes,
  handle: () => Promise<T>,
): Promise<T> {
  const parent = parentFrom(headers);
  const span = tracer().startSpan(name, { kind: SpanKind.CONSUMER, attributes }, parent);
  try {
    const result = await context.with(trace.setSpan(parent, span), handle);
    if (result.pending)
      result.pending.then(
        () => span.end(),
        (error: unknown) => endSpan(span, undefined, error),
      );
    else span.end();
    return result;
  } catch (error) {
    endSpan(span, undefined, error);
    throw error;
  }
}

/**
 * Each request continues the caller's trace (or starts one) and its answer says which: in
 * the http instrumentation's span when spans are exported, else in a bare server span.
 */
export const traceHttp: RequestHandler = (req, res, next) => {
  if (untraced(req.url)) {
    next();
    return;
  }
  if (httpInstrumented && trace.getSpan(context.active())) {
    const traceparent = traceparentIn(context.active());
    if (traceparent) res.setHeader("traceparent", traceparent);
    next();
    return;
  }
  if (!spansRecorded()) {
    startTracing();
    const header = req.headers.traceparent;
    const span = unrecordedChild(typeof header === "string" ? parseTraceParent(header) : null);
    res.setHeader("traceparent", traceparentOf(span));
    context.with(trace.setSpanContext(ROOT_CONTEXT, span), next);
    return;
  }
  const parent = parentFrom(req.headers);
  const span = tracer().startSpan(req.method, { kind: SpanKind.SERVER }, parent);
  const active = trace.setSpan(parent, span);
  res.setHeader("traceparent", traceparentIn(active) ?? "");
  res.once("close", () => span.end());
  context.with(active, next);
};
