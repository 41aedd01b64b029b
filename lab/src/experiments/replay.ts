import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { waitFor } from "@shop/service";
import { listOrders, type PedidoWire, placeOrder } from "../../../harness/http.ts";
import { programArgs } from "../../../harness/process.ts";
import type { LabWorld } from "../world.ts";

const run = promisify(execFile);

interface Dashboard {
  pedidosVistos: number;
  pedidosPagos: number;
  receitaCentavos: number;
  maisVendido: { item: string; quantidade: number } | null;
  registrosLidos: number;
}

const cents = (valor: number) => Math.round(valor * 100);

/** The dashboard the spec defines, computed from the orders API's own list. */
function expectedFrom(orders: PedidoWire[]) {
  const paid = orders.filter((o) => o.status === "PAGO");
  const perItem = new Map<string, number>();
  for (const o of paid) perItem.set(o.item, (perItem.get(o.item) ?? 0) + o.quantidade);
  const [best] = [...perItem].sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  return {
    pedidosVistos: orders.length,
    pedidosPagos: paid.length,
    receitaCentavos: paid.reduce((s, o) => s + cents(o.valor), 0),
    maisVendido: best ? { item: best[0], quantidade: best[1] } : null,
  };
}

const describe = (d: Omit<Dashboard, "registrosLidos">) =>
  `orders seen ${d.pedidosVistos}, paid ${d.pedidosPagos}, revenue ${(d.receitaCentavos / 100).toFixed(2)}, best-selling ${d.maisVendido ? `${d.maisVendido.item} (${d.maisVendido.quantidade})` : "-"}`;

const same = (d: Dashboard, e: ReturnType<typeof expectedFrom>) =>
  d.pedidosVistos === e.pedidosVistos &&
  d.pedidosPagos === e.pedidosPagos &&
  d.receitaCentavos === e.receitaCentavos &&
  JSON.stringify(d.maisVendido) === JSON.stringify(e.maisVendido);

export const replay = {
  name: "replay",
  summary:
    "analytics rebuilds its dashboard from offset 0, in a new group, in auditoria, and after a reset",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "Analytics keeps its view in memory only: it is derived from the log and can be thrown\n" +
        "away and rebuilt. A group with no committed offset starts at offset 0; a second group\n" +
        "(auditoria) reads everything with offsets of its own; a restarted reader resumes where\n" +
        "its group stopped; --replay moves the group back to offset 0 and rebuilds.",
    );
    say.doing("Starting Kafka, the orders API and a payments instance, and placing 6 orders");
    const { brokers, url } = await w.eventLogShop();
    // Its three partitions side by side, so that the six orders are decided in about 6 s.
    await w.startEventLog("caixa-1", "payments", brokers, { PARTICOES_EM_PARALELO: "3" });
    for (let n = 0; n < 6; n++) await placeOrder(url, n);
    const all = await waitFor(
      async () => {
        const list = await listOrders(url);
        return list.every((o) => o.status !== "AGUARDANDO_PAGAMENTO") && list;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: "the six orders decided" },
    );
    const expected = expectedFrom(all);
    say.saw(`the orders API's own counts: ${describe(expected)}`);

    const env = { ...process.env, KAFKA_BROKERS: brokers, KAFKA_PREFIXO: w.prefix };
    const analytics = async (grupo: string, ...flags: string[]) => {
      const shown = `GRUPO=${grupo} npm run analytics -- ${[...flags, "--until-caught-up"].join(" ")}`;
      say.doing(`Running analytics: ${shown}`);
      const { stdout } = await run(
        process.execPath,
        [...programArgs("analytics"), ...flags, "--until-caught-up", "--json", "--quiet"],
        { env: { ...env, GRUPO: grupo }, encoding: "utf8" },
      );
      const d = JSON.parse(stdout) as Dashboard;
      say.saw(`read ${d.registrosLidos} records: ${describe(d)}`);
      return d;
    };
    say.watch("each run's records read and its dashboard; the groups' offsets in the web panel");
    const first = await analytics("analytics");
    const auditoria = await analytics("auditoria");
    const resumed = await analytics("analytics");
    say.saw(
      "A restarted reader resumes from its group's committed offsets: its view covers only what it read now.",
    );
    const rebuilt = await analytics("analytics", "--replay");

    const records = 2 * all.length;
    say.check(
      first.registrosLidos === records && same(first, expected),
      `a new group read all ${records} records from offset 0, and its dashboard matches the orders API's counts`,
    );
    say.check(
      auditoria.registrosLidos === records && same(auditoria, expected),
      "auditoria, a second group, read everything again with offsets of its own: the same dashboard",
    );
    say.check(
      resumed.registrosLidos === 0 && resumed.pedidosVistos === 0,
      "the restarted reader resumed at its committed offsets: 0 records read, an empty view",
    );
    say.check(
      rebuilt.registrosLidos === records && same(rebuilt, expected),
      "--replay reset the group to offset 0 and rebuilt the same dashboard",
    );
  },
};
