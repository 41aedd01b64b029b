import { z } from "zod";
import { PagamentoProcessadoV1, SolicitacaoPagamentoV1 } from "./broker.ts";
import { PedidoCriadoV1, ResultadoPagamentoV1 } from "./event-log.ts";
import {
  DLQ_TOPICS,
  GROUPS,
  PARTITIONS_PER_TOPIC,
  REPLICATION_FACTOR,
  TOPICS,
  TOPOLOGY,
} from "./names.ts";

/**
 * AsyncAPI 3.0 documents of both editions, built from the same names (names.ts) and zod
 * schemas (the versao 1 payloads) the services use. `npm run asyncapi -- event-log` or
 * `-- broker` prints one; a test validates both with the AsyncAPI parser.
 */

const payload = (s: z.ZodType) => {
  const { $schema: _, ...schema } = z.toJSONSchema(s, {
    io: "output",
    unrepresentable: "any",
    target: "draft-7",
  }) as Record<string, unknown>;
  return schema;
};

const TRACEPARENT = {
  type: "object",
  properties: {
    traceparent: {
      type: "string",
      description: "W3C trace context of the request this message belongs to",
    },
  },
};

const ref = (path: string) => ({ $ref: path });

export function asyncapiEventLog() {
  const key = {
    type: "string",
    description: "the pedidoId as text: every event of an order goes to the same partition",
  };
  const message = (name: string, s: z.ZodType, summary: string) => ({
    name,
    title: name,
    summary,
    contentType: "application/json",
    headers: TRACEPARENT,
    payload: payload(s),
    bindings: { kafka: { key: key, bindingVersion: "0.5.0" } },
  });
  const topic = (address: string, partitions: number, message: string, description: string) => ({
    address,
    description,
    messages: { [message]: ref(`#/components/messages/${message}`) },
    bindings: {
      kafka: {
        topic: address,
        partitions,
        replicas: REPLICATION_FACTOR,
        bindingVersion: "0.5.0",
      },
    },
  });
  const grupo = (g: string) => ({
    kafka: { groupId: { type: "string", enum: [g] }, bindingVersion: "0.5.0" },
  });
  const operation = (
    action: "send" | "receive",
    channel: string,
    message: string,
    summary: string,
    groupId?: string,
  ) => ({
    action,
    summary,
    channel: ref(`#/channels/${channel}`),
    messages: [ref(`#/channels/${channel}/messages/${message}`)],
    ...(groupId ? { bindings: grupo(groupId) } : {}),
  });
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Event-driven shop, event-log edition (Kafka)",
      version: "1.0.0",
      description:
        "Orders, payments and analytics joined by two Kafka topics. A record that breaks its contract is copied to `<topic>.dlq` with the reason in its headers (dlq-motivo, dlq-tentativas, dlq-topico-original, dlq-particao-original, dlq-offset-original, dlq-em).",
    },
    servers: {
      local: { host: "127.0.0.1:9092", protocol: "kafka", description: "KRaft, one node" },
    },
    channels: {
      pedidosCriados: topic(
        TOPICS.pedidosCriados,
        PARTITIONS_PER_TOPIC,
        "PedidoCriado",
        "One record per order, written by the orders API's outbox relay (acks=all).",
      ),
      pagamentosResultados: topic(
        TOPICS.pagamentosResultados,
        PARTITIONS_PER_TOPIC,
        "ResultadoPagamento",
        "One record per decision, written by a payments instance (acks=all).",
      ),
      pedidosCriadosDlq: topic(
        DLQ_TOPICS.pedidosCriados,
        1,
        "RegistroMorto",
        "Records of pedidos-criados that broke their contract, as they were.",
      ),
      pagamentosResultadosDlq: topic(
        DLQ_TOPICS.pagamentosResultados,
        1,
        "RegistroMorto",
        "Records of pagamentos-resultados that broke their contract, as they were.",
      ),
    },
    operations: {
      publicarPedidoCriado: operation(
        "send",
        "pedidosCriados",
        "PedidoCriado",
        "The orders API publishes each new order",
      ),
      decidirPagamento: operation(
        "receive",
        "pedidosCriados",
        "PedidoCriado",
        "Payments instances decide each order (group pagamentos)",
        GROUPS.pagamentos,
      ),
      lerPedidosAnalytics: operation(
        "receive",
        "pedidosCriados",
        "PedidoCriado",
        "The analytics CLI rebuilds its view from offset 0 (its own group)",
        GROUPS.analytics,
      ),
      publicarResultado: operation(
        "send",
        "pagamentosResultados",
        "ResultadoPagamento",
        "A payments instance publishes its decision",
      ),
      aplicarResultado: operation(
        "receive",
        "pagamentosResultados",
        "ResultadoPagamento",
        "The orders API applies results idempotently (group pedidos-api)",
        GROUPS.pedidosApi,
      ),
      lerResultadosAnalytics: operation(
        "receive",
        "pagamentosResultados",
        "ResultadoPagamento",
        "The analytics CLI reads results too",
        GROUPS.analytics,
      ),
      desviarPedidoInvalido: operation(
        "send",
        "pedidosCriadosDlq",
        "RegistroMorto",
        "A consumer copies a record that breaks its contract",
      ),
      desviarResultadoInvalido: operation(
        "send",
        "pagamentosResultadosDlq",
        "RegistroMorto",
        "A consumer copies a record that breaks its contract",
      ),
    },
    components: {
      messages: {
        PedidoCriado: message("PedidoCriado", PedidoCriadoV1, "An order was created"),
        ResultadoPagamento: message(
          "ResultadoPagamento",
          ResultadoPagamentoV1,
          "A payment was decided",
        ),
        RegistroMorto: {
          name: "RegistroMorto",
          title: "Dead letter",
          summary: "The original key and value, unchanged, with why it was refused",
          headers: {
            type: "object",
            properties: {
              "dlq-motivo": { type: "string" },
              "dlq-tentativas": { type: "string" },
              "dlq-topico-original": { type: "string" },
              "dlq-particao-original": { type: "string" },
              "dlq-offset-original": { type: "string" },
              "dlq-em": { type: "string" },
            },
          },
          payload: { type: "string", description: "the original value, as text" },
        },
      },
    },
  };
}

export function asyncapiBroker() {
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {
    SolicitacaoPagamento: {
      name: "SolicitacaoPagamento",
      title: "Payment request",
      summary: "A command: decide this payment request (idempotent by solicitacaoId)",
      contentType: "application/json",
      headers: TRACEPARENT,
      payload: payload(SolicitacaoPagamentoV1),
    },
    PagamentoProcessado: {
      name: "PagamentoProcessado",
      title: "Payment processed",
      summary: "An event: the decision stored for a solicitacaoId",
      contentType: "application/json",
      headers: {
        type: "object",
        properties: {
          ...TRACEPARENT.properties,
          "x-decidida-em": { type: "string", description: "when the decision was stored" },
        },
      },
      payload: payload(PagamentoProcessadoV1),
    },
  };
  const messageOf: Record<string, string> = {
    "pagamentos.comandos": "SolicitacaoPagamento",
    "pagamentos.eventos": "PagamentoProcessado",
  };
  const id = (s: string) => s.replaceAll(/[.-](\w)/g, (_, c: string) => c.toUpperCase());
  for (const l of TOPOLOGY) {
    const message = messageOf[l.exchange] as string;
    const ex = id(l.exchange);
    const q = id(l.queue);
    const dl = id(l.deadLetterQueue);
    channels[ex] = {
      address: l.routingKey,
      description: `Exchange ${l.exchange} (${l.exchangeType}), routing key ${l.routingKey}, bound to queue ${l.queue}. Publishes are persistent, mandatory and confirmed.`,
      messages: { [message]: ref(`#/components/messages/${message}`) },
      bindings: {
        amqp: {
          is: "routingKey",
          exchange: {
            name: l.exchange,
            type: l.exchangeType,
            durable: true,
            autoDelete: false,
            vhost: "/",
          },
          bindingVersion: "0.3.0",
        },
      },
    };
    channels[q] = {
      address: l.queue,
      description: `Quorum queue. A message that fails 3 deliveries (x-delivery-limit 3) is dead-lettered through the default exchange to ${l.deadLetterQueue}. Consumers use prefetch 1 and ack after the effect is committed.`,
      messages: { [message]: ref(`#/components/messages/${message}`) },
      bindings: {
        amqp: {
          is: "queue",
          queue: { name: l.queue, durable: true, exclusive: false, autoDelete: false, vhost: "/" },
          bindingVersion: "0.3.0",
        },
      },
    };
    channels[dl] = {
      address: l.deadLetterQueue,
      description: `Dead letters of ${l.queue}, kept for a person (npm run dlq).`,
      messages: { [message]: ref(`#/components/messages/${message}`) },
      bindings: {
        amqp: {
          is: "queue",
          queue: {
            name: l.deadLetterQueue,
            durable: true,
            exclusive: false,
            autoDelete: false,
            vhost: "/",
          },
          bindingVersion: "0.3.0",
        },
      },
    };
    const who =
      message === "SolicitacaoPagamento"
        ? ["the orders service", "the payments service"]
        : ["the payments service", "the orders service"];
    operations[`publicar${message}`] = {
      action: "send",
      summary: `${who[0]} publishes ${message} (confirmed, mandatory)`,
      channel: ref(`#/channels/${ex}`),
      messages: [ref(`#/channels/${ex}/messages/${message}`)],
      bindings: { amqp: { deliveryMode: 2, mandatory: true, bindingVersion: "0.3.0" } },
    };
    operations[`consumir${message}`] = {
      action: "receive",
      summary: `${who[1]} consumes ${message} from ${l.queue}`,
      channel: ref(`#/channels/${q}`),
      messages: [ref(`#/channels/${q}/messages/${message}`)],
      bindings: { amqp: { ack: true, bindingVersion: "0.3.0" } },
    };
    operations[`morto${message}`] = {
      action: "receive",
      summary: `A person inspects and redrives dead ${message} messages`,
      channel: ref(`#/channels/${dl}`),
      messages: [ref(`#/channels/${dl}/messages/${message}`)],
    };
  }
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Event-driven shop, broker edition (RabbitMQ)",
      version: "1.0.0",
      description:
        "An orders service and a payments service, each with its own SQLite database, joined by two exchanges and their queues, with publisher confirms, mandatory routing, idempotency by solicitacaoId, bounded retries and .erros dead-letter queues.",
    },
    servers: {
      local: { host: "127.0.0.1:5672", protocol: "amqp", description: "RabbitMQ" },
    },
    channels,
    operations,
    components: { messages },
  };
}
