import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokerEnv } from "../helpers/broker.ts";
import { ownRabbit } from "../helpers/own-rabbit.ts";
import { createTestVhost, type TestVhost } from "../helpers/rabbit.ts";
import { http, ServiceProcess } from "../helpers/shop.ts";
import { waitFor } from "../helpers/wait.ts";

/**
 * Fault injection on the broker edition: real processes, the real RabbitMQ. A stream of
 * payment requests while the fault happens; a client that gets no 202/200 repeats the
 * same request with the same key, as the spec prescribes.
 */
let vhost: TestVhost;
const vhosts: TestVhost[] = [];
const running: ServiceProcess[] = [];

beforeAll(async () => {
  vhost = await createTestVhost("faults");
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  for (const v of [vhost, ...vhosts]) await v?.dispose();
});

async function start(label: string, dir: string, env: NodeJS.ProcessEnv) {
  const p = await ServiceProcess.start(label, dir, env);
  running.push(p);
  return p;
}

interface Request {
  pedidoId: string;
  key: string;
  cenario: "APROVAR" | "RECUSAR";
  attempts: number;
}

/** Creates `n` orders, then asks to pay each, retrying with the same key until 202 or 200. */
async function streamOfPayments(ordersUrl: () => string, n: number): Promise<Request[]> {
  const requests: Request[] = [];
  for (let i = 0; i < n; i++) {
    const res = await http<{ id: string }>("POST", `${ordersUrl()}/pedidos`, {
      clienteId: `c${i}`,
      itens: [{ sku: "S", quantidade: 1, precoUnitario: 10 + i }],
    });
    requests.push({
      pedidoId: res.body.id,
      key: randomUUID(),
      cenario: i % 3 === 0 ? "RECUSAR" : "APROVAR",
      attempts: 0,
    });
  }
  await Promise.all(
    requests.map(async (r, i) => {
      await new Promise((res) => setTimeout(res, i * 100));
      for (;;) {
        r.attempts++;
        const res = await http("POST", `${ordersUrl()}/pedidos/${r.pedidoId}/pagamentos`, {
          solicitacaoId: r.key,
          cenario: r.cenario,
        }).catch(() => null); // no answer: the same request again
        if (res?.status === 202 || res?.status === 200) return;
        // Anything but the spec's 503 fails at once, not as a time-out.
        if (res) expect(res.status, `request ${r.key}`).toBe(503);
        await new Promise((res) => setTimeout(res, 500));
      }
    }),
  );
  return requests;
}

interface Historico {
  solicitacoes: { solicitacaoId: string; etapas: { etapa: string }[] }[];
}

/**
 * Every order final; one decision per key; each result applied; nothing lost. Read from
 * state: the orders' timelines (GET /pedidos/{id}/historico) and payments' decisions.
 */
async function expectConsistent(
  orders: ServiceProcess[],
  payments: ServiceProcess,
  requests: Request[],
) {
  const url = orders.at(-1)?.url() as string;
  const applied = async (r: Request) =>
    (await http<Historico>("GET", `${url}/pedidos/${r.pedidoId}/historico`)).body.solicitacoes.some(
      (s) => s.solicitacaoId === r.key && s.etapas.some((e) => e.etapa === "resultado-aplicado"),
    );
  // A refused order is ABERTO before and after: wait for each result to be applied first.
  for (const r of requests) {
    await waitFor(() => applied(r), { timeoutMs: 60_000, what: `the result of ${r.key} applied` });
    const final = r.cenario === "APROVAR" ? "PAGO" : "ABERTO";
    expect(
      (await http<{ status: string }>("GET", `${url}/pedidos/${r.pedidoId}`)).body.status,
      r.pedidoId,
    ).toBe(final);
  }
  const decisoes = (await http<{ solicitacaoId: string }[]>("GET", `${payments.url()}/decisoes`))
    .body;
  for (const r of requests)
    expect(
      decisoes.filter((d) => d.solicitacaoId === r.key),
      r.key,
    ).toHaveLength(1);
}

describe("Fault injection: broker edition", () => {
  it("When RabbitMQ is stopped and restarted while requests flow, then clients retrying with the same key get every order to its final state, decided once", async () => {
    // A RabbitMQ node of this test's own: the machine-wide one is never stopped.
    const rabbit = await ownRabbit("faults-rabbit");
    try {
      const env = (name: string) => ({ ...brokerEnv(vhost, name), ...rabbit.env() });
      const orders = await start("orders", "broker/orders", env("f-orders"));
      const payments = await start("payments", "broker/payments", env("f-payments"));
      const flowing = streamOfPayments(() => orders.url(), 20);
      // Some requests accepted before the outage (their records confirmed in the database).
      await waitFor(
        async () => (await http<unknown[]>("GET", `${payments.url()}/decisoes`)).body.length > 0,
        { what: "a first decision before the outage" },
      );
      await rabbit.stopApp();
      await new Promise((res) => setTimeout(res, 3000)); // the outage, as a person would cause it
      await rabbit.startApp();
      const requests = await flowing;
      // Proof the outage hit: some requests had to be repeated.
      expect(requests.some((q) => q.attempts > 1)).toBe(true);
      await expectConsistent([orders], payments, requests);
    } finally {
      await rabbit.dispose();
    }
  }, 240_000);

  it("When payments is killed -9 after storing a decision and before its ack, mid-stream, then after a restart every order is decided once", async () => {
    // A vhost of its own: the first scenario's services still run in theirs.
    const own = await createTestVhost("faults-2");
    vhosts.push(own);
    const orders = await start("orders-2", "broker/orders", brokerEnv(own, "f2-orders"));
    const paymentsEnv = brokerEnv(own, "f2-payments");
    const slow = await start("payments-slow", "broker/payments", {
      ...paymentsEnv,
      PAUSA_ANTES_DO_ACK_MS: "400",
    });
    const flowing = streamOfPayments(() => orders.url(), 15);
    // A decision stored: with requests flowing and 400 ms before each ack, a delivery is
    // in the payments instance's hands, unacknowledged, when it is killed.
    await waitFor(
      async () => (await http<unknown[]>("GET", `${slow.url()}/decisoes`)).body.length > 0,
      { what: "a first decision stored" },
    );
    await slow.kill();
    const payments = await start("payments-2", "broker/payments", paymentsEnv);
    const requests = await flowing;
    await expectConsistent([orders], payments, requests);
  }, 240_000);
});
