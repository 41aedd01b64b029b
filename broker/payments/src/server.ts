import { clienteDaLoja, consumir } from "@shop/amqp";
import { FILAS, SolicitacaoPagamento } from "@shop/contracts";
import { createLogger, type EventosDeConsumo, type Logger, listen } from "@shop/service";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { pagamentosService } from "./pagamentos.ts";
import { openStore } from "./store.ts";

export interface PaymentsService {
  port: number;
  url: string;
  /** The queue consumer's events (received, handled, retried, dead-lettered, acked). */
  eventos: EventosDeConsumo;
  stop(): Promise<void>;
}

export async function startPayments(
  config: Config,
  log: Logger = createLogger("broker-payments"),
): Promise<PaymentsService> {
  const store = openStore(config.dbPath);
  const amqp = clienteDaLoja(config.broker, log);
  const pagamentos = pagamentosService({
    store,
    amqp,
    confirmacaoMs: config.confirmacaoMs,
    log,
  });
  const consumidor = await consumir({
    client: amqp,
    queue: FILAS.solicitacoes,
    contract: SolicitacaoPagamento,
    handle: pagamentos.onSolicitacao,
    log,
    consumidores: config.consumidores,
    pausaAntesDoAckMs: config.pausaAntesDoAckMs,
  });

  const app = createApp({ pagamentos, conectado: () => amqp.conectado, log });
  const http = await listen(app, config.port, config.host);
  const { url } = http;
  log.info(`payments service listening on ${url} (RabbitMQ vhost ${config.broker.vhost})`);
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
