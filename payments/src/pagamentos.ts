import {
  chaveDoPedido,
  fromCents,
  type NomesKafka,
  type PedidoCriado,
  type Processado,
  ResultadoPagamento,
  toCents,
} from "@shop/contracts";
import type { Publicador, RecordMeta } from "@shop/kafka";
import { contextoAtual, type Logger, saidaDoProcesso } from "@shop/service";
import { type Decisao, decidir } from "./domain/decisao.ts";

export interface PagamentosDeps {
  instancia: string;
  tempoDecisaoMs: number;
  nomes: NomesKafka;
  publicador: Publicador | null;
  log: Logger;
  /** Prints the one line per decision a person reads. */
  print?: (line: string) => void;
}

const GUARDADOS = 1000;

/** The decision line on stdout, through the process's shared per-turn writer. */
function imprimirNaSaida(): (line: string) => void {
  const stdout = saidaDoProcesso(1);
  return (line) => stdout.write(`${line}\n`);
}

export function pagamentosService(deps: PagamentosDeps) {
  const processados: Processado[] = [];
  const print = deps.print ?? imprimirNaSaida();
  // With no wait at all (benchmarks), no timer either: a 0 ms timer still costs about 1 ms.
  const esperar = () =>
    deps.tempoDecisaoMs > 0
      ? new Promise((r) => setTimeout(r, deps.tempoDecisaoMs))
      : Promise.resolve();

  function lembrar(p: Processado) {
    processados.unshift(p);
    if (processados.length > GUARDADOS) processados.pop();
  }

  async function decidirDepoisDaEspera(valor: number): Promise<Decisao> {
    await esperar(); // the simulated work; a timer, so HTTP keeps answering meanwhile
    return decidir(toCents(valor));
  }

  return {
    /**
     * decidirPagamentoOnPedidoCriado: wait, decide, then publish the result with the same
     * key and print the line. The wait and the decision are in record order; the publish
     * is handed back (pipelined), so that the next record's wait starts at once, and its
     * offset is resolved only after the acknowledgement.
     */
    async onPedidoCriado(
      evento: PedidoCriado,
      meta: RecordMeta,
    ): Promise<{ depois: Promise<void> }> {
      const decisao = await decidirDepoisDaEspera(evento.valor);
      const processadoEm = new Date().toISOString();
      const resultado = ResultadoPagamento.encode({
        versao: 1,
        pedidoId: evento.pedidoId,
        status: decisao.status,
        motivo: decisao.motivo,
        instancia: deps.instancia,
        processadoEm,
      });
      if (!deps.publicador) throw new Error("no Kafka publisher in this configuration");
      // Results decided in the same turn go out in one produce request (publicarJunto).
      const publicado = deps.publicador.publicarJunto(
        deps.nomes.topicos.pagamentosResultados,
        chaveDoPedido(evento.pedidoId),
        resultado,
      );
      return {
        depois: publicado.then(() => {
          lembrar({
            pedidoId: evento.pedidoId,
            valor: evento.valor,
            ...decisao,
            instancia: deps.instancia,
            processadoEm,
            origem: "kafka",
            particao: meta.partition,
            offset: meta.offset,
          });
          print(
            `[${deps.instancia}] partition=${meta.partition} offset=${meta.offset} pedido=${evento.pedidoId} ` +
              `valor=${fromCents(toCents(evento.valor)).toFixed(2)} decision=${decisao.status}` +
              (decisao.motivo ? ` motivo="${decisao.motivo}"` : "") +
              ` instance=${deps.instancia}` +
              // the trace of the order's request, to follow it across services
              ` trace=${contextoAtual()?.traceId ?? "-"}`,
          );
        }),
      };
    },

    /** The synchronous configuration's POST /pagamentos. */
    async pagarSincrono(pedidoId: number, valor: number) {
      const decisao = await decidirDepoisDaEspera(valor);
      lembrar({
        pedidoId,
        valor,
        ...decisao,
        instancia: deps.instancia,
        processadoEm: new Date().toISOString(),
        origem: "http",
      });
      print(
        `[${deps.instancia}] http pedido=${pedidoId} valor=${valor.toFixed(2)} decision=${decisao.status} instance=${deps.instancia}`,
      );
      return { ...decisao, instancia: deps.instancia };
    },

    processados: () => [...processados],
  };
}

export type PagamentosService = ReturnType<typeof pagamentosService>;
