/** Every topic, group, exchange, queue and routing-key name, in one place. */

export const TOPICS = {
  pedidosCriados: "pedidos-criados",
  pagamentosResultados: "pagamentos-resultados",
} as const;

/** Where a record that fails its contract is copied, with the reason in headers. */
export const DLQ_TOPICS = {
  pedidosCriados: dlqTopic(TOPICS.pedidosCriados),
  pagamentosResultados: dlqTopic(TOPICS.pagamentosResultados),
} as const;

export function dlqTopic(topic: string): string {
  return `${topic}.dlq`;
}

export const GROUPS = {
  pagamentos: "pagamentos",
  pedidosApi: "pedidos-api",
  analytics: "analytics",
} as const;

/**
 * The event-log names with an optional prefix. Production uses none; a test or a demo
 * gives each run its own prefix so that it owns its topics and groups.
 */
export function kafkaNames(prefix = "") {
  const topics = {
    pedidosCriados: `${prefix}${TOPICS.pedidosCriados}`,
    pagamentosResultados: `${prefix}${TOPICS.pagamentosResultados}`,
  };
  return {
    /** The prefix every name below starts with ("" in production). */
    prefix,
    topics: topics,
    dlq: {
      pedidosCriados: dlqTopic(topics.pedidosCriados),
      pagamentosResultados: dlqTopic(topics.pagamentosResultados),
    },
    /** The dead-letter CLI's record of what it redrove: one record per letter, keyed by its id. */
    dlqRedrives: `${prefix}dlq-reenvios`,
    groups: {
      pagamentos: `${prefix}${GROUPS.pagamentos}`,
      pedidosApi: `${prefix}${GROUPS.pedidosApi}`,
      analytics: `${prefix}${GROUPS.analytics}`,
    },
  };
}
export type KafkaNames = ReturnType<typeof kafkaNames>;

/** Every topic of the event-log edition with its partitions: 3 each, 1 for a dead-letter topic. */
export function pedidoTopics(names: KafkaNames): { topic: string; numPartitions: number }[] {
  return [
    { topic: names.topics.pedidosCriados, numPartitions: PARTITIONS_PER_TOPIC },
    { topic: names.topics.pagamentosResultados, numPartitions: PARTITIONS_PER_TOPIC },
    { topic: names.dlq.pedidosCriados, numPartitions: 1 },
    { topic: names.dlq.pagamentosResultados, numPartitions: 1 },
  ];
}

export const PARTITIONS_PER_TOPIC = 3;
/** Replicas of each partition on a single broker (the default). */
export const REPLICATION_FACTOR = 1;
/**
 * On a cluster of three or more brokers: three replicas, and a write (acks=all) needs two
 * of them, so one broker may die without losing an acknowledged record or stopping writes.
 */
export const CLUSTER_REPLICATION = { replicationFactor: 3, minInsyncReplicas: 2 } as const;

export const EXCHANGES = {
  commands: "pagamentos.comandos",
  events: "pagamentos.eventos",
} as const;

export const ROUTING_KEYS = {
  solicitar: "pagamento.solicitar",
  resultado: "pagamento.resultado",
} as const;

export const QUEUES = {
  solicitacoes: "pagamentos.solicitacoes",
  resultados: "pedidos.resultados",
} as const;

export const ERROR_QUEUES = {
  solicitacoes: `${QUEUES.solicitacoes}.erros`,
  resultados: `${QUEUES.resultados}.erros`,
} as const;

export interface Binding {
  exchange: string;
  /** pagamentos.eventos is a topic exchange so that later readers can bind by pattern. */
  exchangeType: "direct" | "topic";
  routingKey: string;
  queue: string;
  /** Dead letters go through the default exchange ("") with this routing key. */
  deadLetterQueue: string;
}

/** The broker edition's topology, declared by both services at start-up when absent. */
export const TOPOLOGY: readonly Binding[] = [
  {
    exchange: EXCHANGES.commands,
    exchangeType: "direct",
    routingKey: ROUTING_KEYS.solicitar,
    queue: QUEUES.solicitacoes,
    deadLetterQueue: ERROR_QUEUES.solicitacoes,
  },
  {
    exchange: EXCHANGES.events,
    exchangeType: "topic",
    routingKey: ROUTING_KEYS.resultado,
    queue: QUEUES.resultados,
    deadLetterQueue: ERROR_QUEUES.resultados,
  },
];

/**
 * What the broker edition's services may touch in their vhost, as RabbitMQ permission
 * patterns: exactly the topology's exchanges and queues (configure to declare them, write
 * to publish and bind, read to consume and bind), and write on the default exchange,
 * which RabbitMQ asks of whoever declares a queue whose dead letters go through it. Their
 * user has no tag: no panel, no management API, nothing in other vhosts.
 */
export function shopPermissions(bindings: readonly Binding[] = TOPOLOGY) {
  const names = [...new Set(bindings.flatMap((l) => [l.exchange, l.queue, l.deadLetterQueue]))];
  const defaults = (ns: string[]) => `^(${ns.map((n) => n.replaceAll(".", "\\.")).join("|")})$`;
  return {
    configure: defaults(names),
    write: defaults([...names, "amq.default"]),
    read: defaults(names),
  };
}
