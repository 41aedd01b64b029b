import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- scale-out", () => {
  it("Issue 37: when two orders APIs share PostgreSQL and one is killed, then both held result partitions, the other takes them all and nothing is lost", async () => {
    await expectPassed("scale-out", [
      /^PASS both instances held result partitions \(orders-api-1 holds .*; orders-api-2 holds/,
      /^PASS after orders-api-1 died, the other took its partitions: orders-api-2 holds partitions 0, 1, 2/,
      /^PASS every order was answered 201/,
      /^PASS nothing lost: 20 orders, each decided and applied once/,
    ]);
  }, 270_000);
});
