import { Agent, request } from "node:http";
import type { Plataforma } from "@shop/contracts";
import { waitFor } from "@shop/service";

/** What a service answered: its status, its body (parsed when it is JSON) and its headers. */
export interface JsonResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * One HTTP exchange with a service of the shop, as a client sends it: JSON in (a string
 * body is sent as it is, for malformed input), JSON out. Plain http goes through node:http
 * (its global agent keeps connections alive, as fetch's does): fetch cost about 1.3 ms of
 * CPU an exchange on the client's side, a fifth of the hostile-bodies file's CPU (profiled
 * on 2026-11-29), and the suite, the lab and the fault scenarios' streams of orders send
 * tens of thousands. Anything else (https) goes through fetch.
 */
export async function send<T = Record<string, unknown>>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const all = { "content-type": "application/json", accept: "application/json", ...headers };
  const payload =
    body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const res = url.startsWith("http:")
    ? await exchange(method, url, all, payload)
    : await fetch(url, {
        method,
        headers: all,
        ...(payload === undefined ? {} : { body: payload }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }).then(async (r) => ({ status: r.status, text: await r.text(), headers: r.headers }));
  let parsed: unknown = res.text;
  try {
    parsed = JSON.parse(res.text);
  } catch {}
  return { status: res.status, body: parsed as T, headers: res.headers };
}

const TIMEOUT_MS = 30_000;

/**
 * The connections kept alive between exchanges, each closed after 1 s unused: well before a
 * server closes one (a Node server keeps an unused one alive for 5 s; the agent's own margin is 1 s before the
 * server's announced timeout). With the global agent's margin alone, a connection the
 * server closed just as the client took it up again answered ECONNRESET on a busy machine,
 * where the client's timer fired late: the hostile bodies' batches, whose unused
 * connections waited seconds between batches, failed so beside the other integration
 * files (2026-12-01).
 */
const AGENT = new Agent({ keepAlive: true, timeout: 1_000 });

/** One request over node:http: its status, text and headers, or an error naming it. */
function exchange(
  method: string,
  url: string,
  headers: Record<string, string>,
  payload: string | undefined,
): Promise<{ status: number; text: string; headers: Headers }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, timeout: TIMEOUT_MS, agent: AGENT }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const h = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) h.set(name, Array.isArray(value) ? value.join(", ") : value);
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString("utf8"),
          headers: h,
        });
      });
    });
    req.on("timeout", () =>
      req.destroy(new Error(`${method} ${url}: no answer in ${TIMEOUT_MS / 1000} s`)),
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** An order of the event-log edition as GET /pedidos answers it. */
export interface PedidoWire {
  id: number;
  cliente: string;
  item: string;
  quantidade: number;
  valor: number;
  status: "AGUARDANDO_PAGAMENTO" | "PAGO" | "RECUSADO";
  processadoPor: string | null;
}

/** Places an order on the event-log orders API: under 100.00 when `n` is even, above when odd. */
export function placeOrder(ordersUrl: string, n: number) {
  return send<PedidoWire & { erro?: string }>("POST", `${ordersUrl}/pedidos`, {
    cliente: `lab-${n}`,
    item: ["caneca", "camiseta", "caderno"][n % 3],
    quantidade: 1 + (n % 2),
    precoUnitario: n % 2 === 0 ? 20 : 75,
  });
}

export async function listOrders(ordersUrl: string): Promise<PedidoWire[]> {
  return (await send<PedidoWire[]>("GET", `${ordersUrl}/pedidos?limite=5000`)).body;
}

/**
 * Which payments instance holds which partition of pedidos-criados, from Kafka's own
 * description of the group (the orders API's GET /plataforma, what the web panel shows).
 */
export async function paymentsAssignment(
  ordersUrl: string,
  group: string,
  topic: string,
): Promise<{ state: string; holders: Map<string, number[]> }> {
  const p = (await send<Plataforma>("GET", `${ordersUrl}/plataforma`)).body;
  const g = p.grupos.find((x) => x.grupo === group);
  const holders = new Map<string, number[]>();
  for (const m of g?.membros ?? []) {
    holders.set(m.clientId.replace(/^payments-/, ""), m.particoes[topic] ?? []);
  }
  return { state: g?.estado ?? "Empty", holders };
}

/**
 * Until `group` is Stable with `count` members that hold the three partitions of `topic`
 * between them (from GET /plataforma, as paymentsAssignment reads it); its last reading.
 */
export const groupSettled = (ordersUrl: string, group: string, topic: string, count: number) =>
  waitFor(
    async () => {
      const a = await paymentsAssignment(ordersUrl, group, topic);
      const held = [...a.holders.values()].flat().sort().join(",");
      return a.state === "Stable" && a.holders.size === count && held === "0,1,2" && a;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `${group} to settle with ${count} members` },
  );

export const describeHolders = (holders: Map<string, number[]>) =>
  [...holders]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([who, ps]) =>
        `${who} com ${ps.length ? `a${ps.length > 1 ? "s" : ""} partiç${ps.length > 1 ? "ões" : "ão"} ${ps.join(", ")}` : "nada"}`,
    )
    .join("; ");

/** A counter a service exports on GET /metrics, for one destination (0 when not counted yet). */
export function metricCounter(url: string, name: string, destino: string): Promise<number> {
  return metricSum(url, name, { destino });
}

/**
 * The sum of a metric's series on a service's GET /metrics whose labels include `labels`
 * (a histogram's `_count` per route and status, say); 0 when none is counted yet.
 */
export async function metricSum(
  url: string,
  name: string,
  labels: Record<string, string>,
  init: RequestInit = {},
): Promise<number> {
  const res = await fetch(`${url}/metrics`, init);
  if (!res.ok) throw new Error(`${url}/metrics answered ${res.status}`);
  const text = await res.text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split("\n")
    .filter((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

/** Waits until GET `url` answers 2xx (a service that has started listening), or fails naming `what`. */
export function untilAnswers(url: string, what: string, timeoutMs = 60_000): Promise<true> {
  return waitFor(
    () =>
      fetch(url).then(
        (r) => r.ok,
        () => false,
      ),
    { timeoutMs, what },
  );
}
