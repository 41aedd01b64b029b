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
  `pedidos vistos ${d.pedidosVistos}, pagos ${d.pedidosPagos}, receita ${(d.receitaCentavos / 100).toFixed(2)}, mais vendido ${d.maisVendido ? `${d.maisVendido.item} (${d.maisVendido.quantidade})` : "-"}`;

const same = (d: Dashboard, e: ReturnType<typeof expectedFrom>) =>
  d.pedidosVistos === e.pedidosVistos &&
  d.pedidosPagos === e.pedidosPagos &&
  d.receitaCentavos === e.receitaCentavos &&
  JSON.stringify(d.maisVendido) === JSON.stringify(e.maisVendido);

/** The shop with one payments instance reading its three partitions side by side; six orders decided. */
async function sixOrdersDecided(w: LabWorld) {
  const { say } = w;
  say.doing(
    "Iniciando o Kafka, a API de pedidos e uma instância de pagamento, e fazendo 6 pedidos",
  );
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
  say.saw(`as contagens da própria API de pedidos: ${describe(expected)}`);

  return { brokers, all, expected };
}

/** The analytics CLI in `grupo` until caught up, as a person runs it; its dashboard from --json. */
async function analyticsRun(w: LabWorld, brokers: string, grupo: string, ...flags: string[]) {
  const { say } = w;
  const env = { ...process.env, KAFKA_BROKERS: brokers, KAFKA_PREFIXO: w.prefix };

  const shown = `GRUPO=${grupo} npm run analytics -- ${[...flags, "--until-caught-up"].join(" ")}`;
  say.doing(`Rodando o analytics: ${shown}`);
  const { stdout } = await run(
    process.execPath,
    [...programArgs("analytics"), ...flags, "--until-caught-up", "--json", "--quiet"],
    { env: { ...env, GRUPO: grupo }, encoding: "utf8" },
  );
  const d = JSON.parse(stdout) as Dashboard;
  say.saw(`leu ${d.registrosLidos} registros: ${describe(d)}`);
  return d;
}

export const replay = {
  name: "replay",
  summary:
    "o analytics remonta o painel do offset 0, num grupo novo, em auditoria e depois de um reset",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "O analytics guarda a sua visão só na memória: ela deriva do log e pode ser jogada fora\n" +
        "e remontada. Um grupo sem offset confirmado começa do offset 0; um segundo grupo\n" +
        "(auditoria) lê tudo com offsets próprios; um leitor reiniciado segue de onde o seu grupo\n" +
        "parou; --replay leva o grupo de volta ao offset 0 e remonta.",
    );
    const { brokers, all, expected } = await sixOrdersDecided(w);
    const analytics = (grupo: string, ...flags: string[]) =>
      analyticsRun(w, brokers, grupo, ...flags);
    say.watch("os registros lidos e o painel de cada execução; os offsets dos grupos na página");
    const first = await analytics("analytics");
    const auditoria = await analytics("auditoria");
    const resumed = await analytics("analytics");
    say.saw(
      "Um leitor reiniciado segue dos offsets confirmados do seu grupo: a sua visão cobre só o que ele leu agora.",
    );
    const rebuilt = await analytics("analytics", "--replay");

    const records = 2 * all.length;
    say.check(
      first.registrosLidos === records && same(first, expected),
      `um grupo novo leu os ${records} registros do offset 0, e o seu painel bate com as contagens da API de pedidos`,
    );
    say.check(
      auditoria.registrosLidos === records && same(auditoria, expected),
      "auditoria, um segundo grupo, leu tudo de novo com offsets próprios: o mesmo painel",
    );
    say.check(
      resumed.registrosLidos === 0 && resumed.pedidosVistos === 0,
      "o leitor reiniciado seguiu dos seus offsets confirmados: 0 registros lidos, uma visão vazia",
    );
    say.check(
      rebuilt.registrosLidos === records && same(rebuilt, expected),
      "--replay levou o grupo ao offset 0 e remontou o mesmo painel",
    );
  },
};
