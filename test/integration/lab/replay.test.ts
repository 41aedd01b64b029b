import { describe, it } from "vitest";
import { expectPassed } from "./lab.ts";

describe("npm run lab -- replay", () => {
  it("When analytics runs in a new group, in auditoria, resumed and with --replay, then each full read matches the orders API's counts and the resumed one reads nothing", async () => {
    await expectPassed("replay", [
      /^PASS a new group read all 12 records from offset 0, and its dashboard matches/,
      /^PASS auditoria, a second group, read everything again/,
      /^PASS the restarted reader resumed at its committed offsets: 0 records read/,
      /^PASS --replay reset the group to offset 0 and rebuilt the same dashboard/,
    ]);
  }, 270_000);
});
