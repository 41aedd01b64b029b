import { connect, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { Database } from "@shop/service";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FourServices, startAllFour } from "../../helpers/quatro.ts";
import { countRows, http } from "../../helpers/shop.ts";

/**
 * Issue 14: client input that answered 500. Request framing on all four HTTP services,
 * query parameters, the one money range and the limits of text fields. Every answer is a
 * 4xx with the JSON error body, and nothing is stored for a refused request.
 */
let quatro: FourServices;
let api: FourServices["api"];
let apiDb: string;
let syncPayments: FourServices["syncPayments"];
let brokerOrders: FourServices["brokerOrders"];
let brokerOrdersDb: string;
let brokerPayments: NonNullable<FourServices["brokerPayments"]>;

beforeAll(async () => {
  quatro = await startAllFour("enquadramento");
  ({ api, apiDb, syncPayments, brokerOrders, brokerOrdersDb } = quatro);
  brokerPayments = quatro.brokerPayments as NonNullable<FourServices["brokerPayments"]>;
}, 60_000);

afterAll(async () => {
  for (const s of cruas) s.destroy();
  await quatro?.stop();
});

/** A POST route of each of the four services (the broker payments service has none: any path parses its body first). */
const rotas = () => [
  `${api.url}/pedidos`,
  `${syncPayments.url}/pagamentos`,
  `${brokerOrders.url}/pedidos`,
  `${brokerPayments.url}/decisoes`,
];

const pedido = JSON.stringify({ cliente: "Ana", item: "caneca", quantidade: 2, precoUnitario: 1 });

async function postar(url: string, body: string | Buffer, headers: Record<string, string>) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as { erro?: unknown } };
}

/**
 * The raw sockets still open. A request ends when the service closes its socket (the state
 * waited on); one a service never answers fails its test at the test's own time limit, and
 * is destroyed here after the file, not on a timer of its own.
 */
const cruas = new Set<Socket>();

/** Raw bytes on a socket, for framings fetch refuses to send; the status line's code. */
function cru(url: string, request: string, { meiaVolta = false } = {}): Promise<number | null> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(request);
      // Half-close: the body the request promised never comes.
      if (meiaVolta) socket.end();
    });
    let resposta = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => {
      resposta += chunk;
    });
    socket.on("error", reject);
    cruas.add(socket);
    socket.on("close", () => {
      cruas.delete(socket);
      const m = /^HTTP\/1\.1 (\d{3})/.exec(resposta);
      resolve(m ? Number(m[1]) : null);
    });
  });
}

const pedidosGuardados = () => countRows(apiDb, "SELECT COUNT(*) AS n FROM pedidos");

describe("Issue 14: request framing answers 4xx with the JSON error body on all four services", () => {
  const casos: {
    nome: string;
    headers: Record<string, string>;
    body: () => string | Buffer;
    status: number;
  }[] = [
    {
      nome: "a charset other than UTF-8",
      headers: { "content-type": "application/json; charset=latin1" },
      body: () => pedido,
      status: 415,
    },
    {
      nome: "Content-Encoding br on a body that is not brotli",
      headers: { "content-encoding": "br" },
      body: () => pedido,
      status: 400,
    },
    {
      nome: "an unknown Content-Encoding",
      headers: { "content-encoding": "x-rot13" },
      body: () => pedido,
      status: 415,
    },
    {
      nome: "a corrupt gzip body",
      headers: { "content-encoding": "gzip" },
      body: () => gzipSync(Buffer.from(pedido)).subarray(0, 12),
      status: 400,
    },
    {
      nome: "a gzip body that inflates past 1 MB",
      headers: { "content-encoding": "gzip" },
      body: () => gzipSync(Buffer.from(JSON.stringify({ cliente: "x".repeat(2_000_000) }))),
      status: 413,
    },
  ];

  for (const caso of casos) {
    it(`When a POST has ${caso.nome}, then ${caso.status} with {erro}`, async () => {
      const antes = pedidosGuardados();
      for (const url of rotas()) {
        const res = await postar(url, caso.body(), caso.headers);
        expect(res.status, url).toBe(caso.status);
        expect(typeof res.body.erro, url).toBe("string");
      }
      expect(pedidosGuardados()).toBe(antes);
    });
  }

  it("When a gzip body's Content-Length is shorter than its bytes, then 400", async () => {
    const gz = gzipSync(Buffer.from(pedido));
    for (const url of rotas()) {
      const { host, pathname } = new URL(url);
      const status = await cru(
        url,
        `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length - 4}\r\nConnection: close\r\n\r\n${gz.toString("latin1")}`,
      );
      expect(status, url).toBe(400);
    }
  });

  it("When the body ends before its Content-Length, then the service answers 400 or closes, and keeps serving", async () => {
    for (const url of rotas()) {
      const { host, pathname } = new URL(url);
      const status = await cru(
        url,
        `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"cliente":`,
        { meiaVolta: true },
      );
      // The client has gone: an answer may find no one to read it, but it is never a 5xx.
      expect([400, null], url).toContain(status);
    }
    for (const url of rotas())
      expect((await fetch(url.replace(/\/[^/]*$/, "/saude"))).status).not.toBe(500);
  });
});

describe("Issue 14: query parameters are validated like bodies", () => {
  for (const limite of ["1.5", "-1", "0", "5001", "abc", "1e3"]) {
    it(`When GET /pedidos?limite=${limite}, then 400 naming limite`, async () => {
      const res = await http<{ campos: Record<string, string> }>(
        "GET",
        `${api.url}/pedidos?limite=${encodeURIComponent(limite)}`,
      );
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.campos)).toEqual(["limite"]);
    });
  }

  it("When limite is given twice, then 400", async () => {
    expect((await http("GET", `${api.url}/pedidos?limite=1&limite=2`)).status).toBe(400);
  });

  it("When limite is 1, then at most one order comes back", async () => {
    await http("POST", `${api.url}/pedidos`, JSON.parse(pedido));
    await http("POST", `${api.url}/pedidos`, JSON.parse(pedido));
    const res = await http<unknown[]>("GET", `${api.url}/pedidos?limite=1`);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
  });
});

describe("Issue 14: one money range, from HTTP to the messages and the stores", () => {
  it("When quantidade × precoUnitario is above 1,000,000,000.00, then 400 naming precoUnitario, and nothing is stored", async () => {
    const antes = pedidosGuardados();
    const res = await http<{ campos: Record<string, string> }>("POST", `${api.url}/pedidos`, {
      cliente: "Ana",
      item: "ouro",
      quantidade: 50,
      precoUnitario: 20000001,
    });
    expect(res.status).toBe(400);
    expect(res.body.campos.precoUnitario).toMatch(/limit of 1000000000\.00/);
    expect(pedidosGuardados()).toBe(antes);
  });

  it("When the total is exactly the limit, then the order is created and its event carries it", async () => {
    const res = await http<{ valor: number }>("POST", `${api.url}/pedidos`, {
      cliente: "Ana",
      item: "ouro",
      quantidade: 50,
      precoUnitario: 20000000,
    });
    expect(res.status).toBe(201);
    expect(res.body.valor).toBe(1_000_000_000);
  });

  it("When a broker order's total would be above the limit, then 400 naming itens, and nothing is stored", async () => {
    for (const itens of [
      [{ sku: "A", quantidade: 2, precoUnitario: 999999999.99 }],
      [{ sku: "A", quantidade: 1_000_000, precoUnitario: 100_000_000 }],
      [
        { sku: "A", quantidade: 1, precoUnitario: 999999999.99 },
        { sku: "B", quantidade: 1, precoUnitario: 0.02 },
      ],
    ]) {
      const res = await http<{ campos: Record<string, string> }>(
        "POST",
        `${brokerOrders.url}/pedidos`,
        { clienteId: "ana", itens },
      );
      expect(res.status).toBe(400);
      expect(res.body.campos.itens).toMatch(/limit/);
    }
    expect(countRows(brokerOrdersDb, "SELECT COUNT(*) AS n FROM pedidos")).toBe(0);
  });

  it("When an added item would take the total above the limit, then 400 and the order is unchanged; at the limit, a payment is requested and answered 202", async () => {
    const criado = await http<{ id: string }>("POST", `${brokerOrders.url}/pedidos`, {
      clienteId: "ana",
      itens: [{ sku: "A", quantidade: 1, precoUnitario: 999999999.99 }],
    });
    expect(criado.status).toBe(201);
    const demais = await http("POST", `${brokerOrders.url}/pedidos/${criado.body.id}/itens`, {
      sku: "B",
      quantidade: 1,
      precoUnitario: 0.02,
    });
    expect(demais.status).toBe(400);
    const exato = await http<{ total: number }>(
      "POST",
      `${brokerOrders.url}/pedidos/${criado.body.id}/itens`,
      { sku: "B", quantidade: 1, precoUnitario: 0.01 },
    );
    expect(exato.status).toBe(200);
    expect(exato.body.total).toBe(1_000_000_000);
    const pago = await http("POST", `${brokerOrders.url}/pedidos/${criado.body.id}/pagamentos`, {
      solicitacaoId: crypto.randomUUID(),
      cenario: "APROVAR",
    });
    expect(pago.status).toBe(202);
  });

  it("When a row out of the money range is written to a store directly, then the store refuses it", () => {
    const db = new Database(apiDb);
    try {
      expect(() =>
        db
          .prepare(
            "INSERT INTO pedidos (cliente, item, quantidade, valor_centavos, status, criado_em) VALUES ('a', 'b', 1, ?, 'AGUARDANDO_PAGAMENTO', 'x')",
          )
          .run(100_000_000_001),
      ).toThrow(/money range/);
    } finally {
      db.close();
    }
  });
});

describe("Issue 14: text fields have limits and refuse control characters", () => {
  const base = { cliente: "Ana", item: "caneca", quantidade: 1, precoUnitario: 1 };
  const casos: [string, Record<string, unknown>, string][] = [
    ["an item over 100 characters", { item: "x".repeat(101) }, "item"],
    ["a cliente of 10 kB", { cliente: "x".repeat(10_240) }, "cliente"],
    ["an escape sequence in item", { item: "\u001b[2J\u001b[31mred" }, "item"],
    ["a C1 control (CSI) in item", { item: "a\u009b2J" }, "item"],
    ["a right-to-left override in cliente", { cliente: "Ana\u202Egpj.exe" }, "cliente"],
    ["a lone surrogate in cliente", { cliente: "Ana\ud800" }, "cliente"],
    ["a newline in item", { item: "two\nlines" }, "item"],
  ];
  for (const [nome, campos, campo] of casos) {
    it(`When a POST /pedidos has ${nome}, then 400 naming ${campo}, and nothing is stored`, async () => {
      const antes = pedidosGuardados();
      const res = await http<{ campos: Record<string, string> }>("POST", `${api.url}/pedidos`, {
        ...base,
        ...campos,
      });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.campos)).toContain(campo);
      expect(pedidosGuardados()).toBe(antes);
    });
  }

  it("When a text is exactly 100 characters (emoji count as one), or decomposed, then it is stored NFC", async () => {
    const res = await http<{ item: string; cliente: string }>("POST", `${api.url}/pedidos`, {
      ...base,
      item: "☕".repeat(100),
      cliente: "Jose\u0301",
    });
    expect(res.status).toBe(201);
    expect(res.body.cliente).toBe("José");
  });

  it("When a broker sku or clienteId breaks its limit or carries a control character, then 400 naming it", async () => {
    const res = await http<{ campos: Record<string, string> }>(
      "POST",
      `${brokerOrders.url}/pedidos`,
      {
        clienteId: "x".repeat(101),
        itens: [{ sku: "\u001b]0;pwned\u0007", quantidade: 1, precoUnitario: 1 }],
      },
    );
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.campos).sort()).toEqual(["clienteId", "itens.0.sku"]);
  });
});
