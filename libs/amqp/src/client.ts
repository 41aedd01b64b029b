import { randomUUID } from "node:crypto";
import { TOPOLOGY } from "@shop/contracts";
import {
  type Logger,
  MESSAGING,
  metrics,
  readSettingFile,
  startProducerSpan,
  untrustedCertificate,
  withTimeLimit,
} from "@shop/service";
import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
} from "amqplib";
import { declareTopology } from "./topology.ts";
import { amqpUrls, type BrokerAddress } from "./url.ts";

/**
 * On a cluster, how long a publish waits for its confirm before the same message is sent
 * again on a fresh channel (AmqpClient.publish). A channel opened in the second after a
 * quorum queue's leader died still sends to the dead leader, and RabbitMQ 3.10 confirmed
 * what it sent 4.1 s later, although a new leader had been elected 1.1 s after the kill
 * (the failover experiment's logs): with the spec's 5 s wait, clients were answered 503
 * (issue 55). A fresh channel asks for the queue's leader anew.
 */
export const RESEND_AFTER_MS = 1_500;

/**
 * Settles as `primary` does, except that, when it is still pending after `afterMs`,
 * `second()` is started too and its success is taken as well. A failure of the second is
 * ignored: the primary's outcome decides then.
 */
export function firstConfirmed(
  primary: Promise<void>,
  second: () => Promise<void>,
  afterMs: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (!settled) second().then(resolve, () => {});
    }, afterMs);
    primary.then(resolve, reject).finally(() => {
      settled = true;
      clearTimeout(timer);
    });
  });
}

/** host:port of an AMQP URL, for the log (never its credentials). */
const nodeOf = (url: string) => new URL(url).host;

/** Why a publication was not taken over by the broker. */
export type PublishFailureReason =
  | "sem-rota"
  | "nack"
  | "sem-confirmacao"
  | "broker-inacessivel"
  | "broker-bloqueado";

/**
 * A publication a node's loss explains: the node could not be reached, its channel closed
 * before the confirm (amqplib's "channel closed", or "Channel closed" from a publish on a
 * channel already closed), or the broker nacked it (it did not take the message). Never a
 * message returned unrouted, nor one still unconfirmed: that is the time limit's to judge.
 * Worth a try on another node.
 */
function lostOnTheWay(error: unknown): boolean {
  if (error instanceof PublishFailed)
    return error.motivo === "broker-inacessivel" || error.motivo === "nack";
  const message = error instanceof Error ? error.message : "";
  return /channel closed|connection closed/i.test(message);
}

export class PublishFailed extends Error {
  constructor(
    readonly motivo: PublishFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface ChannelConsumer {
  queue: string;
  /** Unacknowledged messages per consumer (basic.qos with global false). */
  prefetch: number;
  /** Consumers on the queue, all on this one channel (default 1). */
  consumers?: number;
  onMessage(ch: Channel, msg: ConsumeMessage): Promise<void>;
}

/** A queue as RabbitMQ counts it at a passive declare (AmqpClient.countQueues). */
export interface QueueCount {
  ready: number;
  consumers: number;
}

export interface AmqpClientOptions {
  /** A node's URL, or a cluster's: each connection attempt takes the next in turn. */
  url: string | string[];
  log: Logger;
  /** Declares exchanges, queues and bindings on every (re)connection. */
  topology: (ch: Channel) => Promise<void>;
  connectTimeoutMs?: number;
  /** With amqps:// URLs: the CA file to trust (BROKER_CA_FILE); null: the system's CAs. */
  caFile?: string | null;
  /**
   * While RabbitMQ blocks the connection (a disk or memory alarm), refuse a publish at once
   * (PublishFailed "broker-bloqueado") rather than wait out its time limit: for a publisher
   * that answers a client, who repeats with its key (the orders service). Off for a
   * consumer's handler (payments), whose failed tries count towards `.erros`: it waits for
   * the confirm as before.
   */
  refuseWhileBlocked?: boolean;
}

/**
 * A connection problem no reconnection can cure, said in terms of the setting to fix:
 * RabbitMQ refused the user or the vhost, or its certificate is not one the CA file vouches
 * for. Null for anything else (a node that is down): those are retried.
 */
export function securityProblem(error: unknown): Error | null {
  const e = error as { message?: string; code?: string };
  const message = e?.message ?? String(error);
  // amqplib: "Handshake terminated by server: 403 (ACCESS-REFUSED)"; not any "403", which
  // a port in "connect ECONNREFUSED 127.0.0.1:40397" also holds.
  if (/ACCESS.REFUSED|: 403 \(/.test(message))
    return new Error(
      `RabbitMQ refused the connection (BROKER_USER, BROKER_PASSWORD, BROKER_VHOST): ${message}`,
      { cause: error },
    );
  if (untrustedCertificate(error))
    return new Error(
      `RabbitMQ's TLS certificate is not trusted (BROKER_CA_FILE names the CA that signed it): ${message}`,
      { cause: error },
    );
  return null;
}

/**
 * Why no connection to RabbitMQ could be made, said for a person: where, and what to
 * check. For the command-line tools (dlq, infra, lab, bench), which end on it instead of a
 * stack trace.
 */
export function rabbitProblem(
  r: Pick<BrokerAddress, "host" | "port" | "vhost" | "user">,
  error: unknown,
): string {
  const message = error instanceof Error ? error.message : String(error);
  const where = `RabbitMQ at ${r.host}:${r.port}`;
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|timed? ?out/i.test(message))
    return `${where} cannot be reached (${message}): is it running? npm run infra -- rabbitmq start`;
  // The broker closes the handshake instead of opening the vhost (amqplib says only that).
  if (/NOT_ALLOWED|vhost|Expected ConnectionOpenOk/i.test(message))
    return `${where} has no vhost "${r.vhost}" that user ${r.user} may use (BROKER_VHOST; npm run setup creates the shop's)`;
  const security = securityProblem(error);
  if (security) return `${where}: ${security.message}`;
  return `${where}: ${message}`;
}

/** amqplib's socket options for a broker's TLS settings: the CA to trust, if one is named. */
export function tlsSocketOptions(caFile: string | null | undefined): { ca?: string[] } {
  return caFile ? { ca: [readSettingFile("BROKER_CA_FILE", caFile)] } : {};
}

/**
 * One AMQP connection with a confirm channel for publishing and one channel per queue's
 * consumers.
 * Publishing connects on demand, so that a broker that was down is used again as soon as
 * it is back; consumers are re-established by a reconnect loop.
 */
export class AmqpClient {
  private conn: ChannelModel | null = null;
  private pub: ConfirmChannel | null = null;
  private connecting: Promise<ConfirmChannel> | null = null;
  private readonly returned = new Set<string>();
  private readonly consumers: ChannelConsumer[] = [];
  private readonly active = new Map<ChannelConsumer, ChannelModel>();
  /** Each consumer's channel and consumer tags on the current connection, for cancelling. */
  private readonly tags = new Map<ChannelConsumer, { ch: Channel; tags: string[] }>();
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closing = false;
  /** The node the next connection attempt goes to: after a connection is lost, the next one. */
  private nextNode = 0;
  /**
   * Why RabbitMQ blocks this connection's publishes (its connection.blocked notification:
   * a disk or memory alarm, on any node of a cluster), or null. While it holds, with
   * refuseWhileBlocked, a publish is refused at once (publishOnce) instead of waiting out
   * its time limit for a confirm that cannot come: the client hears 503 in milliseconds and
   * repeats with its key.
   */
  private blockedBy: string | null = null;

  constructor(private readonly opts: AmqpClientOptions) {}

  get connected(): boolean {
    return this.pub !== null;
  }

  /** The confirm channel, connecting first when there is none. */
  channel(): Promise<ConfirmChannel> {
    if (this.pub) return Promise.resolve(this.pub);
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<ConfirmChannel> {
    const { log } = this.opts;
    const urls = Array.isArray(this.opts.url) ? this.opts.url : [this.opts.url];
    const url = urls[this.nextNode++ % urls.length] as string;
    const conn = await amqp.connect(url, {
      timeout: this.opts.connectTimeoutMs ?? 3000,
      ...tlsSocketOptions(this.opts.caFile),
    });
    conn.on("error", (error: Error) => log.warn("AMQP connection error", { error: error.message }));
    conn.on("close", () => {
      if (this.conn === conn) this.dropped();
    });
    conn.on("blocked", (reason: string) => {
      if (this.conn !== conn) return;
      this.blockedBy = reason;
      log.warn(
        "RabbitMQ blocks publishing on this connection: requests are refused until it lets go",
        {
          reason,
        },
      );
    });
    conn.on("unblocked", () => {
      if (this.conn !== conn) return;
      this.blockedBy = null;
      log.info("RabbitMQ lets this connection publish again");
    });
    try {
      const pub = await conn.createConfirmChannel();
      pub.on("error", (error: Error) => log.warn("AMQP channel error", { error: error.message }));
      pub.on("close", () => {
        if (this.pub === pub) this.pub = null;
      });
      collectReturns(pub, this.returned);
      await this.opts.topology(pub);
      for (const c of this.consumers) await this.startChannelConsumer(conn, c);
      this.conn = conn;
      this.pub = pub;
      log.info("connected to RabbitMQ", urls.length > 1 ? { node: nodeOf(url) } : {});
      return pub;
    } catch (error) {
      await conn.close().catch(() => {});
      throw error;
    }
  }

  private dropped() {
    this.conn = null;
    this.pub = null;
    this.blockedBy = null;
    if (this.closing) return;
    this.opts.log.warn("lost the connection to RabbitMQ");
    this.scheduleReconnect();
  }

  private scheduleReconnect() {
    if (this.closing || this.reconnectTimer || this.consumers.length === 0) return;
    this.reconnectTimer = setTimeout(async () => {
      this.reconnectTimer = null;
      try {
        await this.channel();
      } catch {
        this.scheduleReconnect();
      }
    }, 1000);
  }

  /**
   * Starts a queue's consumers on a connection, once per connection, on one channel.
   * One channel, not one each: when this process dies, RabbitMQ 3.x closes a connection's
   * channels one at a time, and a quorum queue counts each return of an unacked message
   * (x-delivery-count). With a channel per consumer, a message returned by the first
   * closed channel could go to a consumer on a channel not yet closed and come back
   * again, spending its delivery limit without a single attempt, and be dead-lettered.
   * On one channel, all of them are returned at once, counted once.
   */
  private async startChannelConsumer(conn: ChannelModel, c: ChannelConsumer) {
    if (this.active.get(c) === conn) return;
    this.active.set(c, conn);
    const ch = await conn.createChannel();
    ch.on("error", (error: Error) =>
      this.opts.log.warn("AMQP consumer channel error", { error: error.message }),
    );
    await ch.prefetch(c.prefetch, false);
    const tags: string[] = [];
    this.tags.set(c, { ch, tags });
    for (let i = 0; i < (c.consumers ?? 1); i++) {
      const { consumerTag } = await ch.consume(c.queue, (msg) => {
        if (msg) void c.onMessage(ch, msg);
      });
      tags.push(consumerTag);
    }
  }

  /**
   * Stops a queue's consumers: RabbitMQ delivers them nothing more (basic.cancel), and no
   * reconnection starts them again. Then, once `inHand` resolves (the messages they hold
   * are settled), their channel is closed: its close comes after their acks on the same
   * channel, so every ack reaches RabbitMQ before the service closes its connection (a
   * connection's close could overtake acks still queued on another channel).
   */
  async cancel(c: ChannelConsumer, inHand: () => Promise<unknown>): Promise<void> {
    const i = this.consumers.indexOf(c);
    if (i >= 0) this.consumers.splice(i, 1);
    const active = this.tags.get(c);
    this.tags.delete(c);
    this.active.delete(c);
    for (const tag of active?.tags ?? []) await active?.ch.cancel(tag).catch(() => {});
    await inHand();
    await active?.ch.close().catch(() => {});
  }

  /** Registers a consumer now and after every reconnection. */
  async consume(c: ChannelConsumer): Promise<void> {
    this.consumers.push(c);
    try {
      await this.channel();
      if (this.conn) await this.startChannelConsumer(this.conn, c);
    } catch (error) {
      // Wrong credentials or an untrusted certificate: a clear start-up error, not a retry loop.
      const fatal = securityProblem(error);
      if (fatal) {
        this.consumers.splice(this.consumers.indexOf(c), 1);
        throw fatal;
      }
      this.opts.log.warn("RabbitMQ unreachable; the consumer starts when it is back", {
        queue: c.queue,
        error: (error as Error).message,
      });
      this.scheduleReconnect();
    }
  }

  /**
   * Publishes persistent JSON with the mandatory flag and waits for the broker's confirm.
   * Fails when the confirm is negative or missing after timeoutMs, when the message came
   * back unrouted, or when the broker cannot be reached.
   */
  async publish(
    exchange: string,
    routingKey: string,
    body: string,
    timeoutMs: number,
    headers?: Record<string, unknown>,
  ): Promise<void> {
    const destino = `${exchange}/${routingKey}`;
    metrics.published.inc({ destino });
    // Over: timed out, or confirmed on a fresh channel while this loop still tried.
    let over = false;
    const once = () => this.publishOnce(exchange, routingKey, body, headers);
    // On a cluster, a publication lost with its node (out of reach, its channel closed
    // before the confirm, or nacked while a quorum queue changes leader) is tried again, on
    // the next node, until the time limit: a failover within the spec's 5 s wait is a
    // confirmed publish, not a 503. A message whose confirm was lost may then be queued
    // twice; the consumers' idempotency (solicitacaoId) absorbs it. With one node there is
    // nowhere else to go: the client hears at once, and repeats.
    const failsOver = Array.isArray(this.opts.url) && this.opts.url.length > 1;
    const tried = (async () => {
      for (;;) {
        try {
          return await once();
        } catch (error) {
          if (over || !failsOver || !lostOnTheWay(error)) throw error;
          await new Promise((r) => setTimeout(r, 250));
          if (over) throw error;
        }
      }
    })();
    // On a cluster, a confirm slow to come (a channel still aimed at a dead leader) is not
    // waited for alone: the message goes again on a fresh channel (RESEND_AFTER_MS).
    const attempt = failsOver
      ? firstConfirmed(
          tried,
          () => this.publishOnFreshChannel(exchange, routingKey, body, headers),
          RESEND_AFTER_MS,
        )
      : tried;
    attempt.catch(() => {});
    try {
      await withTimeLimit(attempt, timeoutMs, () => {
        over = true;
        return new PublishFailed(
          "sem-confirmacao",
          `no publisher confirm from RabbitMQ within ${timeoutMs} ms`,
        );
      });
      metrics.confirmed.inc({ destino });
    } catch (error) {
      metrics.failed.inc({ destino });
      throw error;
    } finally {
      over = true;
    }
  }

  /** One try: a channel, the message sent, its confirm awaited, a return turned into sem-rota. */
  private async publishOnce(
    exchange: string,
    routingKey: string,
    body: string,
    headers?: Record<string, unknown>,
  ): Promise<void> {
    let ch: ConfirmChannel;
    try {
      ch = await this.channel();
    } catch (error) {
      throw new PublishFailed(
        "broker-inacessivel",
        `RabbitMQ unreachable: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (this.blockedBy !== null && this.opts.refuseWhileBlocked)
      throw new PublishFailed(
        "broker-bloqueado",
        `RabbitMQ is blocking publishers (${this.blockedBy}): nothing was published`,
      );
    await sendRouted(ch, this.returned, exchange, routingKey, body, headers);
  }

  /** publishOnce on a confirm channel of its own, closed after: see RESEND_AFTER_MS. */
  private async publishOnFreshChannel(
    exchange: string,
    routingKey: string,
    body: string,
    headers?: Record<string, unknown>,
  ): Promise<void> {
    await this.onOwnChannel(
      (conn) => conn.createConfirmChannel(),
      (ch) => {
        const returned = new Set<string>();
        collectReturns(ch, returned);
        return sendRouted(ch, returned, exchange, routingKey, body, headers);
      },
    );
  }

  /**
   * `work` on a channel of its own over the current connection (connecting first), closed
   * after: a channel RabbitMQ closes on an error (a check that finds no queue) or one that
   * asks for a queue's leader anew leaves the shared ones alone.
   */
  private async onOwnChannel<C extends Channel, T>(
    open: (conn: ChannelModel) => Promise<C>,
    work: (ch: C) => Promise<T>,
  ): Promise<T> {
    await this.channel();
    const conn = this.conn;
    if (!conn) throw new Error("RabbitMQ: no connection");
    const ch = await open(conn);
    ch.on("error", () => {});
    try {
      return await work(ch);
    } finally {
      await ch.close().catch(() => {});
    }
  }

  /**
   * What RabbitMQ holds in each queue at this moment: its ready messages and its consumers,
   * as a passive queue.declare answers them (the queue itself counts; a quorum queue asks
   * its leader). The management API's counts are statistics, sampled every 5 s and later
   * for a quorum queue: a CI run drew a burst of the page over 10 s late. On a channel of its
   * own (onOwnChannel): RabbitMQ closes the channel of a check that finds no queue.
   */
  async countQueues(queues: readonly string[]): Promise<Map<string, QueueCount>> {
    const answers = await this.onOwnChannel(
      (conn) => conn.createChannel(),
      (ch) => Promise.all(queues.map((q) => ch.checkQueue(q))),
    );
    return new Map(
      answers.map((a) => [a.queue, { ready: a.messageCount, consumers: a.consumerCount }]),
    );
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const conn = this.conn;
    this.conn = null;
    this.pub = null;
    await conn?.close().catch(() => {});
  }
}

/**
 * The shop's client: it declares the spec's topology (TOPOLOGY) on every (re)connection,
 * with the error queues replicated too when it is given a cluster's nodes.
 */
export function shopClient(
  broker: BrokerAddress,
  log: Logger,
  { refuseWhileBlocked = false }: Pick<AmqpClientOptions, "refuseWhileBlocked"> = {},
): AmqpClient {
  return new AmqpClient({
    url: amqpUrls(broker),
    caFile: broker.tls?.caFile ?? null,
    log,
    refuseWhileBlocked,
    topology: (ch) => declareTopology(ch, TOPOLOGY, { cluster: (broker.nodes?.length ?? 0) > 1 }),
  });
}

/**
 * Notes in `returned` the message id of each message the broker sends back unrouted: it
 * sends basic.return before the ack of an unroutable mandatory message.
 */
function collectReturns(ch: ConfirmChannel, returned: Set<string>): void {
  ch.on("return", (msg: { properties: { messageId?: string } }) => {
    if (msg.properties.messageId) returned.add(msg.properties.messageId);
  });
}

/**
 * One message sent on `ch` and confirmed (sendConfirmed), under a message id of its own;
 * PublishFailed "sem-rota" when the broker sent it back unrouted (`returned`, filled by
 * collectReturns on the same channel).
 */
async function sendRouted(
  ch: ConfirmChannel,
  returned: Set<string>,
  exchange: string,
  routingKey: string,
  body: string,
  headers?: Record<string, unknown>,
): Promise<void> {
  const messageId = randomUUID();
  await sendConfirmed(ch, exchange, routingKey, body, messageId, headers);
  if (returned.delete(messageId)) {
    throw new PublishFailed(
      "sem-rota",
      `no queue is bound to ${exchange} with routing key ${routingKey}`,
    );
  }
}

/**
 * Sends persistent JSON with the mandatory flag, in a producer span whose traceparent goes
 * with it, and settles with the broker's confirm (a nack is PublishFailed "nack").
 */
async function sendConfirmed(
  ch: ConfirmChannel,
  exchange: string,
  routingKey: string,
  body: string,
  messageId: string,
  headers?: Record<string, unknown>,
): Promise<void> {
  const span = startProducerSpan(`publish ${exchange}`, {
    [MESSAGING.system]: "rabbitmq",
    [MESSAGING.destination]: exchange,
    [MESSAGING.operationType]: "send",
    [MESSAGING.operationName]: "publish",
    [MESSAGING.rabbitRoutingKey]: routingKey,
    [MESSAGING.messageId]: messageId,
  });
  const confirmed = new Promise<void>((resolve, reject) => {
    ch.publish(
      exchange,
      routingKey,
      Buffer.from(body),
      {
        mandatory: true,
        persistent: true,
        contentType: "application/json",
        messageId,
        headers: { traceparent: span.traceparent, ...headers },
      },
      (err) =>
        err
          ? reject(new PublishFailed("nack", `RabbitMQ did not take the message: ${String(err)}`))
          : resolve(),
    );
  });
  confirmed.then(
    () => span.end(),
    (error: unknown) => span.end(undefined, error),
  );
  await confirmed;
}
