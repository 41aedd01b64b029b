import type { OutboxState } from "@shop/contracts";
import { type Publisher, refusedForGood } from "@shop/kafka";
import { gauge, type Logger, metrics } from "@shop/service";
import type { OutboxClaim, OutboxRow, PedidoStore } from "../store.ts";

/** How long a mark that came before its request waited is kept for that request. */
const EARLY_MS = 10_000;

/** The orders whose rows a round marked, and the error for a row set aside. */
type Settled = [pedidoId: number, error?: Error][];

/** The order was saved, but its event was not acknowledged in time; the relay keeps trying. */
export class SendPending extends Error {}

/** Kafka refused the order's event for good: the row is set aside, the outbox goes on. */
export class SendRefused extends Error {}

export interface OutboxRelay {
  /** Resolves when the order's outbox row has been acknowledged by Kafka; rejects after timeoutMs. */
  waitUntilSent(pedidoId: number, timeoutMs: number): Promise<void>;
  /** A new row is there: publish now rather than at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

/** The relay's options: what it publishes from and to, and how. */
interface RelayOptions {
  store: PedidoStore;
  publisher: Publisher;
  log: Logger;
  /** Rows per round (one batch). */
  batchSize?: number;
  /** The pause between rounds when nothing was pending. */
  pollMs?: number;
  /** PAUSA_ANTES_DE_MARCAR_MS: fault injection, a wait between the acknowledgement and the mark. */
  pauseBeforeMarkMs?: number;
  /** The instance's Kafka client id: the label of its rounds in the metrics. */
  instance?: string;
}

/** A running relay's state: its options, and who waits for which order's row. */
interface Relay extends Required<RelayOptions> {
  /** The requests waiting for their order's row to be acknowledged, by pedidoId. */
  waiters: Map<number, (error?: Error) => void>;
  /**
   * Marks that came before their request waited: another instance's relay can publish a
   * row and announce it while this instance's request is still between its commit and
   * waitUntilSent (a busy event loop). Kept for EARLY_MS, oldest first.
   */
  early: Map<number, { at: number; error: Error | undefined }>;
  running: boolean;
  /** Ends the current pause early (a new row, or stop). */
  wakeUp: (() => void) | null;
  /** A wake that came during a round: the pause after it is skipped (a row written meanwhile). */
  woken: boolean;
  /** The last round failed: the next one that succeeds says Kafka is back. */
  failing: boolean;
}

/**
 * The outbox relay: publishes pending rows in id order, as one batch per round (acks from
 * all in-sync replicas), and marks them sent only after the acknowledgement. A crash
 * between the publish and the mark publishes those rows again: the consumers are
 * idempotent. While Kafka is down it retries with a growing pause; nothing is dropped.
 *
 * A batch that Kafka refuses for good (a non-retriable error such as MESSAGE_TOO_LARGE)
 * is sent again a row at a time, so that the row Kafka refuses is found and set aside with
 * its reason (GET /saude, the metrics, the platform panel) and the rows after it go on:
 * one row can never stop every later order. (Rows of the refused batch that Kafka had
 * already written on other partitions are written again: the consumers are idempotent.)
 *
 * The story of one round: relayLoop → relayRound → sendRound → sendBatch (or sendOneByOne)
 * → claim.markSent → settle, which answers the request waiting in waitUntilSent.
 */
export function startOutboxRelay(options: RelayOptions): OutboxRelay {
  const relay: Relay = {
    batchSize: 500,
    pollMs: 1000,
    pauseBeforeMarkMs: 0,
    instance: "orders-api",
    ...options,
    waiters: new Map(),
    early: new Map(),
    running: true,
    wakeUp: null,
    woken: false,
    failing: false,
  };
  // Rows another instance's relay published: its request here learns it too.
  relay.store.onOutboxMarked(({ sent, setAside }) => {
    for (const pedidoId of sent) settle(relay, pedidoId);
    for (const [pedidoId, reason] of setAside) settle(relay, pedidoId, refusal(reason));
  });
  // Rows another instance wrote: this relay publishes them now, if it owns the outbox.
  relay.store.onOutboxWaiting(() => wake(relay));
  const stopMeasuring = measureOutbox(relay.store);
  const done = relayLoop(relay);
  return {
    waitUntilSent: (pedidoId, timeoutMs) => waitUntilSent(relay, pedidoId, timeoutMs),
    wake: () => wake(relay),
    async stop() {
      relay.running = false;
      relay.wakeUp?.();
      try {
        await done;
      } finally {
        stopMeasuring();
      }
    },
  };
}

/** Rounds until stopped: after a failure, again within 0.25–0.5 s; when idle, after pollMs. */
async function relayLoop(relay: Relay): Promise<void> {
  let backoff = 250;
  while (relay.running) {
    let claimed: number;
    try {
      claimed = await relayRound(relay);
      metrics.relayRounds.inc({ instancia: relay.instance });
      backoff = 250;
    } catch {
      // At most 0.5 s apart: a failover ends within the spec's 5 s wait, and the orders
      // waiting for it are answered as soon as a try succeeds.
      await pause(relay, backoff);
      backoff = Math.min(backoff * 2, 500);
      continue;
    }
    if (claimed === 0) await pause(relay, relay.pollMs);
  }
}

/** One round: claim pending rows, send and mark them, then tell who waits. Returns the rows claimed. */
async function relayRound(relay: Relay): Promise<number> {
  const { store, log, batchSize } = relay;
  let claimed = 0;
  // Who waits is told once the marks are committed (PostgreSQL commits them when the
  // claim ends), so that an answer never runs ahead of what another reader sees.
  const settled: Settled = [];
  try {
    await store.claimOutbox(batchSize, async (rows, claim) => {
      claimed = rows.length;
      await sendRound(relay, rows, claim, settled);
    });
  } catch (error) {
    if (!relay.failing) {
      log.warn(
        "outbox: the events were not published (Kafka did not acknowledge, or the database did not answer); they stay pending and will be retried",
        { rows: claimed, error: (error as Error).message },
      );
    }
    relay.failing = true;
    throw error;
  }
  for (const [pedidoId, error] of settled) settle(relay, pedidoId, error);
  if (claimed > 0 && relay.failing)
    log.info("outbox: Kafka acknowledges again; pending events published", { rows: claimed });
  relay.failing = false;
  return claimed;
}

/** One round over the rows claimed: as one batch, or a row at a time after a refusal. */
async function sendRound(relay: Relay, rows: OutboxRow[], claim: OutboxClaim, settled: Settled) {
  try {
    await sendBatch(relay, rows, claim, settled);
  } catch (error) {
    if (!refusedForGood(error)) throw error;
    await sendOneByOne(relay, rows, claim, settled);
  }
}

/** Publishes rows in one batch and marks them sent; whoever waits for them is told after. */
async function sendBatch(
  relay: Relay,
  rows: OutboxRow[],
  claim: OutboxClaim,
  settled: Settled,
): Promise<void> {
  const acks = await relay.publisher.publishBatch(
    rows.map((r) => ({
      topic: r.topico,
      key: r.chave,
      value: r.valor,
      ...(r.traceparent ? { parent: r.traceparent } : {}),
    })),
  );
  if (relay.pauseBeforeMarkMs > 0) await new Promise((r) => setTimeout(r, relay.pauseBeforeMarkMs));
  await claim.markSent(
    rows.map((r, i) => ({
      id: r.id,
      pedidoId: r.pedido_id,
      topico: r.topico,
      particao: acks[i]?.partition ?? -1,
      offset: acks[i]?.offset ?? "",
    })),
  );
  for (const r of rows) settled.push([r.pedido_id]);
}

/**
 * After a batch was refused for good: each row alone, in order. A row refused for good
 * is set aside; any other failure (Kafka went away) ends the round, and the loop retries.
 */
async function sendOneByOne(
  relay: Relay,
  rows: OutboxRow[],
  claim: OutboxClaim,
  settled: Settled,
): Promise<void> {
  for (const r of rows) {
    try {
      await sendBatch(relay, [r], claim, settled);
    } catch (error) {
      if (!refusedForGood(error)) return;
      const reason = (error as Error).message;
      await claim.setAside({ id: r.id, pedidoId: r.pedido_id }, reason);
      metrics.failed.inc({ destino: r.topico });
      relay.log.error(
        "outbox: Kafka refused an event for good; it is set aside and the outbox goes on",
        { pedido: r.pedido_id, outbox: r.id, error: reason },
      );
      settled.push([r.pedido_id, refusal(reason)]);
    }
  }
}

const refusal = (reason: string) => new SendRefused(`Kafka refused the event for good: ${reason}`);

/** An order's row was marked: its waiting request is answered, or the mark is kept a while for it. */
function settle(relay: Relay, pedidoId: number, error?: Error): void {
  const waiter = relay.waiters.get(pedidoId);
  if (waiter) {
    relay.waiters.delete(pedidoId);
    waiter(error);
    return;
  }
  const at = Date.now();
  for (const [id, mark] of relay.early) {
    if (at - mark.at < EARLY_MS) break;
    relay.early.delete(id);
  }
  relay.early.set(pedidoId, { at, error });
}

/** Resolves when the order's row was acknowledged (and marked); rejects after timeoutMs. */
function waitUntilSent(relay: Relay, pedidoId: number, timeoutMs: number): Promise<void> {
  const mark = relay.early.get(pedidoId);
  if (mark) {
    relay.early.delete(pedidoId);
    return mark.error ? Promise.reject(mark.error) : Promise.resolve();
  }
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      relay.waiters.delete(pedidoId);
      reject(
        new SendPending(
          `the outbox row of order ${pedidoId} was not acknowledged within ${timeoutMs} ms`,
        ),
      );
    }, timeoutMs);
    relay.waiters.set(pedidoId, (error) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    });
  });
}

/** A new row is there: the pause ends now, or, in the middle of a round, the next is skipped. */
function wake(relay: Relay): void {
  if (relay.wakeUp) relay.wakeUp();
  else relay.woken = true;
}

/** Waits `ms`, or less when woken (a new row, or stop). */
function pause(relay: Relay, ms: number): Promise<void> {
  if (relay.woken) {
    relay.woken = false;
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      relay.wakeUp = null;
      resolve();
    }
    relay.wakeUp = done;
  });
}

/**
 * The stores of the relays running in this process (one in a service), read when
 * Prometheus scrapes. A relay's store leaves the set when the relay stops: a process that
 * stopped one and goes on (a test file that starts the service in-process, in a worker
 * later files share) does not read a closed database at its next scrape.
 */
const measured = new Set<PedidoStore>();

const sumOver = async (read: (store: PedidoStore) => Promise<number>) =>
  (await Promise.all([...measured].map(read))).reduce((a, b) => a + b, 0);

gauge("shop_outbox_pending", "outbox rows not yet acknowledged by Kafka", [], async (g) => {
  g.set(await sumOver(async (store) => (await store.outboxState()).pendentes));
});
gauge(
  "shop_outbox_set_aside",
  "outbox rows Kafka refused for good, set aside so that the rest go on",
  [],
  async (g) => {
    g.set(await sumOver(async (store) => (await store.setAsideRows()).length));
  },
);

/** Reports this store's outbox on /metrics until the returned function is called. */
function measureOutbox(store: PedidoStore): () => void {
  measured.add(store);
  return () => measured.delete(store);
}

/** Pending outbox rows, the age of the oldest and the rows set aside, for /saude and the panel. */
export async function outboxStatus(store: PedidoStore): Promise<OutboxState> {
  const state = await store.outboxState();
  return {
    pendentes: state.pendentes,
    maisAntigoEm: state.maisAntigoEm,
    idadeMaisAntigoMs: state.maisAntigoEm ? Date.now() - Date.parse(state.maisAntigoEm) : 0,
    postosDeLado: (await store.setAsideRows()).map(({ pedidoId, em, motivo }) => ({
      pedidoId,
      em,
      motivo,
    })),
  };
}
