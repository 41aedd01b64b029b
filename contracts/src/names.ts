/** Every topic, group, exchange, queue and routing-key name, in one place. */

export const TOPICOS = {
  pedidosCriados: "pedidos-criados",
  pagamentosResultados: "pagamentos-resultados",
} as const;

/** Where a record that fails its contract is copied, with the reason in headers. */
export const TOPICOS_DLQ = {
  pedidosCriados: topicoDlq(TOPICOS.pedidosCriados),
  pagamentosResultados: topicoDlq(TOPICOS.pagamentosResultados),
} as const;

export function topicoDlq(topico: string): string {
  return `${topico}.dlq`;
}

export const GRUPOS = {
  pagamentos: "pagamentos",
  pedidosApi: "pedidos-api",
  analytics: "analytics",
} as const;

/**
 * The event-log names with an optional prefix. Production uses none; a test or a demo
 * gives each run its own prefix so that it owns its topics and groups.
 */
export function nomesKafka(prefixo = "") {
  const topicos = {
    pedidosCriados: `${prefixo}${TOPICOS.pedidosCriados}`,
    pagamentosResultados: `${prefixo}${TOPICOS.pagamentosResultados}`,
  };
  return {
    topicos,
    dlq: {
      pedidosCriados: topicoDlq(topicos.pedidosCriados),
      pagamentosResultados: topicoDlq(topicos.pagamentosResultados),
    },
    /** The dead-letter CLI's record of what it redrove: one record per letter, keyed by its id. */
    reenviosDlq: `${prefixo}dlq-reenvios`,
    grupos: {
      pagamentos: `${prefixo}${GRUPOS.pagamentos}`,
      pedidosApi: `${prefixo}${GRUPOS.pedidosApi}`,
      analytics: `${prefixo}${GRUPOS.analytics}`,
    },
  };
}
export type NomesKafka = ReturnType<typeof nomesKafka>;

/** Every topic of the event-log edition with its partitions: 3 each, 1 for a dead-letter topic. */
export function topicosDoPedido(nomes: NomesKafka): { topic: string; numPartitions: number }[] {
  return [
    { topic: nomes.topicos.pedidosCriados, numPartitions: PARTICOES_POR_TOPICO },
    { topic: nomes.topicos.pagamentosResultados, numPartitions: PARTICOES_POR_TOPICO },
    { topic: nomes.dlq.pedidosCriados, numPartitions: 1 },
    { topic: nomes.dlq.pagamentosResultados, numPartitions: 1 },
  ];
}

export const PARTICOES_POR_TOPICO = 3;
export const FATOR_DE_REPLICACAO = 1;

export const EXCHANGES = {
  comandos: "pagamentos.comandos",
  eventos: "pagamentos.eventos",
} as const;

export const ROUTING_KEYS = {
  solicitar: "pagamento.solicitar",
  resultado: "pagamento.resultado",
} as const;

export const FILAS = {
  solicitacoes: "pagamentos.solicitacoes",
  resultados: "pedidos.resultados",
} as const;

export const FILAS_ERROS = {
  solicitacoes: `${FILAS.solicitacoes}.erros`,
  resultados: `${FILAS.resultados}.erros`,
} as const;

export interface Ligacao {
  exchange: string;
  /** pagamentos.eventos is a topic exchange so that later readers can bind by pattern. */
  exchangeType: "direct" | "topic";
  routingKey: string;
  queue: string;
  /** Dead letters go through the default exchange ("") with this routing key. */
  deadLetterQueue: string;
}

/** The broker edition's topology, declared by both services at start-up when absent. */
export const TOPOLOGIA: readonly Ligacao[] = [
  {
    exchange: EXCHANGES.comandos,
    exchangeType: "direct",
    routingKey: ROUTING_KEYS.solicitar,
    queue: FILAS.solicitacoes,
    deadLetterQueue: FILAS_ERROS.solicitacoes,
  },
  {
    exchange: EXCHANGES.eventos,
    exchangeType: "topic",
    routingKey: ROUTING_KEYS.resultado,
    queue: FILAS.resultados,
    deadLetterQueue: FILAS_ERROS.resultados,
  },
];

/**
 * What the broker edition's services may touch in their vhost, as RabbitMQ permission
 * patterns: exactly the topology's exchanges and queues (configure to declare them, write
 * to publish and bind, read to consume and bind), and write on the default exchange,
 * which RabbitMQ asks of whoever declares a queue whose dead letters go through it. Their
 * user has no tag: no panel, no management API, nothing in other vhosts.
 */
export function permissoesDaLoja(ligacoes: readonly Ligacao[] = TOPOLOGIA) {
  const nomes = [...new Set(ligacoes.flatMap((l) => [l.exchange, l.queue, l.deadLetterQueue]))];
  const padrao = (ns: string[]) => `^(${ns.map((n) => n.replaceAll(".", "\\.")).join("|")})$`;
  return {
    configure: padrao(nomes),
    write: padrao([...nomes, "amq.default"]),
    read: padrao(nomes),
  };
}
