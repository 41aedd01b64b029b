import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { type Browser, chromium } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM } from "../../infra/browser.ts";
import { ROOT } from "../../infra/config.ts";
import { readConfig as ordersConfig } from "../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../orders-api/src/server.ts";
import { readConfig as paymentsConfig } from "../../payments/src/config.ts";
import { type PaymentsInstance, startPayments } from "../../payments/src/server.ts";
import { capturingLogger, serviceEnv, tempDb, testPrefix } from "../../test/helpers/shop.ts";

/**
 * The shop in a real browser (Debian's chromium, driven by playwright-core) against the
 * running orders API, Kafka and one payments instance. Screenshots go to test-artifacts/.
 */
const ARTIFACTS = join(ROOT, "test-artifacts");
const prefix = testPrefix("web");
let api: OrdersApi;
let payments: PaymentsInstance;
let server: Server;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  expect(
    existsSync(CHROMIUM),
    "Debian's chromium is needed: apt-get install chromium (.ci/run does it)",
  ).toBe(true);
  const dist = mkdtempSync(join(tmpdir(), "web-dist-"));
  const app = express().use(express.static(dist));
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;

  api = await startOrdersApi(
    ordersConfig(serviceEnv(prefix, { DB_PATH: tempDb("web"), FRONT_ORIGIN: origin })),
    capturingLogger("orders-api"),
  );
  // Longer than one 2 s poll, so that the page surely shows AGUARDANDO_PAGAMENTO first.
  payments = await startPayments(
    paymentsConfig(serviceEnv(prefix, { TEMPO_DECISAO_MS: "2500", INSTANCIA: "caixa-1" })),
    capturingLogger("payments"),
    () => {},
  );

  process.env.VITE_API_URL = api.url;
  await build({
    configFile: join(ROOT, "web/vite.config.ts"),
    logLevel: "warn",
    build: { outDir: dist, emptyOutDir: true },
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  mkdirSync(ARTIFACTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
  await payments?.stop();
  await api?.stop();
}, 60_000);

describe("The shop in a browser", () => {
  it("When a person orders one item under 100.00 and one over, then both show AGUARDANDO_PAGAMENTO and turn PAGO and RECUSADO without a reload", async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.goto(origin);
    await page.evaluate(() => {
      (window as unknown as { marker: string }).marker = "same page";
    });

    async function pedir(item: string, quantidade: string, preco: string, total: RegExp) {
      await page.getByLabel("Cliente").fill("Ana");
      await page.getByLabel("Item").fill(item);
      await page.getByLabel(/Quantidade/).fill(quantidade);
      await page.getByLabel(/Preço unitário/).fill(preco);
      await expect.poll(() => page.getByTestId("total").textContent()).toMatch(total);
      await page.getByRole("button", { name: "Fazer pedido" }).click();
      await page.getByRole("status").filter({ hasText: "criado" }).waitFor();
    }
    await pedir("caneca", "2", "25", /R\$\s*50,00/);
    await pedir("tv", "1", "150", /R\$\s*150,00/);

    const status = (id: number) => page.locator(`tr[data-pedido="${id}"] [data-status]`);
    await status(1)
      .and(page.locator('[data-status="AGUARDANDO_PAGAMENTO"]'))
      .waitFor({ timeout: 5000 });
    await status(2)
      .and(page.locator('[data-status="AGUARDANDO_PAGAMENTO"]'))
      .waitFor({ timeout: 5000 });
    await page.locator('tr[data-pedido="1"] [data-status="PAGO"]').waitFor({ timeout: 20_000 });
    await page.locator('tr[data-pedido="2"] [data-status="RECUSADO"]').waitFor({ timeout: 20_000 });
    await expect
      .poll(() => page.locator('tr[data-pedido="2"]').textContent())
      .toMatch(/limite do cartão de teste/);

    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe(
      "same page",
    );
    expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);

    await page.locator('li[data-cliente="payments-caixa-1"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('li[data-cliente="payments-caixa-1"]').textContent()).toMatch(
      /pedidos-criados \[0, 1, 2\]/,
    );
    // The outbox: nothing waits for Kafka.
    expect(await page.getByTestId("outbox").textContent()).toMatch(
      /Outbox: 0 event\(s\) waiting for Kafka/,
    );
    await page.screenshot({ path: join(ARTIFACTS, "web-1440.png"), fullPage: true });
    await page.close();
  }, 90_000);

  it("When the page is 390 px wide, then it fits without horizontal scrolling of the page", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(origin);
    await page.locator('tr[data-pedido="1"]').waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await page.screenshot({ path: join(ARTIFACTS, "web-390.png"), fullPage: true });
    await page.close();
  }, 60_000);

  it("When a person uses only the keyboard, then Tab reaches each field and the button in order", async () => {
    const page = await browser.newPage();
    await page.goto(origin);
    // Start from the form's heading, as a person clicking into the page would.
    await page.getByRole("heading", { name: "Novo pedido" }).click();
    const reached: string[] = [];
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press("Tab");
      reached.push(
        await page.evaluate(
          () =>
            document.activeElement?.getAttribute("name") ??
            document.activeElement?.textContent ??
            "",
        ),
      );
    }
    expect(reached).toEqual(["cliente", "item", "quantidade", "precoUnitario", "Fazer pedido"]);
    await page.close();
  }, 60_000);
});
