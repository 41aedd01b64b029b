import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import amqp from "amqplib";
import { panelUrl } from "../../infra/rabbitmq/rabbitmq.ts";
import { testConfig } from "./env.ts";
import { createTestVhost, type TestVhost } from "./rabbit.ts";
import { http, ServiceProcess, tempDb } from "./shop.ts";

/** Environment for a broker-edition service under test, in the test's own vhost. */
export function brokerEnv(
  vhost: TestVhost,
  name: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const r = testConfig().rabbit;
  return {
    PORTA: "0",
    HOST: "127.0.0.1",
    DB_PATH: tempDb(name),
    BROKER_HOST: r.host,
    BROKER_PORT: String(r.port),
    BROKER_USER: r.user,
    BROKER_PASSWORD: r.password,
    BROKER_VHOST: vhost.vhost,
    BROKER_PANEL_URL: panelUrl(r),
    BROKER_MONITOR_USER: r.monitor.user,
    BROKER_MONITOR_PASSWORD: r.monitor.password,
    ...extra,
  };
}

/** Messages ready in a queue now (queue.declare passive: not the panel's delayed statistics). */
export async function readyCount(vhost: TestVhost, queue: string): Promise<number> {
  const conn = await amqp.connect(vhost.url);
  try {
    const ch = await conn.createChannel();
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await conn.close();
  }
}

/** Publishes raw bytes to an exchange in the test vhost, as a misbehaving producer would. */
export async function publishRaw(
  vhost: TestVhost,
  exchange: string,
  routingKey: string,
  body: string,
): Promise<void> {
  const conn = await amqp.connect(vhost.url);
  try {
    const ch = await conn.createConfirmChannel();
    ch.publish(exchange, routingKey, Buffer.from(body), {
      contentType: "application/json",
      persistent: true,
    });
    await ch.waitForConfirms();
  } finally {
    await conn.close();
  }
}

/**
 * A TCP proxy in front of RabbitMQ, so that a test can cut one service's connection to the
 * broker (and refuse new ones) without stopping the broker every other test uses.
 */
export class TcpProxy {
  private readonly links = new Set<{ client: Socket; upstream: Socket }>();
  private cut = false;
  private held = false;
  private loseAckOnPublish: (() => void) | null = null;
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /**
   * @param fromClient sees every chunk the client sends, before it is forwarded (to read the
   *   AMQP methods a consumer sends, say).
   * @param protocol what the clients speak, for `loseNextAck` to find a publish in it.
   */
  static async start(
    targetHost: string,
    targetPort: number,
    fromClient?: (chunk: Buffer) => void,
    protocol: "amqp" | "kafka" = "amqp",
  ): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = createServer((client) => {
      if (!proxy || proxy.cut) {
        client.destroy();
        return;
      }
      const self = proxy;
      const upstream = tcpConnect(targetPort, targetHost);
      const link = { client, upstream };
      self.links.add(link);
      let dropReplies = false;
      const methods = protocol === "amqp" ? new AmqpMethods() : new KafkaRequests();
      const publishName = protocol === "amqp" ? "basic.publish" : "produce";
      const end = () => {
        client.destroy();
        upstream.destroy();
        self.links.delete(link);
      };
      for (const s of [client, upstream]) {
        s.on("close", end);
        s.on("error", end);
      }
      if (self.held) {
        client.pause();
        upstream.pause();
      }
      client.on("data", (chunk: Buffer) => {
        fromClient?.(chunk);
        upstream.write(chunk);
        const before = methods.seen.length;
        methods.read(chunk);
        const lose = self.loseAckOnPublish;
        if (lose && methods.seen.slice(before).includes(publishName)) {
          // The publish goes to the broker; what the broker answers never comes back.
          self.loseAckOnPublish = null;
          dropReplies = true;
          setTimeout(end, 200);
          lose();
        }
      });
      upstream.on("data", (chunk: Buffer) => {
        if (!dropReplies) client.write(chunk);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    proxy = new TcpProxy(server, typeof address === "object" && address ? address.port : 0);
    return proxy;
  }

  /** Connections open through the proxy now. */
  get open(): number {
    return this.links.size;
  }

  /** Drops every open connection and refuses new ones: the broker is unreachable. */
  cutConnections(): void {
    this.cut = true;
    for (const { client, upstream } of this.links) {
      client.destroy();
      upstream.destroy();
    }
  }

  /**
   * A black hole: connections stay open but nothing moves either way, new ones included,
   * until `restore()` (what was sent meanwhile then arrives, as after a healed partition).
   */
  blackHole(): void {
    this.held = true;
    for (const { client, upstream } of this.links) {
      client.pause();
      upstream.pause();
    }
  }

  /**
   * The next publish through the proxy (AMQP basic.publish, Kafka Produce) reaches the
   * broker, but the broker's answers (its confirm) are dropped and the connection is cut
   * 200 ms later: an acknowledgement lost on the way back. Resolves when that publish has
   * gone through.
   */
  loseNextAck(): Promise<void> {
    return new Promise((resolve) => {
      this.loseAckOnPublish = resolve;
    });
  }

  restore(): void {
    this.cut = false;
    this.held = false;
    for (const { client, upstream } of this.links) {
      client.resume();
      upstream.resume();
    }
  }

  close(): Promise<void> {
    this.cutConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** What a test gets from emVhostProprio: its vhost, both services' environments, a starter. */
export interface BrokerTestEnv {
  vhost: TestVhost;
  ordersEnv: NodeJS.ProcessEnv;
  paymentsEnv: NodeJS.ProcessEnv;
  /** Starts a broker-edition service as a real process; it is stopped when the test ends. */
  start(
    name: string,
    dir: "broker/orders" | "broker/payments",
    env: NodeJS.ProcessEnv,
  ): Promise<ServiceProcess>;
}

/**
 * Runs a test with the broker edition's services as real processes, in a vhost of its
 * own, so that a queue left stuck by one test cannot fail the next. If the test fails,
 * its error ends with the broker's view of the vhost's queues (ready, unacked, consumers)
 * and alarms. Every process it started is stopped, and the vhost deleted, at the end.
 */
export async function inOwnVhost(
  prefixo: string,
  fn: (a: BrokerTestEnv) => Promise<void>,
): Promise<void> {
  const vhost = await createTestVhost(prefixo);
  const running: ServiceProcess[] = [];
  try {
    await fn({
      vhost,
      ordersEnv: brokerEnv(vhost, "orders"),
      paymentsEnv: brokerEnv(vhost, "payments"),
      async start(name, dir, env) {
        const p = await ServiceProcess.start(name, dir, env);
        running.push(p);
        return p;
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}\n--- broker state of ${vhost.vhost}:\n${await vhost.estado()}`, {
      cause: error,
    });
  } finally {
    await Promise.all(running.map((p) => p.stop()));
    await vhost.dispose();
  }
}

/** An order of the broker edition as its orders service returns it. */
export interface PedidoBroker {
  id: string;
  clienteId: string;
  status: string;
  total: number;
  itens: { sku: string; quantidade: number; precoUnitario: number }[];
}

/** Creates an order through the orders service's API; fails unless the answer is 201. */
export async function createBrokerPedido(
  ordersUrl: string,
  itens = [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }],
): Promise<PedidoBroker> {
  const res = await http<PedidoBroker>("POST", `${ordersUrl}/pedidos`, {
    clienteId: "cli-1",
    itens,
  });
  if (res.status !== 201) throw new Error(`POST /pedidos answered ${res.status}, not 201`);
  return res.body;
}

/** POST /pedidos/{id}/pagamentos with a key and a cenario. */
export const requestPagamento = <T = Record<string, unknown>>(
  ordersUrl: string,
  pedidoId: string,
  solicitacaoId: string,
  cenario = "APROVAR",
) => http<T>("POST", `${ordersUrl}/pedidos/${pedidoId}/pagamentos`, { solicitacaoId, cenario });

/** GET /pedidos/{id}: the order as it is now. */
export const getBrokerPedido = async (ordersUrl: string, pedidoId: string) =>
  (await http<PedidoBroker>("GET", `${ordersUrl}/pedidos/${pedidoId}`)).body;

/**
 * Reads the AMQP 0-9-1 frames a client sends (through TcpProxy's fromClient) and keeps the
 * name of each method frame's class.method, in order: "basic.reject", "basic.ack"...
 */
export class AmqpMethods {
  readonly seen: string[] = [];
  private pending = Buffer.alloc(0);
  private headerRead = false;
  private static readonly NAMES: Record<string, string> = {
    "60.80": "basic.ack",
    "60.90": "basic.reject",
    "60.120": "basic.nack",
    "60.40": "basic.publish",
    "60.20": "basic.consume",
  };

  read = (chunk: Buffer): void => {
    this.pending = Buffer.concat([this.pending, chunk]);
    if (!this.headerRead) {
      if (this.pending.length < 8) return;
      this.pending = this.pending.subarray(8); // "AMQP" 0 0 9 1
      this.headerRead = true;
    }
    // A frame: type (1), channel (2), size (4), payload (size), end 0xCE.
    while (this.pending.length >= 7) {
      const size = this.pending.readUInt32BE(3);
      if (this.pending.length < 8 + size) return;
      if (this.pending[0] === 1) {
        const key = `${this.pending.readUInt16BE(7)}.${this.pending.readUInt16BE(9)}`;
        this.seen.push(AmqpMethods.NAMES[key] ?? key);
      }
      this.pending = this.pending.subarray(8 + size);
    }
  };
}

/**
 * Reads the Kafka requests a client sends (through TcpProxy) and keeps each one's name:
 * "produce" for API key 0, the key as text otherwise. A request: size (4), API key (2), ...
 */
export class KafkaRequests {
  readonly seen: string[] = [];
  private pending = Buffer.alloc(0);

  read = (chunk: Buffer): void => {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 6) {
      const size = this.pending.readInt32BE(0);
      if (this.pending.length < 4 + size) return;
      const key = this.pending.readInt16BE(4);
      this.seen.push(key === 0 ? "produce" : String(key));
      this.pending = this.pending.subarray(4 + size);
    }
  };
}
