import { createHash } from "node:crypto";
import {
  chaveDoPedido,
  DecisaoSincronaSchema,
  fromCents,
  type Historico,
  type Modo,
  type NomesKafka,
  type NovoPedido,
  PedidoCriado,
  type ResultadoPagamento,
} from "@shop/contracts";
import type { Publicador, RecordMeta } from "@shop/kafka";
import { AppError, agrupar, contextoAtual, type Logger, traceparentAtual } from "@shop/service";
import { novoPedido, type Pedido } from "./domain/pedido.ts";
import { EnvioRecusado, type Relay } from "./outbox.ts";
import type { Idempotencia, PedidosStore, ResultadoParaAplicar } from "./store.ts";

/** Keys of Idempotency-Key are kept this long at least (the IETF draft's and Stripe's 24 h). */
export const GUARDA_DAS_CHAVES_MS = 48 * 3600_000;

/** The answer a POST /pedidos gave, or gives again for a repeated Idempotency-Key. */
export interface RespostaGuardada {
  status: number;
  body: unknown;
  repetida: boolean;
}

export interface PedidosDeps {
  store: PedidosStore;
  log: Logger;
  modo: Modo;
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
  const inserirComEvento = agrupar(
    (novos: { pedido: Omit<Pedido, "id">; traceparent: string; idempotencia?: Idempotencia }[]) =>
      store.inserirComEventos(novos, evento),
  );

  /** Idempotency-Keys whose first request is being answered now, in this process. */
  const emCurso = new Set<string>();
  let esquecidasEm = 0;

  /** With the outbox: the order and its event in one transaction; wait for the relay's acknowledgement. */
  async function criarComOutbox(
    dados: NovoPedido,
    relay: Relay,
    idempotencia?: Idempotencia,
  ): Promise<Pedido> {
    // The request's trace goes with its event (the batch is written outside its context).
    const { pedido, outboxId } = await inserirComEvento({
      pedido: novoPedido(dados, agora()),
      traceparent: traceparentAtual(),
      ...(idempotencia ? { idempotencia } : {}),
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

  /**
   * The earlier, synchronous configuration: call payments by HTTP and wait. As the spec
   * says, it has no error handling: no retry and no recovery. A failure is a 500 and the
   * order stays AGUARDANDO_PAGAMENTO for good.
   */
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

  async function criar(dados: NovoPedido, idempotencia?: Idempotencia): Promise<Pedido> {
    if (deps.modo === "eventos" && deps.relay)
      return criarComOutbox(dados, deps.relay, idempotencia);
    const pedido = store.inserir(novoPedido(dados, agora()), idempotencia);
    if (deps.modo === "eventos") await publicarCriacao(pedido);
    else await pagarSincrono(pedido);
    return store.buscar(pedido.id) as Pedido;
  }

  /** Keys older than GUARDA_DAS_CHAVES_MS are forgotten, at most once an hour. */
  function esquecerChavesAntigas() {
    const t = agora().getTime();
    if (t - esquecidasEm < 3600_000) return;
    esquecidasEm = t;
    store.esquecerChaves(new Date(t - GUARDA_DAS_CHAVES_MS).toISOString());
  }

  return {
    criar: (dados: NovoPedido) => criar(dados),

    /**
     * POST /pedidos with an Idempotency-Key (the IETF httpapi draft's semantics, as Stripe
     * uses them). The first request with a key creates the order, the key in the same
     * transaction, and keeps its answer, a 201 or the 500 of an event not confirmed in
     * time. The same key with the same body gets that answer again and creates nothing;
     * with another body, 422; while the first is still being answered, 409. `responder`
     * gives an order's wire form.
     */
    async criarUmaVez(
      dados: NovoPedido,
      chave: string,
      responder: (p: Pedido) => unknown,
    ): Promise<RespostaGuardada> {
      esquecerChavesAntigas();
      const impressao = createHash("sha256").update(JSON.stringify(dados)).digest("hex");
      const existente = store.idempotencia(chave);
      if (existente && existente.impressao !== impressao) {
        throw new AppError(
          "chave-reutilizada",
          "this Idempotency-Key was already used with a different body; use a new key for a new order",
          422,
        );
      }
      if (emCurso.has(chave)) {
        throw new AppError(
          "chave-em-curso",
          "a request with this Idempotency-Key is still being answered; repeat it in a moment",
          409,
        );
      }
      if (existente) {
        if (existente.status !== null)
          return { status: existente.status, body: existente.resposta, repetida: true };
        // Its first answer died with an earlier process: the order it created, as it is now.
        return {
          status: 201,
          body: responder(store.buscar(existente.pedidoId) as Pedido),
          repetida: true,
        };
      }
      emCurso.add(chave);
      try {
        const pedido = await criar(dados, { chave, impressao });
        const body = responder(pedido);
        store.guardarResposta(chave, 201, body);
        return { status: 201, body, repetida: false };
      } catch (error) {
        // The order was saved but its event not confirmed: a repeat gets this same answer.
        if (error instanceof AppError && error.status === 500)
          store.guardarResposta(chave, 500, { erro: error.message });
        throw error;
      } finally {
        emCurso.delete(chave);
      }
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
