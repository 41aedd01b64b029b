/**
 * What a member's batches hear of a rebalance, shared by all of them.
 *
 * Every batch of a fetch runs at once (consumer/turns.ts), and each heartbeats while it
 * waits or handles a record (consumer/batch.ts, beatingWhile). kafkajs sends one heartbeat
 * request per interval for the whole member and answers the other calls of that interval
 * without asking: so the batch that heard "the group is rebalancing" was, at random, one
 * waiting for its turn, and the record in another batch's hands went on to its end. In
 * the "payments join and leave" row, a decision finished 100 ms after the member heard of
 * the rebalance, its result was acknowledged after the batch had ended, its offset was
 * never committed, and the same member decided it again once it had rejoined (issue 55).
 *
 * Now the first batch to hear it aborts the generation's signal for all: the record in
 * hand is let go (RecordMeta.signal) and no batch starts another, until the member has
 * joined again.
 */
export class RebalanceNotice {
  private controller = new AbortController();

  /**
   * This generation's notice, as a batch takes it when it starts: its signal, aborted with
   * the coordinator's answer once any batch of the generation heard it, and `heard`, which
   * tells them all. A heartbeat of a generation gone never aborts the next one's.
   */
  current(): Generation {
    const { controller } = this;
    return { signal: controller.signal, heard: (answer) => controller.abort(answer) };
  }

  /** The member joined its group again (kafkajs's GROUP_JOIN): a generation heard of nothing. */
  joined(): void {
    if (this.controller.signal.aborted) this.controller = new AbortController();
  }
}

export interface Generation {
  signal: AbortSignal;
  /** A heartbeat answered that the member must rejoin. */
  heard(answer: unknown): void;
}
