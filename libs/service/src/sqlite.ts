import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { MAX_CENTS } from "@shop/contracts";
import BetterSqlite3 from "better-sqlite3";

/**
 * The one SQLite driver: better-sqlite3 13, whose Node-API binary ships in its package for
 * each platform (nothing compiles at install; its implicit `node-gyp rebuild` is kept from
 * running by allowScripts in package.json). Every other file takes it from here, so the
 * durability settings below cannot be bypassed.
 */
export const Database = BetterSqlite3;
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
  // (The outbox relay's marks and the kept answers skip it: transactionWithoutFsync, below.)
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
 * Runs work in one IMMEDIATE transaction whose commit does not wait for the disk
 * (synchronous=NORMAL for this commit alone; every other commit stays FULL). Only for a
 * write whose loss is harmless because it is redone: a mark that an event was sent, the
 * answer kept for a keyed request. The WAL keeps it through a crash of the process, and
 * the next FULL commit (the next order's) puts it on disk with its own fsync; only a power
 * cut or an OS crash before then loses it, and then the event is sent again, which the
 * consumers absorb (at least once), or a repeat of the request gets its order as it is.
 * One fsync fewer per mark: about 130 µs of CPU and 250 µs of a blocked event loop here.
 */
export function transactionWithoutFsync(db: Database): <T>(work: () => T) => T {
  const transaction = db.transaction((work: () => unknown) => work());
  // exec, not a statement prepared once: SQLite carries this pragma out while compiling it.
  return <T>(work: () => T): T => {
    db.exec("PRAGMA synchronous = NORMAL");
    try {
      return transaction.immediate(work) as T;
    } finally {
      db.exec("PRAGMA synchronous = FULL");
    }
  };
}

/**
 * A migration that keeps an amount column in the money range (contracts/src/money.ts): a
 * trigger refuses a row whose amount, given as an SQL expression over NEW, is out of it.
 * The store holds what the wire can carry, whoever writes the row.
 */
export function moneyRangeTrigger(table: string, name: string, valueExpression: string): string {
  return `CREATE TRIGGER ${name} BEFORE INSERT ON ${table}
     WHEN (${valueExpression}) NOT BETWEEN 1 AND ${MAX_CENTS}
     BEGIN SELECT RAISE(ABORT, '${name}: amount out of the money range'); END;`;
}
