import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

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
   * @param listenHost where the proxy listens: another loopback address (127.0.0.2) makes
   *   the broker look remote to infra, which then does not repair its users.
   */
  static async start(
    targetHost: string,
    targetPort: number,
    fromClient?: (chunk: Buffer) => void,
    protocol: "amqp" | "kafka" = "amqp",
    listenHost = "127.0.0.1",
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
    await new Promise<void>((resolve) => server.listen(0, listenHost, resolve));
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
