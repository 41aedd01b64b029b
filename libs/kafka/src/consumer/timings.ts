import { CONSUMER_SESSION_MS } from "@shop/contracts";

/**
 * The consumers' session: how long the group coordinator waits for a member it no longer
 * hears from (a kill -9, a SIGSTOP, a black hole) before it gives that member's partitions
 * to the others. 6 s is the smallest any Kafka accepts by default
 * (group.min.session.timeout.ms), so a user's own broker takes it as it is; the shop keeps
 * its heartbeats going every second even through a 3 s decision (consumer/batch.ts), so a
 * live member misses five before it is taken for dead. It was 10 s: a dead instance's
 * partitions waited 4 s longer to move (issue 55).
 */
export const SESSION_MS = CONSUMER_SESSION_MS;
/** How often a member heartbeats: between records, and during a record's handling. */
export const HEARTBEAT_MS = 1_000;
