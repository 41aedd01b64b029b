import { waitFor } from "@shop/service";
import {
  describeHolders,
  listOrders,
  paymentsAssignment,
  placeOrder,
} from "../../../harness/http.ts";
import { queryOrdersDb } from "../../../harness/orders-store.ts";
import { tempOrdersDatabase } from "../../../infra/postgres.ts";
import type { LabWorld } from "../world.ts";

const PER_PHASE = 10;

export const scaleOut = {
  name: "scale-out",
  summary:
    "duas APIs de pedidos dividem o PostgreSQL e as partições dos resultados; uma é morta, a outra assume",
  async run(w: LabWorld) {
    const { say } = w;
    say.explain(
      "Com DATABASE_URL a API de pedidos guarda os pedidos no PostgreSQL, e várias instâncias\n" +
        "os dividem. Elas dividem também o grupo pedidos-api: as três partições de\n" +
        "pagamentos-resultados são repartidas entre elas, e o relay da outbox de cada instância\n" +
        "publica eventos de pedidos, seja qual for a instância que os recebeu (docs/scale-out.md).",
    );
    say.doing(
      "Iniciando o Kafka, um banco PostgreSQL, duas APIs de pedidos e três instâncias de pagamento",
    );
    const brokers = await w.kafka();
    const database = await tempOrdersDatabase("lab");
    w.atEnd(() => database.drop());
    const api = (n: number, port: number) =>
      w.startEventLog(`orders-api-${n}`, "orders-api", brokers, {
        PORTA: String(port),
        DATABASE_URL: database.url,
        INSTANCIA: String(n),
      });
    const first = await api(1, w.options.port);
    const second = await api(2, 0);
    for (const instancia of ["caixa-1", "caixa-2", "caixa-3"])
      await w.startEventLog(instancia, "payments", brokers, {
        INSTANCIA: instancia,
        TEMPO_DECISAO_MS: "500",
      });
    say.saw(`APIs de pedidos em ${first.url()} e ${second.url()}, um banco só`);
    say.watch(`qual instância tem qual partição de resultados: ${second.url()}/plataforma, grupo`);
    say.watch(
      `${w.names.groups.pedidosApi} (ou a página web: VITE_API_URL=${second.url()} npm run dev -w web)`,
    );

    const { groups, topics } = w.names;
    const settle = (url: string, count: number) =>
      waitFor(
        async () => {
          const a = await paymentsAssignment(url, groups.pedidosApi, topics.pagamentosResultados);
          const held = [...a.holders.values()].flat().sort().join(",");
          return a.state === "Stable" && a.holders.size === count && held === "0,1,2" && a;
        },
        { timeoutMs: 60_000, intervalMs: 250, what: `pedidos-api to settle with ${count} members` },
      );
    let n = 0;
    const place = async (urls: string[]) => {
      const ids: number[] = [];
      for (let i = 0; i < PER_PHASE; i++) {
        const res = await placeOrder(urls[i % urls.length] as string, n++);
        if (res.status === 201) ids.push(res.body.id);
      }
      const reader = urls[urls.length - 1] as string;
      await waitFor(
        async () => {
          const all = await listOrders(reader);
          return ids.every((id) => all.find((o) => o.id === id)?.status !== "AGUARDANDO_PAGAMENTO");
        },
        { timeoutMs: 60_000, intervalMs: 250, what: "these orders to be decided" },
      );
      return ids;
    };

    const before = await settle(second.url(), 2);
    say.saw(`A descrição do grupo no Kafka: ${describeHolders(before.holders)}`);
    say.doing(`Fazendo ${PER_PHASE} pedidos, alternando entre as duas instâncias`);
    const early = await place([first.url(), second.url()]);

    say.doing("Matando orders-api-1 (kill -9)");
    await first.kill();
    const after = await settle(second.url(), 1);
    say.saw(`A descrição do grupo no Kafka: ${describeHolders(after.holders)}`);
    say.doing(`Fazendo mais ${PER_PHASE} pedidos em orders-api-2`);
    const late = await place([second.url()]);

    say.doing("Lendo o resultado do banco e dos tópicos");
    const all = await listOrders(second.url());
    const created = [...early, ...late];
    const decided = created.filter(
      (id) => all.find((o) => o.id === id)?.status !== "AGUARDANDO_PAGAMENTO",
    );
    const applied = await queryOrdersDb<{ pedido_id: number; n: number }>(
      database.url,
      "SELECT pedido_id, COUNT(*) AS n FROM historico WHERE etapa = 'resultado-aplicado' GROUP BY pedido_id",
    );
    say.check(
      before.holders.size === 2 && [...before.holders.values()].every((ps) => ps.length > 0),
      `as duas instâncias tinham partições de resultados (${describeHolders(before.holders)})`,
    );
    say.check(
      after.holders.size === 1 && [...after.holders.values()][0]?.length === 3,
      `depois que orders-api-1 morreu, a outra assumiu as partições dela: ${describeHolders(after.holders)}`,
    );
    say.check(
      early.length === PER_PHASE && late.length === PER_PHASE,
      `todo pedido foi respondido 201, ${PER_PHASE} com duas instâncias e ${PER_PHASE} com a que ficou`,
    );
    say.check(
      decided.length === created.length &&
        applied.length === created.length &&
        applied.every((r) => Number(r.n) === 1),
      `nada perdido: ${created.length} pedidos, cada um decidido e aplicado uma vez (lido do PostgreSQL)`,
    );
  },
};
