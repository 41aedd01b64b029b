import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { kafkaUsers } from "../../infra/kafka/users.ts";

/** Issue 34.6: a run never stops the Kafka that a second checkout's run still uses. */
describe("the runs that use one Kafka", () => {
  // An address no real broker has: the registry is files, it never connects.
  const address = { host: "127.0.0.1", port: 1 + Math.floor(Math.random() * 1000) };

  it("When another living process has joined, then it is counted; once it has left, it is not", () => {
    const users = kafkaUsers(address);
    const other = spawn("sleep", ["30"]);
    try {
      const using = users.join(other.pid);
      expect(users.others()).toContain(other.pid);
      using.leave();
      expect(users.others()).not.toContain(other.pid);
    } finally {
      other.kill();
    }
  });

  it("When a process that joined has died without leaving, then it is forgotten; this process never counts itself", async () => {
    const users = kafkaUsers(address);
    const other = spawn("sleep", ["30"]);
    users.join(other.pid);
    const mine = users.join();
    expect(users.others()).toEqual([other.pid]);
    other.kill("SIGKILL");
    await once(other, "exit");
    expect(users.others()).toEqual([]);
    mine.leave();
  });
});
