import { randomUUID } from "node:crypto";
import { API_HEADERS, Database } from "@shop/service";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../../../harness/http.ts";
import { type FourServices, startAllFour } from "../../helpers/quatro.ts";
import { countRows, http } from "../../helpers/shop.ts";

/**
 * Hostile input on every HTTP body of both editions: property-based (fast-check), at
 * least 10,000 generated bodies per endpoint (counted: see bombardear). Never a 5xx; nothing
 * stored for an invalid body.
 */
const RUNS = 10_000;
/**
 * Bodies sent at once: a batch of 1 to 128 (about 55 on average under this seed: 172
 * batches sent 9,511), so fast-check runs RUNS / 55 batches and 10% more. Until 2026-11-29
 * the batches were "up to 16" under fast-check's default size, which stops an array at 10
 * elements: 6.3 bodies a batch, some 7,900 an endpoint where the docs said 10,000. Fewer, larger batches also wait less on the
 * event-log API's 201s, each of which waits for Kafka's acknowledgement: the file sends
 * its batches one after another, so its time is its batches' round trips, and beside the
 * other integration files on a busy machine a round trip took 25-190 ms. Up to 32 a batch,
 * that endpoint took 17-131 s and the file 59-312 s in four runs of 2026-12-01 (5.6 s and
 * 23 s alone).
 */
const PARALLEL = 128;
const BATCHES = Math.ceil((RUNS / 55) * 1.1);
let quatro: FourServices;
let api: FourServices["api"];
let apiDb: string;
let syncPayments: FourServices["syncPayments"];
let brokerOrders: FourServices["brokerOrders"];
let brokerDb: string;

beforeAll(async () => {
  // No broker payments service: a payment request stays PENDENTE, so one key opens it.
  quatro = await startAllFour("hostil", { pagamentosBroker: false });
  ({ api, apiDb, syncPayments, brokerOrders, brokerOrdersDb: brokerDb } = quatro);
}, 60_000);

/** Read-only handles on the services' databases, open for the file (see counter). */
const handles: Database[] = [];

afterAll(async () => {
  for (const db of handles) db.close();
  await quatro?.stop();
});

/**
 * Generated values that are sometimes right, mostly wrong in one or many ways: control
 * characters, lone surrogates, bidirectional overrides, strings over 10 kB, look-alikes.
 */
const hostil = fc.constantFrom(
  "\u001b[2J\u001b[31mvermelho",
  "a\u009b2J",
  "Ana\u202Egpj.exe",
  "Ana\ud800",
  "\udc00",
  "linha\nnova",
  "\u0000",
  "Аna", // a Cyrillic А: a look-alike, accepted as typed
  "Jose\u0301",
  "x".repeat(10_241),
  "☕".repeat(101),
);
const texto = fc.oneof(
  fc.string(),
  fc.constant(""),
  fc.constant("   "),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  hostil,
);
const numero = fc.oneof(
  fc.integer({ min: -5, max: 60 }),
  fc.double({ noNaN: false }),
  fc.constantFrom(0, 0.1, 18.9, 1.999, 1e308, -0, 100.01, 20000001, 999999999.99, 1e8, 1e6),
);
const qualquer = fc.oneof(
  texto,
  numero,
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.anything(), { maxLength: 3 }),
  fc.object(),
);
const talvez = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: qualquer });

/** JSON text no JSON.stringify writes: numbers spelled oddly, duplicate keys, __proto__. */
const numeroEscrito = fc.constantFrom(
  "-0",
  "1e308",
  "1E2",
  "18.899999999999999999",
  "18.90000000000000000001",
  "0.1e1",
  "1e-7",
  "100000000000000000000000",
  "NaN",
  "Infinity",
);
const textoCru = (campos: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .tuple(
      fc.dictionary(
        fc.constantFrom(...Object.keys(campos)),
        fc.oneof(
          numeroEscrito,
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
      ),
      fc.constantFrom(...Object.keys(campos)),
      fc.oneof(numeroEscrito, fc.constant('"x"')),
      fc.boolean(),
    )
    .map(([valores, repetida, valor, proto]) => {
      const pares = Object.entries(valores).map(([k, v]) => `${JSON.stringify(k)}:${v}`);
      pares.push(`${JSON.stringify(repetida)}:${valor}`); // a duplicate key, last one wins
      if (proto) pares.push('"__proto__":{"precoUnitario":1,"admin":true}');
      return { __raw: `{${pares.join(",")}}` };
    });

const corpo = (campos: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record(
        Object.fromEntries(Object.entries(campos).map(([k, v]) => [k, talvez(v)])),
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: fc.anything() },
    { weight: 1, arbitrary: fc.string().map((s) => ({ __raw: s })) },
    { weight: 2, arbitrary: textoCru(campos) },
  );

interface Tally {
  byStatus: Map<number, number>;
  /** Bodies sent, shrinking's included. */
  sent: number;
}

const textoDoCorpo = (b: unknown) =>
  typeof b === "object" && b !== null && "__raw" in b
    ? String((b as { __raw: string }).__raw)
    : (JSON.stringify(b) ?? "null");

/**
 * Sends at least RUNS generated bodies, up to PARALLEL at a time (each fast-check run is one
 * batch), and says how many it sent.
 * A 5xx fails the property, and fast-check shrinks the batch to its smallest failing body.
 * `antesDe`/`depoisDe` count what a body stored, so that the property also checks that a
 * body is stored exactly when the answer says so.
 */
async function bombardear(
  url: string,
  arb: fc.Arbitrary<unknown>,
  guardou?: { contar: () => number; sucesso: number },
): Promise<Tally> {
  const byStatus = new Map<number, number>();
  let sent = 0;
  const batch = fc.array(arb, { minLength: 1, maxLength: PARALLEL, size: "max" });
  await fc.assert(
    fc.asyncProperty(batch, async (bodies) => {
      sent += bodies.length;
      const antes = guardou?.contar() ?? 0;
      const statuses = await Promise.all(
        bodies.map(async (b) => (await send("POST", url, textoDoCorpo(b))).status),
      );
      for (const status of statuses) byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      const quinhentos = statuses.filter((s) => s >= 500).length;
      if (quinhentos > 0) throw new Error(`${quinhentos} answer(s) 5xx: ${statuses.join(",")}`);
      if (guardou) {
        const sucessos = statuses.filter((s) => s === guardou.sucesso).length;
        expect(guardou.contar() - antes, "stored exactly when the answer is a success").toBe(
          sucessos,
        );
      }
    }),
    { numRuns: BATCHES, seed: 20261123, endOnFailure: false },
  );
  expect(sent, "generated bodies sent").toBeGreaterThanOrEqual(RUNS);
  return { byStatus, sent };
}

/**
 * A count of rows read through one read-only handle, kept open: countRows opens the database
 * for each count, and the batches count before and after each one (over 1,300 times an
 * endpoint). In WAL mode each count sees every commit made before it.
 */
function counter(path: string, sql: string, ...params: unknown[]): () => number {
  const db = new Database(path, { readonly: true });
  handles.push(db);
  const statement = db.prepare(sql);
  return () => (statement.get(...params) as { n: number }).n;
}

const contar = (t: Tally, status: number) => t.byStatus.get(status) ?? 0;

describe("Hostile HTTP bodies (fast-check, 10,000 cases per endpoint)", () => {
  it("Event-log POST /pedidos: never a 5xx, and exactly the 201s are stored", async () => {
    const pedidos = counter(apiDb, "SELECT COUNT(*) AS n FROM pedidos");
    const t = await bombardear(
      `${api.url}/pedidos`,
      corpo({ cliente: texto, item: texto, quantidade: numero, precoUnitario: numero }),
      { contar: pedidos, sucesso: 201 },
    );
    expect(contar(t, 400)).toBeGreaterThan(RUNS / 2);
    expect(contar(t, 201)).toBeGreaterThan(0);
    expect(pedidos()).toBe(contar(t, 201));
  }, 240_000);

  it("Payments POST /pagamentos (synchronous configuration): never a 5xx, and only valid bodies are decided", async () => {
    const t = await bombardear(
      `${syncPayments.url}/pagamentos`,
      corpo({ pedidoId: numero, valor: numero }),
    );
    const decided = (await http<unknown[]>("GET", `${syncPayments.url}/pagamentos`)).body.length;
    expect(decided).toBe(Math.min(1000, contar(t, 200)));
    expect(contar(t, 400)).toBeGreaterThan(RUNS / 2);
  }, 240_000);

  it("Broker POST /pedidos: never a 5xx, and exactly the 201s are stored", async () => {
    const item = fc.record(
      { sku: texto, quantidade: numero, precoUnitario: numero },
      { requiredKeys: [] },
    );
    const pedidos = counter(brokerDb, "SELECT COUNT(*) AS n FROM pedidos");
    const antes = pedidos();
    const t = await bombardear(
      `${brokerOrders.url}/pedidos`,
      corpo({ clienteId: texto, itens: fc.array(talvez(item), { maxLength: 3 }) }),
      { contar: pedidos, sucesso: 201 },
    );
    expect(pedidos() - antes).toBe(contar(t, 201));
  }, 240_000);

  it("Broker POST /pedidos/{id}/itens: never a 5xx, and exactly the 200s add an item", async () => {
    const { body } = await http<{ id: string }>("POST", `${brokerOrders.url}/pedidos`, {
      clienteId: "c",
      itens: [{ sku: "A", quantidade: 1, precoUnitario: 1 }],
    });
    const itensGuardados = counter(
      brokerDb,
      "SELECT COUNT(*) AS n FROM itens WHERE pedido_id = ?",
      body.id,
    );
    const t = await bombardear(
      `${brokerOrders.url}/pedidos/${body.id}/itens`,
      corpo({ sku: texto, quantidade: numero, precoUnitario: numero }),
      { contar: itensGuardados, sucesso: 200 },
    );
    const itens = (
      await http<{ itens: unknown[] }>("GET", `${brokerOrders.url}/pedidos/${body.id}`)
    ).body.itens.length;
    expect(itens).toBe(1 + contar(t, 200));
  }, 240_000);

  it("Broker POST /pedidos/{id}/pagamentos: never a 5xx, and only a valid body creates a payment request", async () => {
    const { body } = await http<{ id: string }>("POST", `${brokerOrders.url}/pedidos`, {
      clienteId: "c",
      itens: [{ sku: "A", quantidade: 1, precoUnitario: 1 }],
    });
    const uuid = fc.oneof(fc.uuid(), fc.constant(randomUUID()), texto);
    const t = await bombardear(
      `${brokerOrders.url}/pedidos/${body.id}/pagamentos`,
      corpo({
        solicitacaoId: uuid,
        cenario: fc.oneof(fc.constantFrom("APROVAR", "RECUSAR"), texto),
      }),
    );
    const requests = countRows(
      brokerDb,
      "SELECT COUNT(*) AS n FROM solicitacoes WHERE pedido_id = ?",
      body.id,
    );
    // The first valid body opens the request (202); later new keys are 409; repeats of it 202.
    expect(requests).toBe(contar(t, 202) > 0 ? 1 : 0);
    expect(contar(t, 400)).toBeGreaterThan(RUNS / 2);
  }, 240_000);
});

describe("Oversized, mistyped and deeply nested bodies", () => {
  const endpoints = () => [
    `${api.url}/pedidos`,
    `${syncPayments.url}/pagamentos`,
    `${brokerOrders.url}/pedidos`,
  ];

  it("When a body is over 1 MB, then 413", async () => {
    const big = JSON.stringify({ cliente: "x".repeat(1_100_000) });
    for (const url of endpoints()) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: big,
      });
      expect(res.status, url).toBe(413);
    }
  });

  it("When the content type is not JSON, then 415", async () => {
    for (const url of endpoints()) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "cliente=Ana",
      });
      expect(res.status, url).toBe(415);
    }
  });

  it("When the JSON is nested 100,000 levels deep, then 400 or 413, never a crash", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const deepObject = `${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`;
    for (const url of endpoints()) {
      for (const body of [deep, deepObject]) {
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        expect([400, 413], url).toContain(res.status);
      }
    }
    expect((await fetch(`${api.url}/pedidos`)).status).toBe(200);
  });
});

describe("Security headers", () => {
  it("When any API answers JSON, then it sets OWASP's headers for API responses and hides its framework", async () => {
    for (const url of [
      `${api.url}/pedidos`,
      `${syncPayments.url}/saude`,
      `${brokerOrders.url}/pedidos/x`,
    ]) {
      const res = await fetch(url);
      for (const [name, value] of Object.entries(API_HEADERS))
        expect(res.headers.get(name), `${url} ${name}`).toBe(value);
      expect(res.headers.get("content-type"), url).toMatch(/^application\/json/);
      expect(res.headers.get("x-powered-by"), url).toBeNull();
    }
  });

  it("When an API serves its HTML page (/docs), then the page has helmet's whole set: a policy for what it may load", async () => {
    for (const url of [`${api.url}/docs`, `${brokerOrders.url}/docs`]) {
      const res = await fetch(url);
      expect(res.headers.get("content-type"), url).toMatch(/^text\/html/);
      expect(res.headers.get("content-security-policy"), url).toContain("default-src 'self'");
      expect(res.headers.get("cross-origin-opener-policy"), url).toBe("same-origin");
      expect(res.headers.get("referrer-policy"), url).toBe("no-referrer");
      expect(res.headers.get("x-content-type-options"), url).toBe("nosniff");
      expect(res.headers.get("x-powered-by"), url).toBeNull();
    }
  });
});
