import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Database, openDatabase, transactionWithoutFsync } from "@shop/service";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../../infra/config.ts";
import { openSqliteStore as ordersStore } from "../../../orders-api/src/store/sqlite.ts";
import { aStoredPedido } from "../../helpers/fixtures.ts";
import { tempDb } from "../../helpers/shop.ts";

/**
 * Issue 14: what a service answered 201/202 for, or acked, is on disk before the answer.
 * synchronous=FULL in WAL mode syncs the log at every commit; NORMAL could lose the last
 * commits in a power loss, and with them an order id the next order would be given.
 */
describe("Durability of what was acknowledged", () => {
  it("When any service's store opens, then it goes through openDatabase, the one place that sets durability", () => {
    for (const arquivo of [
      "orders-api/src/store/sqlite.ts",
      "broker/orders/src/store.ts",
      "broker/payments/src/store.ts",
    ]) {
      const fonte = readFileSync(join(ROOT, arquivo), "utf8");
      expect(fonte, arquivo).toMatch(/openDatabase\(path, MIGRATIONS\)/);
      expect(fonte, arquivo).not.toMatch(/new Database\(|synchronous/);
    }
  });

  it("When SQLite opens, then the driver is better-sqlite3 13, the one line, with its Node-API binary from the package", () => {
    const { version } = createRequire(join(ROOT, "libs/service/package.json"))(
      "better-sqlite3/package.json",
    ) as { version: string };
    expect(version.split(".")[0]).toBe("13");
    const db = new Database(":memory:");
    expect(db.prepare("SELECT 1 AS um").get()).toEqual({ um: 1 });
    db.close();
  });

  it("When any code opens SQLite, then it takes Database from @shop/service, never better-sqlite3 itself", () => {
    const tracked = spawnSync("git", ["ls-files", "*.ts", "*.tsx"], { cwd: ROOT, encoding: "utf8" })
      .stdout.split("\n")
      // The benchmark's bare baselines (bench/bare-*.ts) set the same pragmas themselves:
      // they measure what the shop's promises cost without the shop's libraries.
      .filter((f) => f && f !== "libs/service/src/sqlite.ts" && !/^bench\/bare-/.test(f));
    expect(tracked.length).toBeGreaterThan(100);
    const diretos = tracked.filter((f) =>
      /^import (?!type )[^;]*from "better-sqlite3";/m.test(readFileSync(join(ROOT, f), "utf8")),
    );
    expect(diretos).toEqual([]);
  });

  it("When a store's database opens, then it is WAL and syncs every commit fully (PRAGMA synchronous = 2)", () => {
    const db = openDatabase(tempDb("duravel"), []);
    try {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.pragma("synchronous", { simple: true })).toBe(2);
    } finally {
      db.close();
    }
  });

  it("When the outbox relay marks rows sent, then that commit alone skips its fsync (synchronous 1 inside, 2 before and after, a failed one too)", () => {
    const db = openDatabase(tempDb("mark"), ["CREATE TABLE mark (id INTEGER PRIMARY KEY)"]);
    const withoutFsync = transactionWithoutFsync(db);
    const level = () => db.pragma("synchronous", { simple: true });
    try {
      const inside = withoutFsync(() => {
        db.prepare("INSERT INTO mark (id) VALUES (1)").run();
        return level();
      });
      expect(inside).toBe(1);
      expect(level()).toBe(2);
      expect(() =>
        withoutFsync(() => {
          db.prepare("INSERT INTO mark (id) VALUES (2)").run();
          throw new Error("the mark failed");
        }),
      ).toThrow("the mark failed");
      expect(level()).toBe(2);
      expect(db.prepare("SELECT id FROM mark").all()).toEqual([{ id: 1 }]);
    } finally {
      db.close();
    }
    // The orders API's relay marks through it; nothing else does.
    const fonte = readFileSync(join(ROOT, "orders-api/src/store/sqlite.ts"), "utf8");
    expect(fonte).toMatch(
      /function markSent\(s: Sqlite, rows: SentRow\[\]\): void \{\n {2}s\.markTransaction\(/,
    );
  });

  it("When the newest order is deleted (a restore, say), then the next order gets a new id, never the old one", async () => {
    const path = tempDb("ids");
    const store = ordersStore(path);
    const novo = aStoredPedido({ quantidade: 1, valorCentavos: 100 });
    const primeiro = await store.savePedido(novo);
    await store.close();
    const db = new Database(path);
    db.prepare("DELETE FROM pedidos WHERE id = ?").run(primeiro.id);
    db.close();
    const reaberto = ordersStore(path);
    try {
      expect((await reaberto.savePedido(novo)).id).toBeGreaterThan(primeiro.id);
    } finally {
      await reaberto.close();
    }
  });
});
