import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "@shop/service";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig as brokerOrdersConfig } from "../../../broker/orders/src/config.ts";
import { type OrdersService, startOrders } from "../../../broker/orders/src/server.ts";
import { readConfig as brokerPaymentsConfig } from "../../../broker/payments/src/config.ts";
import {
  type PaymentsService,
  startPayments as startBrokerPayments,
} from "../../../broker/payments/src/server.ts";
import { createVhost, type ShopVhost } from "../../../harness/vhost.ts";
import { ROOT } from "../../../infra/config.ts";
import { readConfig as ordersConfig } from "../../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../../orders-api/src/server.ts";
import { readConfig as paymentsConfig } from "../../../payments/src/config.ts";
import { type PaymentsInstance, startPayments } from "../../../payments/src/server.ts";
import { brokerEnv } from "../../../test/helpers/broker.ts";
import {
  ARTIFACTS,
  buildFor,
  inFirstViewport,
  inViewSideways,
  launchBrowser,
  layoutProblems,
  problemsOf,
  seriousViolations,
} from "../../../test/helpers/page.ts";
import {
  analyticsCli,
  capturingLogger,
  serviceEnv,
  tempDb,
  uniquePrefix,
} from "../../../test/helpers/shop.ts";
import { serveFolder } from "../../../test/helpers/static-site.ts";
import { inSteps } from "../../../test/helpers/wait.ts";
import { FORM_FIELDS } from "../../src/pedidoFields.tsx";

/**
 * Both editions' pages in a real browser (Debian's chromium, driven by playwright-core),
 * each against its real services: the event-log page against the orders API, Kafka and a
 * payments instance; the broker page against the broker edition's two services on a
 * RabbitMQ vhost of its own. Screenshots go to test-artifacts/ (git-ignored).
 */
const prefix = uniquePrefix("web");
const ordersDb = tempDb("web");
let api: OrdersApi;
let payments: PaymentsInstance;
let vhost: ShopVhost;
let brokerOrders: OrdersService;
let brokerPayments: PaymentsService;
const servers: Server[] = [];
let browser: Browser;
/** Where each edition's page is served (a build of its own, pointed at its service). */
const pages = { eventos: "", broker: "" };

beforeAll(async () => {
  browser = await launchBrowser();
  const dists = {
    eventos: mkdtempSync(join(tmpdir(), "web-")),
    broker: mkdtempSync(join(tmpdir(), "web-broker-")),
  };
  pages.eventos = await serveFolder(servers, dists.eventos);
  pages.broker = await serveFolder(servers, dists.broker);

  api = await startOrdersApi(
    ordersConfig(serviceEnv(prefix, { DB_PATH: ordersDb, FRONT_ORIGIN: pages.eventos })),
    capturingLogger("orders-api"),
  );
  // Longer than one 2 s poll, so that the page surely shows AGUARDANDO_PAGAMENTO first.
  payments = await startPayments(
    paymentsConfig(serviceEnv(prefix, { TEMPO_DECISAO_MS: "2500", INSTANCIA: "caixa-1" })),
    capturingLogger("payments"),
    () => {},
  );
  vhost = await createVhost("web");
  brokerOrders = await startOrders(
    brokerOrdersConfig(brokerEnv(vhost, "web-orders", { FRONT_ORIGIN: pages.broker })),
    capturingLogger("broker-orders"),
  );
  brokerPayments = await startBrokerPayments(
    brokerPaymentsConfig(brokerEnv(vhost, "web-payments")),
    capturingLogger("broker-payments"),
  );
  await buildFor(api.url, dists.eventos);
  await buildFor(brokerOrders.url, dists.broker);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  for (const s of servers) s.close();
  await brokerPayments?.stop();
  await brokerOrders?.stop();
  await vhost?.dispose();
  await payments?.stop();
  await api?.stop();
}, 60_000);

describe("The event-log edition's page", () => {
  it("When a person orders one item under 100.00 and one over, then both show Aguardando pagamento and turn Pago and Recusado without a reload, and the panel shows who holds each partition", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await inSteps(85_000, async (step) => {
      step("the page opened");
      await page.goto(pages.eventos);
      await page.evaluate(() => {
        (window as unknown as { marker: string }).marker = "same page";
      });

      const status = (id: number, s: string) =>
        page.locator(`tr[data-pedido="${id}"] [data-status="${s}"]`);
      /**
       * Each order is seen waiting right after its own creation (the form refreshes the list
       * then), within the 2.5 s before payments decides it. Seen after both were made, the
       * first one had been decided already in a clean clone's run on a slow machine
       * (2026-11-29): filling the second order's form took longer than the decision.
       */
      async function pedir(
        id: number,
        item: string,
        quantidade: string,
        preco: string,
        total: RegExp,
      ) {
        await page.getByLabel("Cliente").fill("Ana");
        await page.getByLabel("Item").fill(item);
        await page.getByLabel(/Quantidade/).fill(quantidade);
        await page.getByLabel(/Preço unitário/).fill(preco);
        await expect.poll(() => page.getByTestId("total").textContent()).toMatch(total);
        await page.getByRole("button", { name: "Fazer pedido" }).click();
        await page.getByRole("status").filter({ hasText: "criado" }).waitFor();
        await status(id, "AGUARDANDO_PAGAMENTO").waitFor({ timeout: 5000 });
      }
      step("order 1 made and seen waiting");
      await pedir(1, "caneca", "2", "25", /R\$\s*50,00/);
      step("order 2 made and seen waiting");
      await pedir(2, "tv", "1", "150", /R\$\s*150,00/);

      step("order 1 Pago, order 2 Recusado");
      await status(1, "PAGO").waitFor({ timeout: 20_000 });
      await status(2, "RECUSADO").waitFor({ timeout: 20_000 });
      await expect
        .poll(() => page.locator('tr[data-pedido="2"]').textContent())
        .toMatch(/limite do cartão de teste/);
      // Dates as a Brazilian reader writes them; amounts in reais.
      expect(await page.locator('tr[data-pedido="1"] time').textContent()).toMatch(
        /^\d{2}\/\d{2}\/\d{4},? \d{2}:\d{2}:\d{2}$/,
      );
      expect(await page.locator('tr[data-pedido="1"]').textContent()).toMatch(/R\$\s*50,00/);

      expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe(
        "same page",
      );
      expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);

      step("the panel's partitions held by caixa-1");
      // caixa-1 holds pedidos-criados's three partitions, drawn in its colour.
      const grupo = `${prefix}pagamentos`;
      for (const p of [0, 1, 2]) {
        await page
          .locator(`[data-grupo="${grupo}"] .particao[data-particao="${p}"][data-dono="caixa-1"]`)
          .waitFor({ timeout: 10_000 });
      }
      expect(await page.getByTestId("outbox").textContent()).toMatch(
        /Outbox: 0 eventos esperando o Kafka/,
      );
      expect(await page.getByTestId("mortas").textContent()).toMatch(/Cartas mortas de/);
      // Issue 34: each order's status and motivo, and each group's lag, in view at 1280×800
      // without scrolling sideways.
      for (const s of [
        'tr[data-pedido="2"] [data-status]',
        'tr[data-pedido="2"] td:nth-child(3)',
        `[data-testid="grupos"] tr[data-grupo="${prefix}pagamentos"] td:nth-child(2)`,
      ]) {
        expect(await inViewSideways(page, s), s).toBe(true);
      }
      step("the picture's arrows, outbox and three confirmations");
      // Issue 56: the picture of the flow draws each partition of pedidos-criados to caixa-1,
      // the outbox's count, and the latest order's three confirmations as they happen.
      const fluxo = page.getByTestId("fluxo");
      for (const p of [0, 1, 2])
        await fluxo
          .locator(`[data-seta="${p}->caixa-1"]`)
          .waitFor({ state: "attached", timeout: 10_000 });
      expect(await page.getByTestId("fluxo-outbox").textContent()).toBe(
        "outbox: 0 eventos esperando o Kafka",
      );
      await expect
        .poll(() => page.getByTestId("onde").textContent(), { timeout: 20_000 })
        .toMatch(/^resultado aplicado: RECUSADO \(decidido por caixa-1\)$/);
      await fluxo
        .locator('[data-confirmacao="commit do offset"][data-feita="true"]')
        .waitFor({ timeout: 20_000 });
      for (const c of ["201", "acks=all"])
        expect(await fluxo.locator(`[data-confirmacao="${c}"]`).getAttribute("data-feita")).toBe(
          "true",
        );
      step("the layout and accessibility checks");
      // Every column of the orders in view at 1280×800 (it was cut after "Qtd."), and nothing
      // else cut either.
      expect(await inViewSideways(page, 'tr[data-pedido="2"] td:last-child')).toBe(true);
      expect(await layoutProblems(page)).toEqual([]);
      // Everything in sight at 1280×800: the form, the latest orders, the picture's partitions.
      for (const s of ["form.card", 'tr[data-pedido="2"]', '[data-testid="fluxo"] svg.salto']) {
        expect(await inFirstViewport(page, s), s).toBe(true);
      }
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, "web-eventos-1280x800.png") });
    });
    await page.close();
  }, 90_000);

  it("When a second payments instance joins, then the panel says who joined and which partitions changed hands, and auditoria shows once it has offsets", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(pages.eventos);
    await page.locator(".atribuicao").first().waitFor();
    const segunda = await startPayments(
      paymentsConfig(serviceEnv(prefix, { TEMPO_DECISAO_MS: "0", INSTANCIA: "caixa-2" })),
      capturingLogger("payments-2"),
      () => {},
    );
    try {
      // One entry when the panel's read saw the join and the new owners together; two
      // ("caixa-2 entrou às …", then "rebalanceamento às …; partição 1 mudou de dono") when
      // a slow rebalance spanned two reads (seen on 2026-11-27, on a machine that ran the
      // suite 2.3 times slower). Both facts must be on the panel either way.
      await expect
        .poll(() => page.getByTestId("rebalanceamentos").textContent(), { timeout: 30_000 })
        .toMatch(
          /caixa-2 entrou às \d{2}:\d{2}:\d{2}(.|\n)*partiç(ão|ões) [\d, e]+ mud(ou|aram) de dono|partiç(ão|ões) [\d, e]+ mud(ou|aram) de dono(.|\n)*caixa-2 entrou às \d{2}:\d{2}:\d{2}/,
        );
      // Issue 56: the picture draws the new member and at least one partition moved to it.
      const hop = page.locator('[data-testid="fluxo"] svg[data-topico="pedidos-criados"]');
      await hop.locator('[data-membro="caixa-2"]').waitFor({ timeout: 10_000 });
      await hop
        .locator('[data-seta$="->caixa-2"]')
        .first()
        .waitFor({ state: "attached", timeout: 10_000 });
    } finally {
      await segunda.stop();
    }
    // A group the spec does not name, with committed offsets on the shop's topics: the
    // analytics CLI run as GRUPO=auditoria.
    const cli = analyticsCli(serviceEnv(prefix).KAFKA_BROKERS as string, prefix, "auditoria");
    execFileSync(process.execPath, cli.args, { env: cli.env, cwd: join(ROOT, "analytics") });
    await page
      .locator(`[data-testid="grupos"] tr[data-grupo="${prefix}auditoria"]`)
      .waitFor({ timeout: 20_000 });
    await page.close();
  }, 90_000);

  it("When the page is 390×844 (a phone), then it stacks with no horizontal overflow and no serious accessibility violation", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const problems = problemsOf(page);
    await page.goto(pages.eventos);
    await page.locator('tr[data-pedido="1"]').waitFor();
    await page.locator(".atribuicao").first().waitFor();
    // Issue 34: the page loads without a console error (its favicon was a 404), and each
    // order's status is in view without scrolling sideways.
    expect(problems).toEqual([]);
    expect(await inViewSideways(page, 'tr[data-pedido="1"] [data-status]')).toBe(true);
    // Issue 56: no sideways scroll, no column or text one word wide, nothing cut, and the
    // picture in view without scrolling sideways.
    await page.locator('[data-testid="fluxo"] [data-seta]').first().waitFor({ state: "attached" });
    expect(await layoutProblems(page)).toEqual([]);
    expect(await inViewSideways(page, '[data-testid="fluxo"] svg.salto')).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "web-eventos-390x844.png"), fullPage: true });
    await page.close();
  }, 60_000);

  it("When a person uses only the keyboard, then Tab reaches each field and the button in order, and Enter sends the order", async () => {
    const page = await browser.newPage();
    await page.goto(pages.eventos);
    await page.getByRole("heading", { name: "Novo pedido" }).click();
    const reached: string[] = [];
    // Each field of the form (web/src/pedidoFields.tsx), then the button; an optional field
    // the test does not know is left blank.
    const fields = Object.keys(FORM_FIELDS);
    const values: Record<string, string> = {
      cliente: "Bia",
      item: "caneca",
      quantidade: "1",
      precoUnitario: "10",
    };
    for (let i = 0; i <= fields.length; i++) {
      await page.keyboard.press("Tab");
      reached.push(
        await page.evaluate(
          () =>
            document.activeElement?.getAttribute("name") ??
            document.activeElement?.textContent ??
            "",
        ),
      );
      const typed = values[fields[i] ?? ""];
      if (typed) await page.keyboard.type(typed);
    }
    expect(reached).toEqual([...fields, "Fazer pedido"]);
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "criado" }).waitFor();
    await page.close();
  }, 60_000);

  it("When the API holds 5,000 orders, then one poll renders a page of them, and the list pages through the rest", async () => {
    const db = new Database(ordersDb);
    const insert = db.prepare(
      "INSERT INTO pedidos (cliente, item, quantidade, valor_centavos, status, motivo, processado_por, criado_em) VALUES (?, ?, 1, 1000, 'PAGO', NULL, 'caixa-1', ?)",
    );
    const now = new Date().toISOString();
    const existing = (db.prepare("SELECT COUNT(*) AS n FROM pedidos").get() as { n: number }).n;
    db.transaction(() => {
      for (let i = existing; i < 5000; i++) insert.run(`cliente ${i}`, `item ${i % 7}`, now);
    })();
    db.close();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(pages.eventos);
    await expect
      .poll(() => page.locator("#pedidos-titulo").textContent(), { timeout: 20_000 })
      .toMatch(/5000/);
    // Three polls after the first: each measured from its answer's arrival to the screen.
    await expect
      .poll(() => page.evaluate(() => performance.getEntriesByName("pedidos:render").length), {
        timeout: 20_000,
      })
      .toBeGreaterThanOrEqual(4);
    const ms = await page.evaluate(() =>
      performance
        .getEntriesByName("pedidos:render")
        .slice(1)
        .map((e) => e.duration),
    );
    console.log(
      `[web] one poll with 5,000 orders reached the screen in ${ms.map((m) => m.toFixed(1)).join(", ")} ms`,
    );
    expect(await page.locator("tbody tr[data-pedido]").count()).toBe(10);
    await page.getByRole("button", { name: "Próxima página" }).click();
    await expect.poll(() => page.getByText(/Página 2 de 500/).count()).toBe(1);
    await page.close();
  }, 60_000);
});

describe("The broker edition's page", () => {
  it("When a person creates an order, asks for its approval, repeats it and sends a conflicting one, then each answer shows with its status and body, beside the order's status, timeline and the queues", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(pages.broker);
    await page.getByRole("heading", { name: "Loja com broker (RabbitMQ)" }).waitFor();
    await page.getByRole("button", { name: "Criar pedido" }).click();
    await page.locator('[data-http="201"]').waitFor();
    await page.getByRole("button", { name: "Solicitar pagamento" }).click();
    await page.locator('[data-http="202"]').first().waitFor();
    await page
      .locator('[data-testid="pedido-broker"] [data-status="PAGO"]')
      .waitFor({ timeout: 20_000 });
    await page.getByRole("button", { name: "Repetir a mesma" }).click();
    await page.locator('[data-http="200"]').waitFor();
    expect(await page.locator('[data-http="200"] pre').textContent()).toMatch(
      /"estado": "APROVADO"/,
    );
    await page.getByRole("button", { name: "Enviar conflitante" }).click();
    await page.locator('[data-http="409"]').waitFor();
    expect(await page.locator('[data-http="409"] pre').textContent()).toMatch(/"mensagem"/);
    await page.locator('li[data-etapa="resultado-aplicado"]').waitFor({ timeout: 10_000 });
    await page.locator('tr[data-fila="pagamentos.solicitacoes"]').waitFor({ timeout: 10_000 });
    // Issue 56: the picture gives the request's three confirmations, each done, and every
    // column of the queue table is in view (it was cut after "Tipo").
    const fluxo = page.getByTestId("fluxo");
    for (const c of ["202", "confirmação do publicador", "ack do consumidor"])
      await fluxo
        .locator(`[data-confirmacao="${c}"][data-feita="true"]`)
        .waitFor({ timeout: 10_000 });
    expect(await page.getByTestId("onde").textContent()).toBe(
      "concluída: o resultado foi aplicado ao pedido",
    );
    expect(
      await inViewSideways(page, 'tr[data-fila="pagamentos.solicitacoes"] td:last-child'),
    ).toBe(true);
    expect(await layoutProblems(page)).toEqual([]);
    for (const s of [
      "form.card",
      '[data-testid="pedido-broker"]',
      '[data-http="409"]',
      '[data-testid="fluxo"] [data-fila="pedidos.resultados"]',
    ]) {
      expect(await inFirstViewport(page, s), s).toBe(true);
    }
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "web-broker-1280x800.png") });
    await page.close();
  }, 90_000);

  it("Issue 34: when orders were made elsewhere (curl, the course's client) before the page opened, then it lists them newest first with status and total, and a click opens one", async () => {
    const made: string[] = [];
    for (const sku of ["LIVRO", "CANETA"]) {
      const r = await fetch(`${brokerOrders.url}/pedidos`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          clienteId: "curl",
          itens: [{ sku, quantidade: 1, precoUnitario: 12.5 }],
        }),
      });
      made.push(((await r.json()) as { id: string }).id);
    }
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(pages.broker);
    const rows = page.locator("tr[data-pedido-broker]");
    await rows.nth(1).waitFor();
    const listed = await rows.evaluateAll((trs) =>
      trs.map((tr) => tr.getAttribute("data-pedido-broker")),
    );
    // Newest first: the second made is above the first.
    expect(listed.indexOf(made[1] as string)).toBeLessThan(listed.indexOf(made[0] as string));
    const first = page.locator(`tr[data-pedido-broker="${made[0]}"]`);
    expect(await first.textContent()).toMatch(/Aberto.*R\$\s*12,50/);
    await first.getByRole("button").click();
    await expect.poll(() => page.getByTestId("pedido-broker").textContent()).toContain(made[0]);
    expect(await inViewSideways(page, `tr[data-pedido-broker="${made[0]}"] [data-status]`)).toBe(
      true,
    );
    await page.close();
  }, 60_000);

  it("When the broker page is 390×844, then it stacks with no horizontal overflow and no serious accessibility violation", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const problems = problemsOf(page);
    await page.goto(pages.broker);
    await page.getByRole("button", { name: "Criar pedido" }).click();
    await page.locator('[data-http="201"]').waitFor();
    await page.locator('tr[data-fila="pagamentos.solicitacoes"]').waitFor({ timeout: 10_000 });
    await page.locator("tr[data-pedido-broker] [data-status]").first().waitFor();
    expect(problems).toEqual([]);
    expect(await inViewSideways(page, "tr[data-pedido-broker] [data-status]")).toBe(true);
    expect(await layoutProblems(page)).toEqual([]);
    expect(await inViewSideways(page, '[data-testid="fluxo"] [data-fila]')).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "web-broker-390x844.png"), fullPage: true });
    await page.close();
  }, 60_000);
});
