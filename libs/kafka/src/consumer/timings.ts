import { CONSUMER_SESSION_MS } from "@shop/contracts";

/**
 * The consumers' session: how long the group coordinator waits for a member it no longer
 * hears from (a kill -9, a SIGSTOP, a black hole) before it gives that member's partitions
 * to the others. 6 s is the smallest any Kafka accepts by default
 * (group.min.session.timeout.ms), so a user's own broker takes it as it is; the shop keeps
 * its heartbeats going every half second even through a 3 s decision (consumer/batch.ts), so
 * a live member misses eleven before it is taken for dead. It was 10 s: a dead instance's
 * partitions waited 4 s longer to move (issue 55).
 */
export const SESSION_MS = CONSUMER_SESSION_MS;
/**
 * How often a member heartbeats: between records, between fetches (each waits at most
 * FETCH_WAIT_MS) and during a record's handling. A heartbeat is how a live member learns
 * that the group is rebalancing, so a dead member's partitions move within half a second
 * of its session's end, not a second (the page's kill -9 read 7.06 s against its 7 s
 * bound, session + 1 s, with heartbeats every second).
 */
export const HEARTBEAT_MS = 500;
/** The longest a fetch waits for records at the broker before the member heartbeats again. */
export const FETCH_WAIT_MS = 500;
