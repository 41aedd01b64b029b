import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort, twoFreePorts } from "../../../infra/ports.ts";

describe("The ports a test or the lab gives its own brokers and databases", () => {
  it("When many are asked for at once, then none is handed out twice, each is noted for the other processes, and all lie below the ephemeral range the kernel gives clients", async () => {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    const singles = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    const pairs = await Promise.all(Array.from({ length: 10 }, () => twoFreePorts()));
    const all = [...singles, ...pairs.flatMap((p) => [p, p + 1])];
    expect(new Set(all).size).toBe(all.length);
    for (const port of all) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(low as number);
      expect(existsSync(join(tmpdir(), "shop-ports", String(port)))).toBe(true);
    }
  });
});
