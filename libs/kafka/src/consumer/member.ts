import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";

/**
 * Where a consumer keeps its group member id between two runs of its process. A process
 * killed -9 does not leave its group: started again as a new member, it waited for the old
 * member's session (6 s) before the group gave it any partition. Started as the member it
 * was (`rejoinAs`, patches/kafkajs+2.2.4.patch), it is given them at once; a coordinator
 * that no longer knows the id (the session ended, or the member left) answers
 * UNKNOWN_MEMBER_ID, and kafkajs joins as a new member. Only for a process that is the one
 * user of its identity: two live processes as one member would take each other's place.
 */
export interface MemberIdentity {
  load(): string | null;
  save(memberId: string | null): void;
}

/** A member id kept in a file of its own (beside the orders API's SQLite database). */
export function memberIdentityFile(path: string): MemberIdentity {
  return {
    load: () => (existsSync(path) ? readFileSync(path, "utf8").trim() || null : null),
    save(memberId) {
      if (memberId) writeFileSync(path, `${memberId}\n`);
      else rmSync(path, { force: true });
    },
  };
}

/**
 * A member id kept in memory, for the consumer that replaces a crashed one in the same
 * process (consumer.ts): the crash came from a lost connection, so the crashed consumer
 * could not leave its group, and a new member waited for the old one's session (6 s from
 * its last heartbeat: the Kafka connections dropped for 3 s drained in 5.8 s, not 0.5).
 */
export function memberIdentityInMemory(): MemberIdentity {
  let kept: string | null = null;
  return {
    load: () => kept,
    save(memberId) {
      kept = memberId;
    },
  };
}
