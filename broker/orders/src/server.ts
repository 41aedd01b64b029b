import { clienteDaLoja, consumir } from "@shop/amqp";
import { FILAS, PagamentoProcessado } from "@shop/contracts";
import { createLogger, type EventosDeConsumo, type Logger, listen } from "@shop/service";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { pedidosService } from "./pedidos.ts";
import { openStore } from "./store.ts";

export interface OrdersService {
  port: number;
  url: string;
  /** The queue consumer's events (received, handled, retried, dead-lettered, acked). */
  eventos: EventosDeConsumo;
  stop(): Promise<void>;
}

export async function startOrders(
  config: Config,
  log: Logger = createLogger("broker-orders"),
): Promise<OrdersService> {
  const store = openStore(config.dbPath);
  const amqp = clienteDaLoja(config.broker, log);
  const pedidos = pedidosService({ store, amqp, confirmacaoMs: config.confirmacaoMs, log });
  const consumidor = await consumir({
    client: amqp,
    queue: FILAS.resultados,
    contract: PagamentoProcessado,
    handle: pedidos.aplicarResultado,
    log,
    consumidores: config.consumidores,
    pausaAntesDoAckMs: config.pausaAntesDoAckMs,
  });

  const http = await listen(createApp({ pedidos, log }), config.port, config.host);
  const { url } = http;
  log.info(`orders service listening on ${url} (RabbitMQ vhost ${config.broker.vhost})`);
  return {
    port: http.port,
    url,
    eventos: consumidor.eventos,
    async stop() {
      await http.close();
      // The messages in hand are finished and acked before the connection closes.
      await consumidor.stop();
      await amqp.close();
      store.close();
    },
  };
}
