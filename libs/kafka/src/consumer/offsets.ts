import type { ConsumerEvents } from "@shop/service";
import type { PartitionTransaction } from "../transactions.ts";

/**
 * The offsets of one batch, resolved in order: an offset is resolved only when its record
 * and every earlier one are done (a pipelined handler's last step may still be running).
 * With a transaction, offsets done wait for the transaction that commits them with the
 * records the handler wrote.
 */
export class BatchOffsets {
  private readonly inFlight: { offset: string; pending?: Promise<void>; done: boolean }[] = [];
  private readonly uncommitted: string[] = [];
  private lastCommit = Date.now();
  private closed = false;

  constructor(
    private readonly topic: string,
    private readonly partition: number,
    private readonly kafkajs: { resolveOffset(offset: string): void },
    private readonly tx: PartitionTransaction | null,
    private readonly events: ConsumerEvents,
  ) {}

  /**
   * A record handed over; `pending` is its pipelined step, if it has one. Its offset is
   * resolved as soon as that step and every earlier one are done, not when the next record
   * is: a rebalance commits what is resolved (kafkajs does, at the heartbeat that tells
   * it), and a decision published but resolved only after the next one was made again by
   * the partition's next owner, once per rebalance (issue 55).
   */
  add(offset: string, pending: Promise<void> | undefined): void {
    const p = { offset, pending, done: pending === undefined };
    pending?.then(
      () => {
        p.done = true;
        this.resolveDone();
      },
      () => {}, // awaited in settle(), in order
    );
    this.inFlight.push(p);
    this.resolveDone();
  }

  /** The batch ended in an error: nothing more is resolved (its partition may have moved). */
  close(): void {
    this.closed = true;
  }

  private resolveDone(): void {
    while (!this.closed && this.inFlight[0]?.done)
      this.resolve((this.inFlight.shift() as (typeof this.inFlight)[number]).offset);
  }

  /** Whether a transaction has been open for `interval` ms or more. */
  due(interval: number | undefined): boolean {
    return interval !== undefined && Date.now() - this.lastCommit >= interval;
  }

  /** Waits for every record handed over, then resolves their offsets in order. */
  async settle(): Promise<void> {
    for (const p of this.inFlight.splice(0)) {
      await p.pending;
      this.resolve(p.offset);
    }
  }

  /** Every record handed over done, then its writes and offset committed in one go. */
  async commitTransaction(tx: PartitionTransaction): Promise<void> {
    await this.settle();
    const last = this.uncommitted.at(-1);
    if (last === undefined) return;
    const next = String(Number(last) + 1);
    await tx.commit(next);
    this.kafkajs.resolveOffset(last);
    for (const offset of this.uncommitted.splice(0)) this.acked(offset);
    this.lastCommit = Date.now();
    this.events.emit("committed", { source: this.topic, partition: this.partition, offset: next });
  }

  private resolve(offset: string): void {
    if (this.tx) {
      this.uncommitted.push(offset);
      return;
    }
    this.kafkajs.resolveOffset(offset);
    this.acked(offset);
  }

  private acked(offset: string): void {
    this.events.emit("acked", {
      source: this.topic,
      where: `${this.topic}[${this.partition}]@${offset}`,
      key: null,
    });
  }
}
