import { describe, expect, it } from "vitest";
import { type Step, timeline } from "../../src/store.ts";

const step = (etapa: string, em: string): Step => ({ etapa, em, detalhes: {} });
const confirmed = (enviadoEm: string) => ({
  topico: "pedidos-criados",
  particao: 2,
  deslocamento: "41",
  enviado_em: enviadoEm,
});

describe("The timeline's evento-confirmado, read from the outbox row (issue 57)", () => {
  it("When the relay marked the row before the result came, then evento-confirmado comes first, with the topic, partition and offset Kafka gave", () => {
    const rows = [
      step("decidido", "2026-12-07T10:00:03.000Z"),
      step("resultado-aplicado", "2026-12-07T10:00:03.010Z"),
    ];
    expect(timeline(rows, confirmed("2026-12-07T10:00:00.020Z"))).toEqual([
      {
        etapa: "evento-confirmado",
        em: "2026-12-07T10:00:00.020Z",
        detalhes: { topico: "pedidos-criados", particao: 2, offset: "41" },
      },
      ...rows,
    ]);
  });

  it("When a result came before the relay's mark (one published straight after the 201), then evento-confirmado still comes first: every step follows from the record Kafka wrote", () => {
    const rows = [
      step("decidido", "2026-12-07T10:00:01.000Z"),
      step("resultado-aplicado", "2026-12-07T10:00:01.005Z"),
      step("decidido", "2026-12-07T10:00:09.000Z"),
    ];
    expect(timeline(rows, confirmed("2026-12-07T10:00:05.000Z")).map((s) => s.etapa)).toEqual([
      "evento-confirmado",
      "decidido",
      "resultado-aplicado",
      "decidido",
    ]);
  });

  it("When the row was not marked (pending, set aside, or published without the outbox), then the timeline is its historico rows alone", () => {
    const rows = [step("evento-posto-de-lado", "2026-12-07T10:00:01.000Z")];
    expect(timeline(rows, undefined)).toEqual(rows);
  });
});
