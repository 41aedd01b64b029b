import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabStateSchema, type Relato } from "@shop/contracts";
import { HEARTBEAT_MS, SESSION_MS } from "@shop/kafka";
import { waitFor } from "@shop/service";
import type { Browser, Page } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shopConfig, tempDb, uniquePrefix } from "../../../harness/env.ts";
import { untilAnswers } from "../../../harness/http.ts";
import { deleteTopicsWhere, endOffsets } from "../../../harness/kafka.ts";
import { runLogDir } from "../../../harness/logs.ts";
import { ownKafka } from "../../../harness/own-kafka.ts";
import { queryRows } from "../../../harness/process.ts";
import { ROOT } from "../../../infra/config.ts";
import { paths } from "../../../infra/kafka/kafka.ts";
import { freePort } from "../../../infra/ports.ts";
import { groupAlive, type StartedShop, startServices } from "../../../infra/services.ts";
import { groupHolders } from "../../../lab/src/page/readings.ts";
import { type PageLab, pageLab } from "../../../lab/src/page/start.ts";
import { checkSizes, launchBrowser } from "../../../test/helpers/page.ts";
import { serveFolder } from "../../../test/helpers/static-site.ts";

/**
 * Issue 47: the lab on the page, in a real browser (Debian's chromium) against a shop
 * started the way `npm start` starts it (startServices with the page's lab), on a Kafka
 * broker of the test's own (the lab kills it). Each action is clicked on the page; each
 * story's figures are checked against Kafka's group description, the topics and the orders
 * database; each refusal of the control API is tried.
 */
/**
 * The services' and the broker's logs of this file are kept in test-artifacts/logs, as the
 * fault suite's are (harness/logs.ts): its Kafka restart is timed against issue 55's 3 s,
 * and a CI run that misses it must leave the story of where the seconds went.
 */
process.env.SHOP_TEST_LOG_DIR ??= "test-artifacts/logs/lab-page";
/**
 * The lines of the shop this file starts (its services' JSON logs, each with its own time)
 * and of the page's lab, in shop.log beside the broker's: the relay's and the consumers'
 * side of a slow restart.
 */
const shopLog = (line: string) => {
  const dir = runLogDir();
  if (dir) appendFileSync(join(dir, "shop.log"), `${line}\n`);
};
const kafka = ownKafka("lab-page");
const prefix = uniquePrefix("labpage");
const ordersDb = tempDb("lab-page");
const servers: Server[] = [];
let shop: StartedShop<PageLab>;
let browser: Browser;
let page: Page;
let pageOrigin = "";
let ordersUrl = "";
const CONFIRM_MS = 1500;
/** The payment's wait before it decides (the spec's 3 s), shortened: no test here is about it. */
const DECISION_MS = 1000;

const lab = () => shop.lab as PageLab;
const control = (path: string, init: RequestInit = {}, headers: Record<string, string> = {}) =>
  fetch(`${lab().control.url}${path}`, {
    ...init,
    headers: {
      origin: pageOrigin,
      authorization: `Bearer ${lab().control.token}`,
      "content-type": "application/json",
      ...headers,
    },
  });

/** Waits for the story of `acao` to end on the page, and returns it as the control API has it. */
/** The page's picture of the flow's partitions of pedidos-criados (issue 56). */
const picture = {
  locator: (selector: string) =>
    page.locator(`[data-testid="fluxo"] svg[data-topico="pedidos-criados"] ${selector}`),
};

async function storyOf(acao: string, timeout = 90_000): Promise<Relato> {
  await page
    .locator(`details[data-relato="${acao}"]:not([data-resultado="andamento"])`)
    .first()
    .waitFor({ timeout });
  const story = lab()
    .session.state()
    .historico.find((r) => r.acao === acao) as Relato;
  expect(story.resultado, JSON.stringify(story, null, 1)).toBe("ok");
  return story;
}

/** Clicks `acao` and returns its new story (the action may have run before on this page). */
async function runAgain(acao: string, fields: Record<string, string> = {}, timeout = 90_000) {
  const done = page.locator(`details[data-relato="${acao}"]:not([data-resultado="andamento"])`);
  const before = await done.count();
  await click(acao, fields);
  await expect.poll(() => done.count(), { timeout }).toBeGreaterThan(before);
  return storyOf(acao);
}

async function click(acao: string, fields: Record<string, string> = {}) {
  const row = page.locator("li.acao").filter({ has: page.locator(`button[data-acao="${acao}"]`) });
  for (const [name, value] of Object.entries(fields)) {
    const input = row.locator(`#lab-${acao}-${name}`);
    if ((await input.evaluate((e) => e.tagName)) === "SELECT") await input.selectOption(value);
    else await input.fill(value);
  }
  await row.locator(`button[data-acao="${acao}"]`).click();
}

beforeAll(async () => {
  await kafka.start();
  const dist = mkdtempSync(join(tmpdir(), "lab-page-"));
  pageOrigin = await serveFolder(servers, dist);
  const ordersPort = await freePort();
  ordersUrl = `http://127.0.0.1:${ordersPort}`;
  const common = {
    KAFKA_BROKERS: kafka.brokers,
    KAFKA_PREFIXO: prefix,
    HOST: "127.0.0.1",
    TEMPO_DECISAO_MS: String(DECISION_MS),
    LOG_FORMAT: "json",
  };
  const config = { ...shopConfig(), kafka: { ...kafka.settings, cluster: null } };
  shop = await startServices(
    {
      title: "lab-page test",
      needsKafka: true,
      urls: () => ({}),
      services: [
        {
          name: "orders-api",
          dir: "orders-api",
          env: {
            ...common,
            PORTA: String(ordersPort),
            DB_PATH: ordersDb,
            FRONT_ORIGIN: pageOrigin,
            CONFIRMACAO_MS: String(CONFIRM_MS),
          },
        },
        { name: "caixa-1", dir: "payments", env: { ...common, PORTA: "0", INSTANCIA: "caixa-1" } },
      ],
    },
    config,
    shopLog,
    pageLab({
      edition: "eventos",
      config,
      log: shopLog,
      pageOrigins: [pageOrigin],
      shop: {
        kafkaInstance: kafka.instance,
        prefix,
        ordersUrl,
        ordersDb,
        env: common,
        paymentsPort: () => 0,
        decisionMs: DECISION_MS,
        confirmMs: CONFIRM_MS,
      },
    }),
  );
  // The page as production builds it, pointed at this shop and its lab's control API.
  process.env.VITE_API_URL = ordersUrl;
  process.env.VITE_LAB_URL = lab().control.url;
  await build({
    configFile: join(ROOT, "web/vite.config.ts"),
    logLevel: "warn",
    build: { outDir: dist, emptyOutDir: true },
  });
  delete process.env.VITE_LAB_URL;
  await untilAnswers(`${ordersUrl}/pedidos`, "the orders API");
  await waitFor(
    async () =>
      (
        await groupHolders(kafka.brokers, `${prefix}pagamentos`, `${prefix}pedidos-criados`)
      ).byInstance.get("caixa-1")?.length === 3,
    { timeoutMs: 60_000, what: "caixa-1 holding the three partitions" },
  );
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${pageOrigin}/#lab=${lab().control.token}`);
  await page.locator('button[data-acao="iniciar-pagamentos"]').waitFor({ timeout: 30_000 });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await shop?.stop();
  for (const s of servers) s.close();
  await deleteTopicsWhere(kafka.brokers, (t) => t.startsWith(prefix)).catch(() => {});
  await kafka.dispose();
}, 120_000);

describe("Issue 47: the lab on the page (event-log edition), in a real browser", () => {
  it("When the page is opened with the token npm start printed, then the token leaves the address bar and the lab lists the processes npm start started", async () => {
    expect(page.url()).toBe(`${pageOrigin}/`);
    const text = await page.locator("section.laboratorio").textContent();
    expect(text).toContain("orders-api (rodando)");
    expect(text).toContain("caixa-1 (rodando)");
    // What the page reads is the contract's (contracts/src/lab.ts).
    const state = LabStateSchema.parse(await (await control("/laboratorio")).json());
    expect(state.processos.map((p) => p.nome)).toEqual(["orders-api", "caixa-1"]);
  });

  it("When the learner starts caixa-2 from the page, then the panel shows it holding a partition, and the story's count is Kafka's", async () => {
    await click("iniciar-pagamentos", { instancia: "caixa-2" });
    const story = await storyOf("iniciar-pagamentos");
    const holders = await groupHolders(
      kafka.brokers,
      `${prefix}pagamentos`,
      `${prefix}pedidos-criados`,
    );
    expect(holders.byInstance.get("caixa-2")?.length ?? 0).toBeGreaterThan(0);
    await page.locator('.particao[data-dono="caixa-2"]').first().waitFor({ timeout: 10_000 });
    // Issue 56: the picture draws caixa-2 as a member and a partition's line to it.
    await picture.locator('[data-membro="caixa-2"]').waitFor({ timeout: 10_000 });
    await picture
      .locator('[data-seta$="->caixa-2"]')
      .first()
      .waitFor({ state: "attached", timeout: 10_000 });
    expect(story.numeros.segundosAteParticoesMudarem).toBeGreaterThan(0);
    expect(story.numeros.pedidosPerdidos).toBe(0);
    expect(story.depois.join(" ")).toMatch(/caixa-2: \d/);
  });

  it("When the learner stops caixa-2 (as Ctrl-C), then its partitions move to caixa-1 and the panel shows it", async () => {
    await click("parar-pagamentos", { instancia: "caixa-2" });
    const story = await storyOf("parar-pagamentos");
    const holders = await groupHolders(
      kafka.brokers,
      `${prefix}pagamentos`,
      `${prefix}pedidos-criados`,
    );
    expect([...holders.byInstance.keys()]).toEqual(["caixa-1"]);
    expect(holders.byInstance.get("caixa-1")).toEqual([0, 1, 2]);
    await expect
      .poll(() => page.locator('.particao[data-dono="caixa-2"]').count(), { timeout: 10_000 })
      .toBe(0);
    await expect
      .poll(() => picture.locator('[data-membro="caixa-2"]').count(), { timeout: 10_000 })
      .toBe(0);
    expect(story.numeros.segundosAteParticoesMudarem).toBeGreaterThan(0);
    // Issue 55: a graceful leave moves the partitions within the decision in flight + 1 s.
    expect(story.numeros.segundosAteParticoesMudarem).toBeLessThanOrEqual(4);
    console.log(
      `parar-pagamentos: partitions moved ${story.numeros.segundosAteParticoesMudarem} s after SIGTERM`,
    );
    expect(shop.processes.running("caixa-2")).toBeNull();
  });

  it("When the learner kills caixa-2 (kill -9), then its partitions move to caixa-1 once its session ends, by the session + 1 s, and the story says why", async () => {
    await runAgain("iniciar-pagamentos", { instancia: "caixa-2" });
    await page.locator('.particao[data-dono="caixa-2"]').first().waitFor({ timeout: 10_000 });
    // Issue 56: while the group waits for the session, the picture draws caixa-2 silent.
    const silent = picture
      .locator('[data-membro="caixa-2"][data-silencioso]')
      .waitFor({ state: "attached", timeout: SESSION_MS + 5000 });
    const story = await runAgain("matar-pagamentos", { instancia: "caixa-2" }, 60_000);
    await silent;
    // The story ends when Kafka's group shows the move; the picture, at its next poll (2 s).
    await expect
      .poll(() => picture.locator('[data-membro="caixa-2"]').count(), { timeout: 5_000 })
      .toBe(0);
    const holders = await groupHolders(
      kafka.brokers,
      `${prefix}pagamentos`,
      `${prefix}pedidos-criados`,
    );
    expect(holders.byInstance.get("caixa-1")).toEqual([0, 1, 2]);
    const moved = story.numeros.segundosAteParticoesMudarem as number;
    const gone = story.numeros.segundosAteSairDoGrupo as number;
    // For the run's record, as the Kafka return's figures below.
    console.log(
      `matar-pagamentos: caixa-2 out of the group ${gone} s after the kill, its partitions moved ${moved} s after the kill`,
    );
    // The fault hit: caixa-2 said nothing, so the group waited for its session to end
    // (counted from its last heartbeat, up to half a second before the kill).
    expect(gone).toBeGreaterThanOrEqual((SESSION_MS - HEARTBEAT_MS) / 1000);
    // Issue 55: the partitions move by the session's end + 1 s. The session's end is
    // Kafka's: the coordinator counts it from the last heartbeat it processed, which a busy
    // broker processes late. A CI run of 2026-12-02 read the move 7.6 s after the kill
    // against a 7 s bound, of which the coordinator's removal took 7.0 s (its log) and the
    // move after it 0.6 s. So the shop's part, the move after the removal, is held to 1 s,
    // and Kafka's part only to the session + 2 s (a session of 10 s, as before issue 55,
    // fails it).
    expect(moved - gone).toBeLessThanOrEqual(1);
    expect(gone).toBeLessThanOrEqual(SESSION_MS / 1000 + 2);
    expect(story.depois.join(" ")).toContain(`a sessão expira (${SESSION_MS / 1000},0 s`);
  });

  it("When the learner sends a poison record, then it reaches the dead-letter topic and the panel's dead-letter count", async () => {
    await click("registro-veneno");
    const story = await storyOf("registro-veneno");
    const letters = [
      ...(await endOffsets(kafka.brokers, `${prefix}pedidos-criados.dlq`)).values(),
    ].reduce((a, b) => a + b, 0);
    expect(letters).toBe(1);
    expect(story.numeros.cartasMortasNovas).toBe(1);
    await expect
      .poll(() => page.locator('[data-testid="mortas"]').textContent(), { timeout: 10_000 })
      .toMatch(/1 em .*pedidos-criados\.dlq/);
    await page
      .locator('[data-testid="fluxo"] [data-morta="pedidos-criados.dlq"][data-cartas="1"]')
      .waitFor({ timeout: 10_000 });
  });

  it("When the learner replays the analytics in a new group, then it reads from offset 0 to the end, tells it in pt-BR, and the picture lists the group with its lag at 0", async () => {
    const total = async () =>
      [
        ...(await endOffsets(kafka.brokers, `${prefix}pedidos-criados`)).values(),
        ...(await endOffsets(kafka.brokers, `${prefix}pagamentos-resultados`)).values(),
      ].reduce((a, b) => a + b, 0);
    const before = await total();
    await click("replay");
    const story = await storyOf("replay", 60_000);
    const read = story.numeros.registrosLidos as number;
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThanOrEqual(await total());
    // Issue 56: the CLI's own English lines stay in its log, out of the story.
    expect([...story.linhas, ...story.depois].join(" ")).not.toMatch(/records|group /);
    expect(story.depois.join(" ")).toMatch(/leu \d+ registros do offset 0/);
    await page
      .locator('[data-testid="fluxo"] [data-leitor^="auditoria-"][data-lag="0"]')
      .first()
      .waitFor({ timeout: 20_000 });
  }, 90_000);

  it("When the learner kills Kafka, places a burst of orders and starts Kafka again, then every order ends PAGO or RECUSADO and the story's figures are the orders database's", async () => {
    await click("matar-kafka");
    await storyOf("matar-kafka");
    await click("rajada", { quantidade: "4" });
    const burst = await storyOf("rajada", 60_000);
    expect(burst.numeros.respondidos500).toBe(4);
    // Issue 56: the picture's outbox rises with the orders Kafka has not acknowledged.
    await expect
      .poll(() => page.getByTestId("fluxo-outbox").textContent(), { timeout: 10_000 })
      .toBe("outbox: 4 eventos esperando o Kafka");
    await click("iniciar-kafka");
    // While it runs the page greys the buttons out, and a second request from the page
    // (one sent before the page saw it running) is refused with what is running.
    await page
      .locator('details[data-relato="iniciar-kafka"][data-resultado="andamento"]')
      .waitFor();
    expect(await page.locator('button[data-acao="rajada"]').isDisabled()).toBe(true);
    const second = await page.evaluate(async (url) => {
      const r = await fetch(`${url}/laboratorio/acoes/rajada`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${sessionStorage.getItem("laboratorio-token")}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ quantidade: 1 }),
      });
      return { status: r.status, body: (await r.json()) as { mensagem: string } };
    }, lab().control.url);
    expect(second.status).toBe(409);
    expect(second.body.mensagem).toMatch(/Já há uma ação em andamento: «Iniciar o Kafka»/);
    const story = await storyOf("iniciar-kafka", 180_000);
    const rows = queryRows<{ status: string; n: number }>(
      ordersDb,
      "SELECT status, COUNT(*) AS n FROM pedidos GROUP BY status",
    );
    expect(rows.find((r) => r.status === "AGUARDANDO_PAGAMENTO")).toBeUndefined();
    expect(rows.reduce((n, r) => n + r.n, 0)).toBe(4);
    // The broker started again as the test had started it, short-lived (infra/kafka/kafka.ts,
    // startFlags): with the full compiler and G1 it took 14 s to answer under the suite's load.
    const pid = readFileSync(paths(kafka.instance).pid, "utf8").trim();
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")).toContain(
      "-XX:TieredStopAtLevel=1",
    );
    const outbox = queryRows<{ criado_em: string; enviado_em: string }>(
      ordersDb,
      "SELECT criado_em, enviado_em FROM outbox",
    );
    const late = outbox.filter(
      (r) => Date.parse(r.enviado_em) - Date.parse(r.criado_em) > CONFIRM_MS,
    );
    expect(story.numeros.pedidosDuranteQueda).toBe(4);
    expect(story.numeros.respondidos500).toBe(late.length);
    expect(story.numeros.publicadosPeloOutboxDepois).toBe(4);
    expect(story.numeros.pedidosPerdidos).toBe(0);
    expect(story.numeros.decididosDuasVezes).toBe(0);
    expect(story.numeros.primeiraDecisaoS).toBeGreaterThan(
      story.numeros.kafkaRespondeuEmS as number,
    );
    // Issue 55: the shop resumes within 3 s of Kafka's answer (the relay publishes again),
    // and the first result is applied within 3 s of it too, not counting the payment's own
    // wait before it decides (TEMPO_DECISAO_MS, the spec's 3 s, 1 s here): that wait is a
    // rule the shop keeps, not a delay it could shorten, and the story tells it apart ("1,0 s
    // disso é a espera do pagamento"). Clean-clone runs of 2026-11-28 read 2.1-3.6 s in all
    // with consumers retrying every second, 1.0 and 1.6 s every half second
    // (libs/kafka/src/consumer.ts, consumerConfig); one of 2026-11-29, on a machine half as
    // fast (the same head's .ci/run took 718 s against 330-342 s on that morning's earlier
    // machine), 3.1 s in all: the relay 1.0 s, the decision 1 s, the consumers the rest.
    // The relay read 3.4 s in a CI run of 2026-12-02: the shop's first order came during the
    // outage, so the relay's producer asked for its id after the restart, and the broker
    // answered "the coordinator is loading" until it had ids. It takes its id at start since
    // (Publisher.connect; orders-api/test/integration/kafka-down.test.ts counts the asks).
    const resumed = story.numeros.relayRetomouS as number;
    expect(resumed).toBeGreaterThanOrEqual(0);
    expect(resumed).toBeLessThanOrEqual(3);
    const afterAnswer =
      (story.numeros.primeiraDecisaoS as number) - (story.numeros.kafkaRespondeuEmS as number);
    // The story's figures where it is slow: Kafka's answer, the group stable, the relay back.
    expect(afterAnswer - DECISION_MS / 1000, JSON.stringify(story.numeros)).toBeLessThanOrEqual(3);
    expect(story.depois.join(" ")).toMatch(/o relay publicou de novo em \d+,\d s/);
    // For the run's record: where the seconds after Kafka's answer went.
    const { kafkaRespondeuEmS, grupoEstavelS, relayRetomouS, primeiraDecisaoS } = story.numeros;
    console.log(
      `iniciar-kafka: ${JSON.stringify({ kafkaRespondeuEmS, grupoEstavelS, relayRetomouS, primeiraDecisaoS })}`,
    );
  }, 240_000);

  it("When the learner opens an order's timeline, then each step names the code that did it (file and function)", async () => {
    await page.getByRole("button", { name: "Abrir o histórico do pedido 1", exact: true }).click();
    const created = page.locator('li[data-etapa="criado"] [data-codigo]');
    await created.waitFor({ timeout: 10_000 });
    expect(await created.textContent()).toContain("orders-api/src/pedidos.ts · createPedido");
    await page
      .locator('li[data-etapa="resultado-aplicado"] [data-codigo]')
      .waitFor({ timeout: 10_000 });
    expect(
      await page.locator('li[data-etapa="resultado-aplicado"] [data-codigo]').textContent(),
    ).toContain("applyResultado");
  });
});

describe("Issue 47: what the lab's control API refuses, each with a sentence", () => {
  it("When anything but 127.0.0.1 is asked, then nothing answers: the control API listens on loopback only", () => {
    const address = lab().control.server.address();
    expect(typeof address === "object" && address?.address).toBe("127.0.0.1");
  });

  it("When a request comes without Origin (another local process, curl), then it is refused 403", async () => {
    const res = await fetch(`${lab().control.url}/laboratorio`, {
      headers: { authorization: `Bearer ${lab().control.token}` },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { mensagem: string }).mensagem).toMatch(/sem Origin/);
  });

  it("When another web page's Origin comes, even with the token, then it is refused 403 and nothing starts", async () => {
    const res = await control(
      "/laboratorio/acoes/iniciar-pagamentos",
      { method: "POST", body: JSON.stringify({ instancia: "caixa-3" }) },
      { origin: "http://evil.example" },
    );
    expect(res.status).toBe(403);
    expect(((await res.json()) as { erro: string }).erro).toBe("origem-recusada");
    expect(shop.processes.running("caixa-3")).toBeNull();
  });

  it("When another web page in the browser tries to reach the control API, then the browser's preflight is refused and nothing starts", async () => {
    const other = await serveFolder(servers, mkdtempSync(join(tmpdir(), "evil-")));
    const evil = await browser.newPage();
    await evil.goto(`${other}/`).catch(() => {});
    const outcome = await evil.evaluate(
      async ([url, token]) => {
        try {
          const r = await fetch(`${url}/laboratorio/acoes/iniciar-pagamentos`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ instancia: "caixa-3" }),
          });
          return `answered ${r.status}`;
        } catch {
          return "blocked";
        }
      },
      [lab().control.url, lab().control.token] as const,
    );
    await evil.close();
    expect(outcome).toBe("blocked");
    expect(shop.processes.running("caixa-3")).toBeNull();
  });

  it("When the token is missing or wrong, then it is refused 401, saying where the right one is", async () => {
    const missing = await control("/laboratorio", {}, { authorization: "" });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { mensagem: string }).mensagem).toMatch(/#lab=/);
    const wrong = await control("/laboratorio", {}, { authorization: "Bearer não-é-ele" });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { erro: string }).erro).toBe("token-recusado");
  });

  it("When the Host is not 127.0.0.1 or localhost (a DNS-rebinding page), then it is refused 403", async () => {
    const { request } = await import("node:http");
    const url = new URL(lab().control.url);
    const status = await new Promise<number>((resolve, reject) => {
      request(
        {
          host: "127.0.0.1",
          port: url.port,
          path: "/laboratorio",
          headers: {
            host: `evil.example:${url.port}`,
            origin: pageOrigin,
            authorization: `Bearer ${lab().control.token}`,
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
        .on("error", reject)
        .end();
    });
    expect(status).toBe(403);
  });

  it("When a process npm start did not start is named, then it is refused with a sentence, and no other process is touched", async () => {
    const res = await control("/laboratorio/acoes/parar-pagamentos", {
      method: "POST",
      body: JSON.stringify({ instancia: "caixa-3" }),
    });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { mensagem: string }).mensagem).toMatch(
      /caixa-3 não foi iniciado por este npm start/,
    );
    const bad = await control("/laboratorio/acoes/matar-pagamentos", {
      method: "POST",
      body: JSON.stringify({ instancia: "1234" }),
    });
    expect(bad.status).toBe(400);
    expect(shop.processes.running("caixa-1")).not.toBeNull();
  });

  it("When the Kafka that answers was not started by this checkout's infra, then stopping it is refused", async () => {
    const other = pageLab({
      edition: "eventos",
      config: { ...shopConfig(), kafka: { ...kafka.settings, cluster: null } },
      log: () => {},
      pageOrigins: [pageOrigin],
      shop: { kafkaInstance: "not-this-checkouts", prefix, ordersUrl, ordersDb },
    });
    const theirs = await other(shop.processes);
    try {
      const outcome = await theirs.session.begin("matar-kafka", {});
      expect("status" in outcome && outcome.status).toBe(409);
      expect("mensagem" in outcome && outcome.mensagem).toMatch(
        /não foi iniciado pela infra deste checkout/,
      );
    } finally {
      await theirs.close();
    }
  });

  it("When an unknown action is asked, then it is refused 404 naming the ones there are", async () => {
    const res = await control("/laboratorio/acoes/apagar-tudo", { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { mensagem: string }).mensagem).toMatch(/iniciar-pagamentos/);
  });
});

describe("Issue 56: the page at a desktop's and a phone's size, with what the lab left on it", () => {
  it("When three payments instances hold the partitions and 20 orders are listed, then at 1280×800 and 390×844 nothing is cut, no column or lab description is one word wide, and the platform panel's tables fit inside its column", async () => {
    // Issue 56: the sizes checked with data present, as a learner has it after the lab.
    const started = ["caixa-2", "caixa-3"].filter((i) => !shop.processes.running(i));
    for (const instancia of started) await runAgain("iniciar-pagamentos", { instancia });
    try {
      const picture = page.getByTestId("fluxo").locator('svg[data-topico="pedidos-criados"]');
      await expect
        .poll(() => picture.locator("[data-membro]").count(), { timeout: 30_000 })
        .toBeGreaterThanOrEqual(3);
      const listed = () => queryRows(ordersDb, "SELECT id FROM pedidos").length;
      for (let i = listed(); i < 20; i++)
        await fetch(`${ordersUrl}/pedidos`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            cliente: `Cliente ${i}`,
            item: "caneca",
            quantidade: 1,
            precoUnitario: 10 + i,
          }),
        });
      expect(listed()).toBeGreaterThanOrEqual(20);
      // The page's count (its heading, "Pedidos (N)") caught up with the database.
      await expect
        .poll(
          async () =>
            Number(
              /\((\d+)\)/.exec((await page.locator("#pedidos-titulo").textContent()) ?? "")?.[1],
            ),
          { timeout: 10_000 },
        )
        .toBeGreaterThanOrEqual(20);
      await checkSizes(page, "lab-eventos");
    } finally {
      // The instances this test started leave as they came, for the tests after it that
      // count on caixa-3 not running (a refused request must not start it).
      for (const instancia of started) await runAgain("parar-pagamentos", { instancia });
    }
    const widths = await page.evaluate(() =>
      [...document.querySelectorAll(".plataforma .rolagem")].map((e) => ({
        table: e.getAttribute("aria-label"),
        extra: e.scrollWidth - e.clientWidth,
        headers: [...e.querySelectorAll("th")].map((th) => th.textContent).join(" | "),
      })),
    );
    expect(widths.length).toBeGreaterThan(0);
    for (const w of widths) expect(w.extra, JSON.stringify(w)).toBeLessThanOrEqual(1);
    // Four of the lab's actions (two instances started, two stopped, each a service's start
    // or graceful leave, up to runAgain's 90 s) and two page sizes: not the 60 s of a test
    // doing one thing, which a CI run under the suite's load overran.
  }, 240_000);
});

describe("Issue 47: nothing the lab started outlives npm start", () => {
  it("When npm start stops (Ctrl-C), then every process it started, the ones the page started included, has exited", async () => {
    // An experiment runs from the page, its lines shown as they come; npm start stops under it.
    const experiment = await lab().session.begin("experimento", { nome: "poison" });
    expect("status" in experiment).toBe(false);
    await waitFor(
      () =>
        lab()
          .session.state()
          .emAndamento?.linhas.some((l) => l.includes("== poison")),
      { timeoutMs: 90_000, what: "the experiment's first lines on the page's story" },
    );
    expect(shop.processes.running("lab-poison")).not.toBeNull();
    // caixa-2, started from the page earlier, is among what npm start owns.
    expect(shop.processes.all().map((p) => p.name)).toContain("caixa-2");
    await shop.stop();
    for (const p of shop.processes.all()) {
      expect(p.child.exitCode !== null || p.child.signalCode !== null, p.name).toBe(true);
      expect(() => process.kill(p.child.pid as number, 0), p.name).toThrow();
      // What it started too (the experiment's services): its whole process group is gone.
      await waitFor(() => !groupAlive(p.child), {
        timeoutMs: 15_000,
        what: `${p.name}'s process group to be gone`,
      });
    }
  }, 180_000);
});
