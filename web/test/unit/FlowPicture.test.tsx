import type { Historico, HistoricoBroker, Plataforma, PlataformaBroker } from "@shop/contracts";
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { BrokerFlowPicture } from "../../src/components/BrokerFlowPicture.tsx";
import { HopDiagram, OrderLife } from "../../src/components/FlowPicture.tsx";
import {
  brokerFlow,
  brokerMarks,
  eventLogFlow,
  eventLogMarks,
  silentMembers,
} from "../../src/flow.ts";

afterEach(cleanup);

const PREFIX = "run-1.";
type Particao = Plataforma["topicos"][0]["particoes"][0];

const particao = (partition: number, endOffset: number, committed: number | null): Particao => ({
  partition,
  endOffset,
  leader: partition === 2 ? -1 : 1 + partition,
  replicas: [1, 2, 3],
  isr: partition === 1 ? [2] : [1, 2, 3],
  grupos: [
    { grupo: `${PREFIX}pagamentos`, committedOffset: committed, lag: endOffset - (committed ?? 0) },
    { grupo: `${PREFIX}auditoria`, committedOffset: null, lag: endOffset },
  ],
});

const membro = (clientId: string, particoes: number[]) => ({
  memberId: `${clientId}-m`,
  clientId,
  host: "/127.0.0.1",
  particoes: { [`${PREFIX}pedidos-criados`]: particoes },
});

/** Two payments instances holding 0+2 and 1; broker 3 down; one letter; 4 events waiting. */
const plataforma: Plataforma = {
  cluster: { brokers: [1, 2].map((nodeId) => ({ nodeId, host: "h", port: 9092 })), controller: 1 },
  topicos: [
    {
      topic: `${PREFIX}pedidos-criados`,
      particoes: [particao(0, 7, 7), particao(1, 5, 3), particao(2, 4, null)],
    },
    { topic: `${PREFIX}pagamentos-resultados`, particoes: [] },
  ],
  grupos: [
    {
      grupo: `${PREFIX}pagamentos`,
      estado: "Stable",
      membros: [membro("payments-caixa-2", [1]), membro("payments-caixa-1", [0, 2])],
    },
    { grupo: `${PREFIX}auditoria`, estado: "Stable", membros: [membro("analytics-1", [0, 1, 2])] },
  ],
  outbox: { pendentes: 4, maisAntigoEm: null, idadeMaisAntigoMs: 3000, postosDeLado: [] },
  mortas: [
    { topic: `${PREFIX}pedidos-criados.dlq`, origem: `${PREFIX}pedidos-criados`, cartas: 1 },
  ],
  lidoEm: "2026-11-28T10:00:00.000Z",
};

const etapa = (e: string, detalhes: Historico["etapas"][0]["detalhes"] = {}) => ({
  etapa: e,
  em: "2026-11-28T10:00:00.000Z",
  detalhes,
});

describe("Issue 56: the picture of the flow is read from the platform the page polls", () => {
  it("When two instances hold the partitions, then each partition is drawn to its holder, with its end offset and leader, and the prefix of the run is dropped", () => {
    const flow = eventLogFlow(plataforma);
    expect(flow.prefix).toBe(PREFIX);
    expect(flow.criados.members).toEqual(["caixa-1", "caixa-2"]);
    expect(
      flow.criados.partitions.map((p) => [p.partition, p.holder, p.endOffset, p.leader]),
    ).toEqual([
      [0, "caixa-1", 7, 1],
      [1, "caixa-2", 5, 2],
      [2, "caixa-1", 4, -1],
    ]);
    expect(flow.criados.partitions[1]?.underReplicated).toBe(true);
    expect(flow.outbox).toEqual({ pending: 4, oldestMs: 3000 });
    expect(flow.readers).toEqual([{ group: "auditoria", lag: 16, members: 1, state: "Stable" }]);
    expect(flow.deadLetters).toEqual([
      { topic: "pedidos-criados.dlq", source: "pedidos-criados", letters: 1 },
    ]);
    // Broker 3 holds replicas and is not among those answering: drawn down, leading nothing.
    expect(flow.brokers).toEqual([
      { nodeId: 1, up: true, leads: 1 },
      { nodeId: 2, up: true, leads: 1 },
      { nodeId: 3, up: false, leads: 0 },
    ]);
    render(<HopDiagram hop={flow.criados} mark={null} />);
    const arrows = [...document.querySelectorAll("[data-seta]")].map((e) =>
      e.getAttribute("data-seta"),
    );
    expect(arrows).toEqual(["0->caixa-1", "1->caixa-2", "2->caixa-1"]);
    expect(document.querySelector('[data-particao="2"]')?.textContent).toContain("sem líder");
  });

  it("When an order's event is acknowledged at offset 3 of partition 1, then it is marked there, and its third confirmation waits for the group's commit to pass it", () => {
    const flow = eventLogFlow(plataforma);
    const historico: Historico = {
      pedidoId: 9,
      etapas: [
        etapa("criado"),
        etapa("evento-confirmado", { topico: "pedidos-criados", particao: 1, offset: "3" }),
      ],
    };
    const marks = eventLogMarks(historico, flow);
    expect(marks.where).toBe("na partição 1, offset 3 de pedidos-criados, com caixa-2 decidindo");
    expect(marks.confirmations.map((c) => [c.name, c.done])).toEqual([
      ["201", true],
      ["acks=all", true],
      ["commit do offset", false],
    ]);
    // The group commits offset 4 (the next to read): the record is behind it, for good.
    const later = eventLogFlow({
      ...plataforma,
      topicos: [
        { topic: `${PREFIX}pedidos-criados`, particoes: [particao(0, 7, 7), particao(1, 5, 4)] },
      ],
    });
    expect(eventLogMarks(historico, later).confirmations[2]?.done).toBe(true);
    render(<HopDiagram hop={flow.criados} mark={marks} />);
    expect(document.querySelector('[data-particao="1"] [data-marca-pedido]')).not.toBeNull();
    expect(document.querySelectorAll("[data-marca-pedido]")).toHaveLength(1);
  });

  it("When the result is applied, then the order says so with who decided it", () => {
    const historico: Historico = {
      pedidoId: 9,
      etapas: [
        etapa("criado"),
        etapa("evento-confirmado", { particao: 1, offset: 3 }),
        etapa("decidido", { instancia: "caixa-2", status: "APROVADO" }),
        etapa("resultado-aplicado", { status: "PAGO" }),
      ],
    };
    render(<OrderLife marks={eventLogMarks(historico, eventLogFlow(plataforma))} />);
    expect(screen.getByTestId("onde").textContent).toBe(
      "resultado aplicado: PAGO (decidido por caixa-2)",
    );
  });
});

describe("Issue 56: the broker edition's picture", () => {
  const broker: PlataformaBroker = {
    nos: [
      { nome: "rabbit-1@h", ativo: true },
      { nome: "rabbit-2@h", ativo: false },
    ],
    filas: [
      {
        nome: "pagamentos.solicitacoes",
        tipo: "quorum",
        lider: "rabbit-1@h",
        membros: ["rabbit-1@h", "rabbit-2@h"],
        emLinha: ["rabbit-1@h"],
        mensagens: 5,
        prontas: 4,
        semAck: 1,
        consumidores: 1,
        de: [{ exchange: "pagamentos.comandos", tipo: "direct", chave: "pagamento.solicitar" }],
        cartasMortasPara: "pagamentos.solicitacoes.erros",
        limiteDeEntregas: 3,
      },
      {
        nome: "pagamentos.solicitacoes.erros",
        tipo: "quorum",
        lider: "rabbit-1@h",
        membros: ["rabbit-1@h"],
        emLinha: ["rabbit-1@h"],
        mensagens: 2,
        prontas: 2,
        semAck: 0,
        consumidores: 0,
      },
    ],
    lidoDe: "http://h:15672",
    lidoEm: "2026-11-28T10:00:00.000Z",
  };

  it("When a node is down and messages wait, then each queue shows ready and unacked, the errors queue is flagged, and the down node leads nothing", () => {
    expect(brokerFlow(broker).nodes).toEqual([
      { name: "rabbit-1@h", up: true, leads: 2 },
      { name: "rabbit-2@h", up: false, leads: 0 },
    ]);
    render(<BrokerFlowPicture plataforma={broker} historico={null} />);
    const queue = document.querySelector('[data-fila="pagamentos.solicitacoes"]');
    expect(queue?.getAttribute("data-prontas")).toBe("4");
    expect(queue?.getAttribute("data-sem-ack")).toBe("1");
    expect(queue?.textContent).toContain("fora: rabbit-2@h");
    expect(document.querySelector('[data-estacao="erros"]')?.className).toContain("alerta-borda");
    expect(document.querySelector('[data-no="rabbit-2@h"]')?.textContent).toBe(
      "rabbit-2@h: fora do ar",
    );
    // The route in, and the way out to dead letters, as RabbitMQ reported them.
    const route = queue?.querySelector('[data-exchange="pagamentos.comandos"]');
    expect(route?.getAttribute("data-chave")).toBe("pagamento.solicitar");
    expect(route?.textContent).toBe("exchange pagamentos.comandos (direct) ─pagamento.solicitar→ ");
    expect(queue?.querySelector("[data-cartas-para]")?.textContent).toBe(
      " · após 3 entregas falhas → pagamentos.solicitacoes.erros",
    );
    // An .erros queue has no exchange of its own: only the dead-lettering reaches it.
    const erros = document.querySelector('[data-fila="pagamentos.solicitacoes.erros"]');
    expect(erros?.querySelector("[data-exchange]")).toBeNull();
  });

  it("When a request was accepted and confirmed but not yet decided, then two of its three confirmations are done", () => {
    const historico: HistoricoBroker = {
      pedidoId: "p-1",
      solicitacoes: [
        {
          solicitacaoId: "s-1",
          etapas: [etapa("registro-guardado"), etapa("publicacao-confirmada")],
        },
      ],
    };
    const marks = brokerMarks(historico);
    expect(marks.where).toBe("na fila de solicitações, esperando o pagamento");
    expect(marks.confirmations.map((c) => [c.name, c.done])).toEqual([
      ["202", true],
      ["confirmação do publicador", true],
      ["ack do consumidor", false],
    ]);
  });
});

describe("Issue 56: a member whose process went silent", () => {
  it("When the lab reports caixa-2 stopped while Kafka still lists it, then it is marked with how long ago, and forgotten once it is gone", () => {
    const seen = new Map<string, number>();
    const processes = [
      { nome: "caixa-1", estado: "rodando" },
      { nome: "caixa-2", estado: "parado" },
    ];
    const first = silentMembers(["caixa-1", "caixa-2"], processes, seen, 10_000);
    expect([...first]).toEqual([["caixa-2", { state: "parado", forMs: 0 }]]);
    const later = silentMembers(["caixa-1", "caixa-2"], processes, seen, 14_000);
    expect(later.get("caixa-2")).toEqual({ state: "parado", forMs: 4000 });
    render(<HopDiagram hop={eventLogFlow(plataforma).criados} mark={null} silent={later} />);
    const box = document.querySelector('[data-membro="caixa-2"]');
    expect(box?.getAttribute("data-silencioso")).toBe("parado");
    expect(box?.textContent).toContain("caixa-2 ✖ 4 s / 6 s");
    // The session ended: Kafka dropped it; started again later, it counts from 0.
    expect(silentMembers(["caixa-1"], processes, seen, 20_000).size).toBe(0);
    expect(
      silentMembers(["caixa-1", "caixa-2"], processes, seen, 30_000).get("caixa-2")?.forMs,
    ).toBe(0);
  });
});
