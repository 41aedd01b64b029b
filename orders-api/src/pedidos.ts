import {
  chaveDoPedido,
  DecisaoSincronaSchema,
  fromCents,
  type Historico,
  type NomesKafka,
  type NovoPedido,
  PedidoCriado,
  type ResultadoPagamento,
} from "@shop/contracts";
import type { Publicador, RecordMeta } from "@shop/kafka";
import { AppError, agrupar, contextoAtual, type Logger, traceparentAtual } from "@shop/service";
import { novoPedido, type Pedido } from "./domain/pedido.ts";
import { EnvioRecusado, type Relay } from "./outbox.ts";
import type { PedidosStore, ResultadoParaAplicar } from "./store.ts";

export interface PedidosDeps {
  store: PedidosStore;
  log: Logger;
  modo: "eventos" | "sincrono";
  nomes: NomesKafka;
  publicador: Publicador | null;
  /** The outbox relay; null when OUTBOX=desligado (the spec's orphan order) or synchronous. */
  relay: Relay | null;
  confirmacaoMs: number;
  pagamentosUrl: string;
  agora?: () => Date;
}

/** The use cases of the orders API, each a short story. */
export function pedidosService(deps: PedidosDeps) {
  const { store, log } = deps;
  const agora = deps.agora ?? (() => new Date());

  const evento = (pedido: Pedido) => ({
    topico: deps.nomes.topicos.pedidosCriados,
    chave: chaveDoPedido(pedido.id),
    valor: PedidoCriado.encode({
      versao: 1,
      pedidoId: pedido.id,
      cliente: pedido.cliente,
      item: pedido.item,
      quantidade: pedido.quantidade,
      valor: fromCents(pedido.valorCentavos),
      criadoEm: pedido.criadoEm,
    }),
  });

  /** The 500 of an order saved whose event Kafka did not acknowledge in time. */
  const naoConfirmado = (pedido: Pedido, depois: string, cause: unknown) =>
    new AppError(
      "evento-nao-confirmado",
      `order ${pedido.id} was saved, but Kafka did not acknowledge its PedidoCriado event in time; ` +
        `it stays AGUARDANDO_PAGAMENTO and ${depois}`,
      500,
      undefined,
      { cause },
    );

  /** Group commit of the results consumer: the results of a turn in one transaction. */
  const aplicarJunto = agrupar((itens: ResultadoParaAplicar[]) => store.aplicarResultados(itens));

  /** Group commit: the orders of a turn and their events in one transaction. */
  const inserirComEvento = agrupar((novos: { pedido: Omit<Pedido, "id">; traceparent: string }[]) =>
    store.inserirComEventos(novos, evento),
  );

  /** With the outbox: the order and its event in one transaction; wait for the relay's acknowledgement. */
  async function criarComOutbox(dados: NovoPedido, relay: Relay): Promise<Pedido> {
    // The request's trace goes with its event (the batch is written outside its context).
    const { pedido, outboxId } = await inserirComEvento({
      pedido: novoPedido(dados, agora()),
      traceparent: traceparentAtual(),
    });
    relay.notificar();
    try {
      await relay.aguardarEnvio(outboxId, deps.confirmacaoMs);
      return pedido;
    } catch (error) {
      throw naoConfirmado(
        pedido,
        error instanceof EnvioRecusado
          ? `Kafka refused its event for good (${error.message}); the event is set aside (GET /saude) and later orders go on`
          : "the outbox will publish the event as soon as Kafka is back",
        error,
      );
    }
  }

  /** Without the outbox (the spec's configuration): save, then publish and wait. */
  async function publicarCriacao(pedido: Pedido): Promise<void> {
    const e = evento(pedido);
    try {
      if (!deps.publicador) throw new Error("no Kafka publisher in this configuration");
      const ack = await deps.publicador.publicar(e.topico, e.chave, e.valor);
      store.registrarEtapa(pedido.id, "evento-confirmado", {
        topico: e.topico,
        particao: ack.partition,
        offset: ack.offset,
      });
      log.info("PedidoCriado acknowledged", {
        pedido: pedido.id,
        partition: ack.partition,
        offset: ack.offset,
      });
    } catch (error) {
      throw naoConfirmado(pedido, "nothing will charge it", error);
    }
  }

  /** The earlier, synchronous configuration: call payments by HTTP and wait. No error handling. */
  async function pagarSincrono(pedido: Pedido): Promise<void> {
    const response = await fetch(`${deps.pagamentosUrl}/pagamentos`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ pedidoId: pedido.id, valor: fromCents(pedido.valorCentavos) }),
      signal: AbortSignal.timeout(30_000),
    }).catch((error: unknown) => {
      throw new AppError(
        "pagamentos-indisponivel",
        `order ${pedido.id} was saved, but payments did not answer`,
        500,
        undefined,
        {
          cause: error,
        },
      );
    });
    if (!response.ok) {
      throw new AppError(
        "pagamentos-falhou",
        `order ${pedido.id} was saved, but payments answered ${response.status}`,
        500,
      );
    }
    const decisao = DecisaoSincronaSchema.parse(await response.json());
    store.aplicarResultado(pedido.id, decisao, { via: "http (synchronous configuration)" });
  }

  return {
    async criar(dados: NovoPedido): Promise<Pedido> {
      if (deps.modo === "eventos" && deps.relay) return criarComOutbox(dados, deps.relay);
      const pedido = store.inserir(novoPedido(dados, agora()));
      if (deps.modo === "eventos") await publicarCriacao(pedido);
      else await pagarSincrono(pedido);
      return store.buscar(pedido.id) as Pedido;
    },

    listar: (limite?: number) => store.listar(limite),

    /** The timeline: created, then each step stored since; null for an unknown order. */
    historico(id: number): Historico | null {
      const pedido = store.buscar(id);
      if (!pedido) return null;
      return {
        pedidoId: id,
        etapas: [
          {
            etapa: "criado",
            em: pedido.criadoEm,
            detalhes: { item: pedido.item, valor: fromCents(pedido.valorCentavos) },
          },
          ...store.etapas(id),
        ],
      };
    },
    buscar: (id: number) => store.buscar(id),

    /**
     * aplicarResultadoOnResultadoPagamento: idempotent, only while AGUARDANDO_PAGAMENTO.
     * Pipelined: the results a consumer hands over in one turn share a transaction (group
     * commit), and each record's offset is resolved only once that transaction committed.
     */
    async aplicarResultado(
      resultado: ResultadoPagamento,
      meta: RecordMeta,
    ): Promise<{ depois: Promise<void> }> {
      const where = { pedido: resultado.pedidoId, partition: meta.partition, offset: meta.offset };
      const aplicado = aplicarJunto({
        pedidoId: resultado.pedidoId,
        resultado,
        origem: {
          topico: meta.topic,
          particao: meta.partition,
          offset: meta.offset,
          trace: contextoAtual()?.traceId ?? null,
        },
      });
      return {
        depois: aplicado.then((efeito) => {
          if (efeito === null) log.warn("result for an unknown order ignored", where);
          else if (efeito.aplicar)
            log.info(`order ${efeito.status}`, { ...where, por: efeito.processadoPor });
          else log.info(efeito.porque, where);
        }),
      };
    },
  };
}

export type PedidosService = ReturnType<typeof pedidosService>;
