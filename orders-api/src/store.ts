import { limiteDeDinheiro, openDatabase } from "@shop/service";
import { type Efeito, efeitoDoResultado, type Pedido, type Resultado } from "./domain/pedido.ts";

interface Linha {
  id: number;
  cliente: string;
  item: string;
  quantidade: number;
  valor_centavos: number;
  status: Pedido["status"];
  motivo: string | null;
  processado_por: string | null;
  criado_em: string;
}

const MIGRATIONS = [
  `CREATE TABLE pedidos (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     cliente TEXT NOT NULL,
     item TEXT NOT NULL,
     quantidade INTEGER NOT NULL CHECK (quantidade BETWEEN 1 AND 50),
     valor_centavos INTEGER NOT NULL CHECK (valor_centavos > 0),
     status TEXT NOT NULL CHECK (status IN ('AGUARDANDO_PAGAMENTO', 'PAGO', 'RECUSADO')),
     motivo TEXT,
     processado_por TEXT,
     criado_em TEXT NOT NULL
   )`,
  // The outbox: each order's PedidoCriado, written in the order's own transaction and
  // published later by the relay (src/outbox.ts).
  `CREATE TABLE outbox (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     pedido_id INTEGER NOT NULL REFERENCES pedidos(id),
     topico TEXT NOT NULL,
     chave TEXT NOT NULL,
     valor TEXT NOT NULL,
     criado_em TEXT NOT NULL,
     enviado_em TEXT
   );
   CREATE INDEX outbox_pendentes ON outbox (id) WHERE enviado_em IS NULL;`,
  // When the result was applied: created -> decided latency, for benchmarks and timelines.
  "ALTER TABLE pedidos ADD COLUMN decidido_em TEXT",
  // The W3C traceparent of the request that created the order, sent with its event.
  "ALTER TABLE outbox ADD COLUMN traceparent TEXT",
  // The order's timeline (GET /pedidos/{id}/historico): one row per step after creation.
  `CREATE TABLE historico (
     pedido_id INTEGER NOT NULL,
     etapa TEXT NOT NULL,
     em TEXT NOT NULL,
     detalhes TEXT NOT NULL
   );
   CREATE INDEX historico_pedido ON historico (pedido_id);`,
  // A row Kafka refuses for good (too large, say) is set aside with why, and the rows after
  // it go on: the outbox never stops behind one row.
  `ALTER TABLE outbox ADD COLUMN posta_de_lado_em TEXT;
   ALTER TABLE outbox ADD COLUMN motivo TEXT;`,
  // Idempotency-Key of POST /pedidos: the key, what the body was, the order it created (in
  // the order's own transaction) and the answer given, replayed for a repeat.
  `CREATE TABLE idempotencia (
     chave TEXT PRIMARY KEY,
     impressao TEXT NOT NULL,
     pedido_id INTEGER NOT NULL REFERENCES pedidos(id),
     status INTEGER,
     resposta TEXT,
     criada_em TEXT NOT NULL
   );
   CREATE INDEX idempotencia_criada ON idempotencia (criada_em);`,
  // Every stored total is one PedidoCriado can carry.
  limiteDeDinheiro("pedidos", "pedidos_valor_no_limite", "NEW.valor_centavos"),
];

export type Detalhes = Record<string, string | number | boolean | null>;

/** A result to apply, where it came from (topic, partition, offset, trace). */
export interface ResultadoParaAplicar {
  pedidoId: number;
  resultado: Resultado & { processadoEm?: string };
  origem: Detalhes;
}

export interface LinhaOutbox {
  id: number;
  traceparent: string | null;
  pedido_id: number;
  topico: string;
  chave: string;
  valor: string;
  criado_em: string;
}

/** An Idempotency-Key and the fingerprint of the body it came with. */
export interface Idempotencia {
  chave: string;
  impressao: string;
}

export interface RegistroDeIdempotencia extends Idempotencia {
  pedidoId: number;
  /** The answer given (null until it was: the request is in progress, or its process died). */
  status: number | null;
  resposta: unknown;
}

export interface EventoParaPublicar {
  topico: string;
  chave: string;
  valor: string;
}

const toPedido = (l: Linha): Pedido => ({
  id: l.id,
  cliente: l.cliente,
  item: l.item,
  quantidade: l.quantidade,
  valorCentavos: l.valor_centavos,
  status: l.status,
  motivo: l.motivo,
  processadoPor: l.processado_por,
  criadoEm: l.criado_em,
});

export type PedidosStore = ReturnType<typeof openStore>;

/** The orders database: WAL, prepared statements, migrations by user_version. */
export function openStore(path: string) {
  const db = openDatabase(path, MIGRATIONS);

  const insert = db.prepare<[Omit<Linha, "id">], never>(
    `INSERT INTO pedidos (cliente, item, quantidade, valor_centavos, status, motivo, processado_por, criado_em)
     VALUES (@cliente, @item, @quantidade, @valor_centavos, @status, @motivo, @processado_por, @criado_em)`,
  );
  const byId = db.prepare<[number], Linha>("SELECT * FROM pedidos WHERE id = ?");
  const newestFirst = db.prepare<[number], Linha>("SELECT * FROM pedidos ORDER BY id DESC LIMIT ?");
  const update = db.prepare<[string, string | null, string, number], never>(
    `UPDATE pedidos SET status = ?, motivo = ?, processado_por = ?, decidido_em = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
     WHERE id = ? AND status = 'AGUARDANDO_PAGAMENTO'`,
  );

  const etapaInsert = db.prepare<[number, string, string, string], never>(
    "INSERT INTO historico (pedido_id, etapa, em, detalhes) VALUES (?, ?, ?, ?)",
  );
  const etapas = db.prepare<[number], { etapa: string; em: string; detalhes: string }>(
    "SELECT etapa, em, detalhes FROM historico WHERE pedido_id = ? ORDER BY rowid",
  );
  const registrarEtapa = (pedidoId: number, etapa: string, detalhes: Detalhes, em?: string) =>
    etapaInsert.run(pedidoId, etapa, em ?? new Date().toISOString(), JSON.stringify(detalhes));

  /** The decision as payments took it, then what this API did with it (in a transaction). */
  const aplicarUm = ({ pedidoId, resultado, origem }: ResultadoParaAplicar): Efeito | null => {
    const atual = byId.get(pedidoId);
    if (!atual) return null;
    const efeito = efeitoDoResultado(atual.status, resultado);
    if (efeito.aplicar) update.run(efeito.status, efeito.motivo, efeito.processadoPor, pedidoId);
    registrarEtapa(
      pedidoId,
      "decidido",
      {
        instancia: resultado.instancia,
        status: resultado.status,
        motivo: resultado.motivo,
        ...origem,
      },
      resultado.processadoEm,
    );
    registrarEtapa(
      pedidoId,
      efeito.aplicar ? "resultado-aplicado" : "resultado-repetido",
      efeito.aplicar ? { status: efeito.status } : { porque: efeito.porque },
    );
    return efeito;
  };
  /** Results in one transaction, in order: a repeat sees the first one's effect. */
  const aplicarVarios = db.transaction((itens: ResultadoParaAplicar[]) => itens.map(aplicarUm));

  const outboxInsert = db.prepare<[number, string, string, string, string, string], never>(
    "INSERT INTO outbox (pedido_id, topico, chave, valor, criado_em, traceparent) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const outboxPendentes = db.prepare<[number], LinhaOutbox>(
    "SELECT id, pedido_id, topico, chave, valor, criado_em, traceparent FROM outbox WHERE enviado_em IS NULL AND posta_de_lado_em IS NULL ORDER BY id LIMIT ?",
  );
  const outboxPorDeLado = db.prepare<[string, string, number], never>(
    "UPDATE outbox SET posta_de_lado_em = ?, motivo = ? WHERE id = ? AND enviado_em IS NULL",
  );
  const outboxPostasDeLado = db.prepare<
    [],
    { id: number; pedidoId: number; em: string; motivo: string }
  >(
    "SELECT id, pedido_id AS pedidoId, posta_de_lado_em AS em, motivo FROM outbox WHERE posta_de_lado_em IS NOT NULL AND enviado_em IS NULL ORDER BY id",
  );
  const outboxMarcar = db.prepare<[string, number], never>(
    "UPDATE outbox SET enviado_em = ? WHERE id = ?",
  );
  const outboxEstado = db.prepare<[], { pendentes: number; maisAntigo: string | null }>(
    "SELECT COUNT(*) AS pendentes, MIN(criado_em) AS maisAntigo FROM outbox WHERE enviado_em IS NULL AND posta_de_lado_em IS NULL",
  );

  const idemInsert = db.prepare<[string, string, number, string], never>(
    "INSERT INTO idempotencia (chave, impressao, pedido_id, criada_em) VALUES (?, ?, ?, ?)",
  );
  const idemGet = db.prepare<
    [string],
    {
      chave: string;
      impressao: string;
      pedido_id: number;
      status: number | null;
      resposta: string | null;
    }
  >("SELECT chave, impressao, pedido_id, status, resposta FROM idempotencia WHERE chave = ?");
  const idemResposta = db.prepare<[number, string, string], never>(
    "UPDATE idempotencia SET status = ?, resposta = ? WHERE chave = ?",
  );
  const idemEsquecer = db.prepare<[string], never>("DELETE FROM idempotencia WHERE criada_em < ?");
  const lembrar = (idem: Idempotencia | undefined, pedido: Pedido) => {
    if (idem) idemInsert.run(idem.chave, idem.impressao, pedido.id, pedido.criadoEm);
  };

  function inserir(pedido: Omit<Pedido, "id">): Pedido {
    const info = insert.run({
      cliente: pedido.cliente,
      item: pedido.item,
      quantidade: pedido.quantidade,
      valor_centavos: pedido.valorCentavos,
      status: pedido.status,
      motivo: pedido.motivo,
      processado_por: pedido.processadoPor,
      criado_em: pedido.criadoEm,
    });
    return { ...pedido, id: Number(info.lastInsertRowid) };
  }

  return {
    /**
     * Orders and their events in one transaction: each order with its event, or none of
     * them. Several requests' orders share a transaction (group commit: agrupar in libs/service).
     */
    inserirComEventos: db.transaction(
      (
        novos: {
          pedido: Omit<Pedido, "id">;
          traceparent: string;
          idempotencia?: Idempotencia;
        }[],
        evento: (p: Pedido) => EventoParaPublicar,
      ): { pedido: Pedido; outboxId: number }[] =>
        novos.map(({ pedido, traceparent, idempotencia }) => {
          const salvo = inserir(pedido);
          lembrar(idempotencia, salvo);
          const e = evento(salvo);
          const info = outboxInsert.run(
            salvo.id,
            e.topico,
            e.chave,
            e.valor,
            salvo.criadoEm,
            traceparent,
          );
          return { pedido: salvo, outboxId: Number(info.lastInsertRowid) };
        }),
    ),
    outboxPendentes(limite: number): LinhaOutbox[] {
      return outboxPendentes.all(limite);
    },
    /** Marks rows sent and puts "event acknowledged" (partition, offset) on each timeline. */
    marcarEnviados: db.transaction(
      (
        linhas: {
          id: number;
          pedidoId: number;
          topico: string;
          particao: number;
          offset: string;
        }[],
      ) => {
        const agora = new Date().toISOString();
        for (const l of linhas) {
          outboxMarcar.run(agora, l.id);
          registrarEtapa(
            l.pedidoId,
            "evento-confirmado",
            { topico: l.topico, particao: l.particao, offset: l.offset },
            agora,
          );
        }
      },
    ),
    /** A row Kafka refused for good: set aside with why, on the order's timeline too. */
    porDeLado: db.transaction((linha: { id: number; pedidoId: number }, motivo: string) => {
      const agora = new Date().toISOString();
      outboxPorDeLado.run(agora, motivo, linha.id);
      registrarEtapa(linha.pedidoId, "evento-posto-de-lado", { motivo }, agora);
    }),
    /** The rows set aside, oldest first. */
    postasDeLado(): { id: number; pedidoId: number; em: string; motivo: string }[] {
      return outboxPostasDeLado.all();
    },
    registrarEtapa(pedidoId: number, etapa: string, detalhes: Detalhes): void {
      registrarEtapa(pedidoId, etapa, detalhes);
    },
    /** The timeline after creation, oldest first. */
    etapas(pedidoId: number): { etapa: string; em: string; detalhes: Detalhes }[] {
      return etapas
        .all(pedidoId)
        .map((e) => ({ etapa: e.etapa, em: e.em, detalhes: JSON.parse(e.detalhes) as Detalhes }));
    },
    estadoOutbox(): { pendentes: number; maisAntigoEm: string | null } {
      const e = outboxEstado.get() as { pendentes: number; maisAntigo: string | null };
      return { pendentes: e.pendentes, maisAntigoEm: e.maisAntigo };
    },
    /** An order, and its Idempotency-Key when given, in one transaction. */
    inserir: db.transaction((pedido: Omit<Pedido, "id">, idempotencia?: Idempotencia): Pedido => {
      const salvo = inserir(pedido);
      lembrar(idempotencia, salvo);
      return salvo;
    }),
    idempotencia(chave: string): RegistroDeIdempotencia | null {
      const l = idemGet.get(chave);
      if (!l) return null;
      return {
        chave: l.chave,
        impressao: l.impressao,
        pedidoId: l.pedido_id,
        status: l.status,
        resposta: l.resposta === null ? null : JSON.parse(l.resposta),
      };
    },
    guardarResposta(chave: string, status: number, resposta: unknown): void {
      idemResposta.run(status, JSON.stringify(resposta), chave);
    },
    /** Forgets the keys created before `antesDe` (ISO 8601). */
    esquecerChaves(antesDe: string): number {
      return idemEsquecer.run(antesDe).changes;
    },
    buscar(id: number): Pedido | null {
      const linha = byId.get(id);
      return linha ? toPedido(linha) : null;
    },
    listar(limite = 1000): Pedido[] {
      return newestFirst.all(limite).map(toPedido);
    },
    /**
     * Applies the results in one transaction (a consumer's group commit); for each, its
     * effect, or null when the order does not exist.
     */
    aplicarResultados(itens: ResultadoParaAplicar[]): (Efeito | null)[] {
      return aplicarVarios.immediate(itens);
    },
    /** Applies a result in one transaction; null when the order does not exist. */
    aplicarResultado(
      pedidoId: number,
      resultado: Resultado & { processadoEm?: string },
      origem: Detalhes,
    ): Efeito | null {
      return aplicarVarios.immediate([{ pedidoId, resultado, origem }])[0] ?? null;
    },
    close() {
      db.close();
    },
  };
}
