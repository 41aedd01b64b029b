import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { aDashboard } from "../../../test/helpers/fixtures.ts";
import { AnalyticsOutput, dashboardText } from "../../src/output.ts";

function stream(tty: boolean) {
  const chunks: string[] = [];
  const s = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  }) as unknown as NodeJS.WriteStream;
  (s as { isTTY?: boolean }).isTTY = tty;
  return { s, text: () => chunks.join("") };
}

const resumo = {
  grupo: "analytics",
  dashboard: aDashboard({
    pedidosVistos: 2,
    pedidosPagos: 1,
    receitaCentavos: 3780,
    maisVendido: { item: "caneca", quantidade: 2 },
  }),
  read: 4,
  invalid: 0,
  lag: [{ topic: "pedidos-criados", partition: 0, endOffset: 2, committedOffset: 2, lag: 0 }],
};

describe("Progress and output of the analytics CLI", () => {
  it("When stderr is a terminal, then progress is a bar redrawn in place", () => {
    const out = stream(true);
    const err = stream(true);
    const saida = new AnalyticsOutput({ json: false, quiet: false }, out.s, err.s);
    saida.progress(50, 200, true);
    expect(err.text()).toBe(`\r\x1b[K[${"#".repeat(8)}${".".repeat(22)}] 50/200 records (25%)`);
    saida.batch(["pedidos-criados partition=0 offset=0 pedido=1"], "dash");
    expect(err.text()).toContain("\r\x1b[K"); // the bar is cleared before a record line
    expect(out.text()).toContain("pedidos-criados partition=0 offset=0 pedido=1\ndash\n");
  });

  it("When the output is not a terminal, then progress is plain lines", () => {
    const out = stream(false);
    const err = stream(false);
    new AnalyticsOutput({ json: false, quiet: false }, out.s, err.s).progress(1, 4, true);
    expect(out.text()).toBe("progress: 1/4 records (25%)\n");
    expect(err.text()).toBe("");
  });

  it("When --json is given, then stdout holds only the final JSON dashboard, revenue in cents and as a number", () => {
    const out = stream(false);
    const err = stream(false);
    const saida = new AnalyticsOutput({ json: true, quiet: false }, out.s, err.s);
    saida.info("analytics: starting");
    saida.batch(["a record"], "dash");
    saida.final(resumo);
    const parsed = JSON.parse(out.text());
    expect(parsed).toMatchObject({
      grupo: "analytics",
      pedidosPagos: 1,
      receita: 37.8,
      receitaCentavos: 3780,
    });
    expect(err.text()).toContain("a record");
  });

  it("When the run ends, then the text output has the dashboard and the lag per partition", () => {
    const out = stream(false);
    new AnalyticsOutput({ json: false, quiet: true }, out.s, stream(false).s).final(resumo);
    expect(out.text()).toMatch(/revenue {10}37\.80/);
    expect(out.text()).toMatch(/best-selling {5}caneca \(2 units\)/);
    expect(out.text()).toMatch(/pedidos-criados\s+0\s+end\s+2\s+committed\s+2\s+lag 0/);
  });
});

describe("Untrusted text in the dashboard (issue 14)", () => {
  it("When the best-selling item carries an escape sequence, then the dashboard prints it escaped", () => {
    const texto = dashboardText(
      "analytics",
      { ...resumo.dashboard, maisVendido: { item: "ouro\u001b[2J\u009b31m", quantidade: 3 } },
      0,
    );
    expect(texto).toContain("ouro\\u001b[2J\\u009b31m (3 units)");
    for (const c of ["\u001b", "\u009b"]) expect(texto).not.toContain(c);
  });
});
