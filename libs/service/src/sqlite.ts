import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { MAX_CENTS } from "@shop/contracts";
import type BetterSqlite3 from "better-sqlite3";

/**
 * The SQLite driver for the Node that runs the service. better-sqlite3 12 is the last line
 * that runs on Node 20, but on Node 22 and later its statements' destructor can abort the
 * process (`Assertion failed: (env) != nullptr`, WiseLibs/better-sqlite3#1515): Node 24's
 * ObjectWrap removes a cleanup hook there, and a GC with no current Node environment (at
 * exit, in a vm context, in a worker) has none. better-sqlite3 13 moved to Node-API and
 * fixes it, but needs Node 22 or later (NAPI_VERSION 10): on Node 20 it crashes on load.
 * So each Node gets the line that works on it, with one API (13 kept 12's and added to it):
 * 13 under the alias `better-sqlite3-napi` from Node 22, 12 below. Drop 12 with Node 20.
 */
export const SQLITE_DRIVER: "better-sqlite3" | "better-sqlite3-napi" =
  Number(process.versions.node.split(".")[0]) >= 22 ? "better-sqlite3-napi" : "better-sqlite3";

export const Database: typeof BetterSqlite3 = createRequire(import.meta.url)(SQLITE_DRIVER);
export type Database = BetterSqlite3.Database;

/**
 * A service's own SQLite database: WAL, a busy timeout, foreign keys, and the schema
 * migrated at start (user_version counts the migrations applied), in one transaction.
 */
export function openDatabase(path: string, migrations: readonly string[]): Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  // FULL: a commit is on disk before it returns, so an order answered 201 (or a request
  // answered 202, or a message acked) survives an OS crash or power loss. NORMAL in WAL
  // mode could lose the last commits, and with them an id the next order would reuse.
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  const version = db.pragma("user_version", { simple: true }) as number;
  db.transaction(() => {
    for (const sql of migrations.slice(version)) db.exec(sql);
    db.pragma(`user_version = ${migrations.length}`);
  })();
  return db;
}

/**
 * A migration that keeps an amount column in the money range (contracts/src/money.ts): a
 * trigger refuses a row whose amount, given as an SQL expression over NEW, is out of it.
 * The store holds what the wire can carry, whoever writes the row.
 */
export function moneyRangeTrigger(table: string, name: string, expressao: string): string {
  return `CREATE TRIGGER ${name} BEFORE INSERT ON ${table}
     WHEN (${expressao}) NOT BETWEEN 1 AND ${MAX_CENTS}
     BEGIN SELECT RAISE(ABORT, '${name}: amount out of the money range'); END;`;
}
