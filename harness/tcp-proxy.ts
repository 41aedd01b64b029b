import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

/**
 * A TCP proxy in front of RabbitMQ, so that a test can cut one service's connection to the
 * broker (and refuse new ones) without stopping the broker every other test uses.
 */
export class TcpProxy {
  private readonly links = new Set<{ client: Socket; upstream: Socket }>();
  private cut = false;
  private held = false;
  private loseAckOnPublish: {
    done: (produce: ProduceSeen | null) => void;
    client: string | undefined;
  } | null = null;
  /** Kafka only: every Produce request seen through the proxy, in order, on any connection. */
  readonly produced: ProduceSeen[] = [];
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
        const producedBefore = methods instanceof KafkaRequests ? methods.produced.length : 0;
        methods.read(chunk);
        const produced =
          methods instanceof KafkaRequests ? methods.produced.slice(producedBefore) : [];
        self.produced.push(...produced);
        const lose = self.loseAckOnPublish;
        if (!lose || !methods.seen.slice(before).includes(publishName)) return;
        const target =
          lose.client === undefined
            ? (produced[0] ?? null)
            : produced.find((p) => p.client === lose.client);
        if (lose.client !== undefined && !target) return;
        // The publish goes to the broker; what the broker answers never comes back.
        self.loseAckOnPublish = null;
        dropReplies = true;
        setTimeout(end, 200);
        lose.done(target ?? null);
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
   * gone through, with the Produce request it was (Kafka), or null (AMQP).
   * @param client Kafka only: the next Produce of this client id ("orders-api", "payments-caixa-1").
   */
  loseNextAck(client?: string): Promise<ProduceSeen | null> {
    return new Promise((done) => {
      this.loseAckOnPublish = { done, client };
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

/** A Produce request as the proxy read it: who sent it, and each batch's producer and sequence. */
export interface ProduceSeen {
  at: number;
  /** The request header's client id (a service's Kafka client id: "orders-api", "payments-caixa-1"). */
  client: string;
  batches: {
    topic: string;
    partition: number;
    /** -1 for a producer that is not idempotent. */
    producerId: bigint;
    /** The batch's first sequence number (-1 without idempotence). */
    sequence: number;
    records: number;
  }[];
}

/**
 * Reads the Kafka requests a client sends (through TcpProxy) and keeps each one's name:
 * "produce" for API key 0, the key as text otherwise; and, of each Produce request, who sent
 * it and what it carried (ProduceSeen). A request: size (4), API key (2), API version (2),
 * correlation id (4), client id (2 + n), then its body.
 */
export class KafkaRequests {
  readonly seen: string[] = [];
  readonly produced: ProduceSeen[] = [];
  private pending = Buffer.alloc(0);

  read = (chunk: Buffer): void => {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 6) {
      const size = this.pending.readInt32BE(0);
      if (this.pending.length < 4 + size) return;
      const key = this.pending.readInt16BE(4);
      this.seen.push(key === 0 ? "produce" : String(key));
      if (key === 0) {
        const produce = readProduce(this.pending.subarray(4, 4 + size));
        if (produce) this.produced.push(produce);
      }
      this.pending = this.pending.subarray(4 + size);
    }
  };
}

/**
 * A Produce request of versions 3 to 8 (what kafkajs 2 sends; 9 and later are "flexible"
 * and not read): transactional id, acks, timeout, then per topic and partition a record
 * batch whose header holds the producer id (at byte 43), epoch and first sequence (at 53)
 * and the count of records (at 57). Null for another version or a short request.
 */
export function readProduce(request: Buffer): ProduceSeen | null {
  const version = request.readInt16BE(2);
  if (version < 3 || version > 8) return null;
  let at = 8;
  const string = () => {
    const n = request.readInt16BE(at);
    at += 2;
    if (n < 0) return "";
    const text = request.toString("utf8", at, at + n);
    at += n;
    return text;
  };
  try {
    const client = string();
    string(); // transactional id
    at += 2 + 4; // acks, timeout
    const batches: ProduceSeen["batches"] = [];
    const topics = request.readInt32BE(at);
    at += 4;
    for (let t = 0; t < topics; t++) {
      const topic = string();
      const partitions = request.readInt32BE(at);
      at += 4;
      for (let p = 0; p < partitions; p++) {
        const partition = request.readInt32BE(at);
        const bytes = request.readInt32BE(at + 4);
        const batch = at + 8;
        at = batch + Math.max(bytes, 0);
        if (bytes < 61) continue;
        batches.push({
          topic,
          partition,
          producerId: request.readBigInt64BE(batch + 43),
          sequence: request.readInt32BE(batch + 53),
          records: request.readInt32BE(batch + 57),
        });
      }
    }
    return { at: Date.now(), client, batches };
  } catch {
    return null;
  }
}
