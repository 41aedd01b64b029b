import type { Server } from "node:http";
import { type PlataformaBroker, QUEUES } from "@shop/contracts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokerEnv } from "../../harness/env.ts";
import { type OwnRabbitCluster, ownRabbitCluster } from "../../harness/own-rabbit.ts";
import { createVhost, type ShopVhost } from "../../harness/vhost.ts";
import { ShopProcesses } from "../../infra/services.ts";
import { answered503, brokerActions } from "../../lab/src/page/broker-actions.ts";
import type { LabAction, Story } from "../../lab/src/page/session.ts";
import { ARTIFACTS, checkSizes, launchBrowser, pageSite, problemsOf } from "../helpers/page.ts";
import { http, queryRows, type ServiceProcess } from "../helpers/shop.ts";
import { waitFor } from "../helpers/wait.ts";
import {
  finishBrokerScenario,
  type Request,
  slowest,
  startShop,
  streamOfPayments,
  unavailableBetween,
  withRequestsAfterTheEnd,
} from "./broker-harness.ts";

/**
 * Fault injection on the broker edition on a RabbitMQ cluster of three of this file's own
 * (node names, ports and data folders of its own): a file apart from broker.test.ts, so that
 * the two run side by side. Counted as every broker scenario is (broker-harness.ts).
 */
let vhost: ShopVhost;
const running: ServiceProcess[] = [];
/** The page's server and browser, for the scenario that looks at the page. */
const servers: Server[] = [];
let browser: Browser | undefined;

beforeAll(async () => {
  vhost = await createVhost("faults-cluster");
}, 120_000);
afterAll(async () => {
  await browser?.close();
  for (const s of servers) s.close();
  await Promise.all(running.map((p) => p.stop()));
  await vhost?.dispose();
}, 120_000);

describe("Fault injection: broker edition", () => {
  describe("on a RabbitMQ cluster of three", () => {
    let cluster: OwnRabbitCluster;
    beforeAll(async () => {
      cluster = await ownRabbitCluster("faults-rc");
    }, 180_000);
    afterAll(async () => {
      await cluster?.dispose();
    }, 120_000);

    const onCluster = (service: string) => ({ ...brokerEnv(vhost, service), ...cluster.env() });
    const firstDecision = (paymentsDb: string) =>
      waitFor(() => queryRows(paymentsDb, "SELECT 1 FROM decisoes LIMIT 1").length > 0, {
        what: "a first decision before the fault",
      });

    /** The broker panel of the orders service (GET /plataforma): nodes, leaders, members. */
    const panel = async (ordersUrl: string) =>
      (await http<PlataformaBroker>("GET", `${ordersUrl}/plataforma`)).body;
    const queueIn = (p: PlataformaBroker) => p.filas.find((f) => f.nome === QUEUES.solicitacoes);

    /**
     * The broker page open on the shop of this cluster, once it draws three nodes up and the
     * orders: each size checked with data present (issue 56) and kept as a screenshot.
     */
    const pageOnCluster = async (page: Page, origin: string) => {
      const problems = problemsOf(page);
      await page.goto(origin);
      const fluxo = page.getByTestId("fluxo");
      await expect
        .poll(() => fluxo.locator('[data-estacao="nos"] [data-no-ar="true"]').count(), {
          timeout: 20_000,
        })
        .toBe(3);
      await page.locator("tr[data-pedido-broker]").first().waitFor();
      await fluxo.locator(`[data-fila="${QUEUES.solicitacoes}"] [data-exchange]`).waitFor();
      await checkSizes(page, "web-broker-cluster");
      expect(problems, "errors on the page").toEqual([]);
      return fluxo;
    };

    it("When the node leading the quorum queues is killed -9 under load, then the panel shows a new leader and the node down, the services go on through another node within the 5 s wait, no request is refused after one repeat, and nothing acknowledged is lost", async () => {
      const shop = await startShop(running, "f-rc-leader", onCluster);
      try {
        const flowing = streamOfPayments(() => shop.orders.url(), 30);
        await firstDecision(shop.paymentsDb);
        const before = queueIn(await panel(shop.orders.url()));
        const leader = cluster.nodes.find((n) => n.node === before?.lider);
        if (!before || !leader)
          throw new Error(`the panel shows no leader for ${QUEUES.solicitacoes}`);
        expect(before.tipo).toBe("quorum");
        expect(before.membros).toHaveLength(3);
        const killedAt = Date.now();
        await leader.kill();
        const seen = await waitFor(
          async () => {
            const p = await panel(shop.orders.url());
            const q = queueIn(p);
            const down = p.nos.find((n) => n.nome === leader.node)?.ativo === false;
            return (
              q?.lider && q.lider !== before.lider && !q.emLinha.includes(leader.node) && down && q
            );
          },
          {
            timeoutMs: 30_000,
            intervalMs: 500,
            what: "the panel to show a new leader and the node down",
          },
        );
        const movedAt = Date.now();
        await leader.start();
        const backAt = Date.now();
        await waitFor(async () => queueIn(await panel(shop.orders.url()))?.emLinha.length === 3, {
          timeoutMs: 60_000,
          intervalMs: 500,
          what: "the restarted node online again as a member",
        });
        const requests = await flowing;
        const during = unavailableBetween(requests, killedAt, movedAt);
        const r = await finishBrokerScenario({
          shop,
          requests,
          row: {
            scenario: "quorum queue leader killed (broker, cluster)",
            fault:
              "kill -9 the RabbitMQ node leading pagamentos.solicitacoes, of three; restart it",
            end: "the kill: the cluster carries on without the node",
            endedAt: killedAt,
          },
          proof: () => ({
            hit: before.membros.length === 3 && seen.lider !== before.lider,
            text: `leader ${before.lider} of ${before.membros.length} members killed; the panel showed ${seen.lider} leading and the node down ${((movedAt - killedAt) / 1000).toFixed(1)} s later; ${during.length} answers 503 meanwhile`,
          }),
          healedAt: backAt,
          faultAt: killedAt,
        });
        // The failover goal: within the spec's 5 s wait, and no request refused after the
        // client's one repeat (a publish lost with its node is tried again on another).
        expect(r.timing?.longestWithoutAckMs).toBeLessThan(5_000);
        for (const q of requests)
          expect(
            q.answers.filter((a) => a.status !== 202 && a.status !== 200).length,
            `request ${q.key}: answers before its 202`,
          ).toBeLessThanOrEqual(1);
      } finally {
        await shop.stop();
      }
    }, 240_000);

    it("Issue 56: when the page's lab kills the node leading the queues and starts it again, then its stories count the queues it led, the seconds until each had another leader, and until it was a member of each again, as the panel reads them; the page, with 20 orders on three nodes, is cut nowhere at 1280×800 or 390×844 and draws the node down and the leaders moved", async () => {
      const site = await pageSite(servers, "cluster-page-broker");
      const shop = await startShop(running, "f-rc-lab", (service) => ({
        ...onCluster(service),
        FRONT_ORIGIN: site.origin,
      }));
      browser ??= await launchBrowser();
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      try {
        await streamOfPayments(() => shop.orders.url(), 20, 50);
        await site.build(shop.orders.url());
        const fluxo = await pageOnCluster(page, site.origin);
        const before = await panel(shop.orders.url());
        const leader = cluster.nodes.find((n) => n.node === queueIn(before)?.lider);
        if (!leader) throw new Error(`the panel shows no leader for ${QUEUES.solicitacoes}`);
        const led = before.filas.filter((f) => f.lider === leader.node).map((f) => f.nome);
        const actions = brokerActions({
          processes: new ShopProcesses(() => {}),
          payments: { name: "payments", dir: "broker/payments" },
          ordersUrl: shop.orders.url(),
          ordersDb: shop.ordersDb,
          paymentsDb: shop.paymentsDb,
          amqpAdminUrl: vhost.urlAdmin,
          nodes: cluster.nodes,
          machineRabbit: "",
        });
        const run = async (acao: string) => {
          const told = { figures: {} as Record<string, number>, failed: [] as string[] };
          const story: Story = {
            before: () => {},
            line: () => {},
            after: () => {},
            figure: (name, value) => {
              told.figures[name] = value;
            },
            fail: (text) => told.failed.push(text),
          };
          const action = actions.find((a) => a.acao === acao) as unknown as LabAction<{
            no: string;
          }>;
          await action.run({ no: leader.node.split("@")[0] as string }, story);
          return told;
        };
        const killed = await run("matar-no");
        expect(killed.failed).toEqual([]);
        expect(led.length).toBeGreaterThan(0);
        expect(killed.figures.filasLideradasPeloNo).toBe(led.length);
        expect(killed.figures.segundosAteNovoLider).toBeGreaterThan(0);
        // Requests answered 503 meanwhile, from the orders service's own metric: none was
        // asked during the kill here, so none; the figure is there to be read.
        expect(killed.figures.respondidos503).toBe(0);
        const moved = await panel(shop.orders.url());
        for (const q of led)
          expect(moved.filas.find((f) => f.nome === q)?.lider).not.toBe(leader.node);
        // The picture follows: the node drawn down, no queue drawn led by it.
        await fluxo
          .locator(`[data-no="${leader.node}"][data-no-ar="false"]`)
          .waitFor({ timeout: 10_000 });
        await expect
          .poll(() => fluxo.locator(`[data-fila][data-lider="${leader.node}"]`).count())
          .toBe(0);
        await page.screenshot({
          path: `${ARTIFACTS}/web-broker-cluster-node-down-1280x800.png`,
          fullPage: true,
        });
        const started = await run("iniciar-no");
        expect(started.failed).toEqual([]);
        const back = await panel(shop.orders.url());
        const member = back.filas.filter((f) => f.membros.includes(leader.node));
        expect(started.figures.filasComONo).toBe(member.length);
        for (const f of member) expect(f.emLinha, f.nome).toContain(leader.node);
        await fluxo
          .locator(`[data-no="${leader.node}"][data-no-ar="true"]`)
          .waitFor({ timeout: 10_000 });
      } finally {
        await page.close();
        await shop.stop();
      }
    }, 240_000);

    it("When two of three RabbitMQ nodes are stopped, then the queues lose their majority, payment requests answer 503 within 5 s, and everything resumes when a node returns", async () => {
      const shop = await startShop(running, "f-rc-majority", onCluster);
      const [, second, third] = cluster.nodes;
      if (!second || !third) throw new Error("the cluster has three nodes");
      try {
        // 15 s of requests: still flowing after two of the test's own nodes have stopped (their
        // application stopped beside the stream, not blocking it) and after one has returned.
        const live: Request[] = [];
        const flowing = streamOfPayments(() => shop.orders.url(), 60, 250, undefined, live);
        await firstDecision(shop.paymentsDb);
        const refusedBefore = await answered503(shop.orders.url());
        const stoppedAt = Date.now();
        await Promise.all([second.stopApp(), third.stopApp()]);
        // The outage lasts until a client has felt it: a request answered 503 (after the
        // spec's 5 s confirmation wait), read from the stream's answers, not a fixed sleep.
        await waitFor(() => unavailableBetween(live, stoppedAt, Date.now()).length > 0, {
          timeoutMs: 30_000,
          intervalMs: 100,
          what: "a payment request answered 503 without a majority",
        });
        await second.startApp();
        const backAt = Date.now();
        const requests = await withRequestsAfterTheEnd(flowing, () => shop.orders.url());
        await third.startApp();
        const during = unavailableBetween(requests, stoppedAt, backAt);
        await finishBrokerScenario({
          shop,
          requests,
          row: {
            scenario: "two of three RabbitMQ nodes stopped (broker, cluster)",
            fault:
              "`stop_app` on two of the test's own three nodes until a request is answered 503, then one back",
            end: "a majority back",
          },
          proof: () => ({
            hit: during.length > 0,
            text: `${during.length} answers 503 without a majority (slowest ${slowest(during)} ms)`,
          }),
          healedAt: backAt,
          faultAt: stoppedAt,
        });
        expect(slowest(during), "the slowest 503 without a majority").toBeLessThanOrEqual(6500);
        // The lab's node stories count 503s from the orders service's metric: it counts
        // what the clients were answered.
        const answered = requests.flatMap((q) => q.answers).filter((a) => a.status === 503);
        expect((await answered503(shop.orders.url())) ?? -1).toBe(
          (refusedBefore ?? 0) + answered.length,
        );
      } finally {
        await shop.stop();
      }
    }, 240_000);
  });
});
