/**
 * A member's partitions take turns at the handler, the oldest record first.
 *
 * kafkajs hands the batches of a fetch to its workers one partition after the other: with
 * one worker (payments' one decision at a time, the spec's), a partition's whole batch was
 * decided before the next partition's first record, however long that one had waited.
 * After a rebalance that gave a member a backlog, the orders placed after the fault on the
 * partitions it already held went before the backlog it was given: 3 to 6 decisions ahead
 * of the backlog's last order in the "payments join and leave" row (issue 55).
 *
 * Now every batch of a fetch is handed to the wrapper at once (consumer.ts), and each batch
 * asks here for a turn before each record: `atOnce` records are handled at a time, and a
 * free turn goes to the waiting record written first (its Kafka timestamp; the first to ask
 * on a tie). A partition's order is kept, since only its next record ever waits.
 */
export class Turns {
  private free: number;
  private readonly waiting: Waiting[] = [];
  private granting = false;

  constructor(atOnce: number) {
    this.free = atOnce;
  }

  /**
   * A turn for a record written at `at` (ms). It rejects with the signal's reason if the
   * signal is aborted first (a rebalance: the record is let go, its turn never taken).
   */
  take(at: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(waiting);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason);
      };
      const waiting: Waiting = {
        at,
        go: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiting);
      // The batches of one fetch start in the same turn of the event loop: a free turn is
      // given once they all wait, not to the first batch to ask.
      if (this.free > 0 && !this.granting) {
        this.granting = true;
        setImmediate(() => {
          this.granting = false;
          this.grant();
        });
      }
    });
  }

  /**
   * Gives a turn back: the oldest record waiting gets it at once. A batch that moves to its
   * next record asks for that record's turn first, then releases the one it holds, so that
   * its next record is among those compared.
   */
  release(): void {
    this.free++;
    this.grant();
  }

  /** Whether a record written before `at` waits: the holder's next record would hand over. */
  olderWaiting(at: number): boolean {
    return this.waiting.some((w) => w.at < at);
  }

  private grant(): void {
    while (this.free > 0 && this.waiting.length > 0) {
      let oldest = 0;
      for (let i = 1; i < this.waiting.length; i++)
        if ((this.waiting[i] as Waiting).at < (this.waiting[oldest] as Waiting).at) oldest = i;
      const [next] = this.waiting.splice(oldest, 1);
      this.free--;
      next?.go();
    }
  }
}

interface Waiting {
  at: number;
  go: () => void;
}
