import { loadDotEnv } from "@shop/service";
import pg from "pg";
import { tempOrdersDatabase } from "../infra/postgres.ts";
import { int8AsNumber } from "../orders-api/src/store/postgres.ts";
import { tempDb } from "./env.ts";
import { countRows, queryRows } from "./process.ts";

/**
 * Which store the orders API's tests run against: SQLite, or PostgreSQL in the vitest
 * project `postgres` (SHOP_TEST_STORE=postgres, vitest.config.ts).
 */
export const TEST_STORE: "sqlite" | "postgres" =
  process.env.SHOP_TEST_STORE === "postgres" ? "postgres" : "sqlite";

/**
 * A fresh database of the store under test for one test file: its settings (DB_PATH or
 * DATABASE_URL) and how to drop it afterwards.
 */
export async function freshOrdersStore(name: string): Promise<FreshStore> {
  if (TEST_STORE === "sqlite") {
    const path = tempDb(name);
    return {
      env: { DB_PATH: path },
      count: async (sql, ...params) => countRows(path, sql, ...params),
      drop: async () => {},
    };
  }
  loadDotEnv();
  const db = await tempOrdersDatabase(name);
  return {
    env: { DATABASE_URL: db.url },
    count: async (sql, ...params) =>
      (await queryOrdersDb<{ n: number }>(db.url, sql, ...params))[0]?.n ?? 0,
    drop: db.drop,
  };
}

export interface FreshStore {
  /** The orders API's setting that names it. */
  env: { DB_PATH: string } | { DATABASE_URL: string };
  /** `SELECT COUNT(*) AS n ...` (parameters as `?`), read beside the service. */
  count(sql: string, ...params: unknown[]): Promise<number>;
  drop(): Promise<void>;
}

/**
 * Rows an SQL query finds in an orders database, read beside the service: a SQLite file,
 * or a PostgreSQL database when `where` is a postgres:// URL (parameters as `?`).
 */
export async function queryOrdersDb<T>(
  where: string,
  sql: string,
  ...params: unknown[]
): Promise<T[]> {
  if (!/^postgres(ql)?:\/\//.test(where)) return queryRows<T>(where, sql, ...params);
  const client = new pg.Client({ connectionString: where, types: int8AsNumber(pg) });
  await client.connect();
  try {
    let n = 0;
    const numbered = sql.replace(/\?/g, () => `$${++n}`);
    return (await client.query(numbered, params)).rows as T[];
  } finally {
    await client.end();
  }
}
