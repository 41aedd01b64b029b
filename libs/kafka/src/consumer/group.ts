import { type ConsumerEvents, kafkaRequests, type Logger } from "@shop/service";
import type { Consumer } from "kafkajs";

export interface Partitions {
  [topic: string]: number[];
}

/** What this member of the group is now: connected or not, and the partitions it holds. */
export interface Membership {
  connected: boolean;
  group: string;
  partitions: Partitions;
}

/**
 * What kafkajs tells about one consumer, turned into the wrapper's state, events and
 * metrics: requests counted, the assignment at each rebalance, commits as `committed`
 * events, connection state. `onFatalCrash` is called after a crash kafkajs will not
 * restart from by itself.
 */
export function watchGroup(
  consumer: Consumer,
  state: Membership,
  events: ConsumerEvents,
  log: Logger,
  onFatalCrash: () => void,
): void {
  consumer.on(consumer.events.REQUEST, ({ payload }) =>
    kafkaRequests.inc({ api: payload.apiName }),
  );
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    state.connected = true;
    state.partitions = Object.fromEntries(
      Object.entries(payload.memberAssignment).map(([t, ps]) => [t, [...ps].sort((a, b) => a - b)]),
    );
    const held = Object.entries(state.partitions)
      .map(([t, ps]) => `${t}[${ps.join(",")}]`)
      .join(" ");
    log.info(`rebalance: group ${state.group} assigned ${held || "no partitions (idle member)"}`);
  });
  consumer.on(consumer.events.COMMIT_OFFSETS, ({ payload }) => {
    for (const t of payload.topics)
      for (const p of t.partitions)
        events.emit("committed", {
          source: t.topic,
          partition: Number(p.partition),
          offset: p.offset,
        });
  });
  consumer.on(consumer.events.CONNECT, () => {
    state.connected = true;
  });
  for (const event of [consumer.events.DISCONNECT, consumer.events.STOP]) {
    consumer.on(event, () => {
      state.connected = false;
      state.partitions = {};
    });
  }
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    state.connected = false;
    log.error("consumer crashed", { error: payload.error.message, restart: payload.restart });
    // kafkajs restarts by itself only after a retriable error. After any other crash (seen
    // after repeated broker outages) this service would stay out of its group for good.
    if (!payload.restart) onFatalCrash();
  });
}
