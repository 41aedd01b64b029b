import { waitFor } from "@shop/service";
import { describeHolders, groupSettled, listOrders, placeOrder } from "../../../harness/http.ts";
import { queryOrdersDb } from "../../../harness/orders-store.ts";
import { tempOrdersDatabase } from "../../../infra/postgres.ts";
import type { LabWorld } from "../world.ts";

const PER_PHASE = 10;

/** Two orders APIs on one PostgreSQL database of the lab's own, and three quick payments instances. */
async function twoApisOnePostgres(w: LabWorld) {
  const { say } = w;
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

  return { first, second, database };
}

/** PER_PHASE orders from `from`, spread over `urls`; until each is decided (read from the last). */
async function place(urls: string[], from: number) {
  const ids: number[] = [];
  for (let i = 0; i < PER_PHASE; i++) {
    const res = await placeOrder(urls[i % urls.length] as string, from + i);
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
}

/** Until pedidos-api is settled with `count` members, told as Kafka describes it. */
async function settled(w: LabWorld, url: string, count: number) {
  const { groups, topics } = w.names;
  const a = await groupSettled(url, groups.pedidosApi, topics.pagamentosResultados, count);
  w.say.saw(`A descrição do grupo no Kafka: ${describeHolders(a.holders)}`);
  return a;
}

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
    const { first, second, database } = await twoApisOnePostgres(w);
    const before = await settled(w, second.url(), 2);
    say.doing(`Fazendo ${PER_PHASE} pedidos, alternando entre as duas instâncias`);
    const early = await place([first.url(), second.url()], 0);
    say.doing("Matando orders-api-1 (kill -9)");
    await first.kill();
    const after = await settled(w, second.url(), 1);
    say.doing(`Fazendo mais ${PER_PHASE} pedidos em orders-api-2`);
    const late = await place([second.url()], PER_PHASE);
    await tellScaleOut(say, second.url(), database.url, { before, after, early, late });
  },
};

/** Read from the database: both held partitions, the survivor took them, nothing lost or applied twice. */
async function tellScaleOut(
  say: LabWorld["say"],
  url: string,
  databaseUrl: string,
  r: {
    before: { holders: Map<string, number[]> };
    after: { holders: Map<string, number[]> };
    early: number[];
    late: number[];
  },
) {
  const { before, after, early, late } = r;
  say.doing("Lendo o resultado do banco e dos tópicos");
  const all = await listOrders(url);
  const created = [...early, ...late];
  const decided = created.filter(
    (id) => all.find((o) => o.id === id)?.status !== "AGUARDANDO_PAGAMENTO",
  );
  const applied = await queryOrdersDb<{ pedido_id: number; n: number }>(
    databaseUrl,
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
}
