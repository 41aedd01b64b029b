import { loadDotEnv } from "@shop/service";
import pg from "pg";
import { tempOrdersDatabase } from "../infra/postgres.ts";
import { tempDb } from "./env.ts";
import { countRows } from "./process.ts";

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
    async count(sql, ...params) {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        let n = 0;
        const numbered = sql.replace(/\?/g, () => `$${++n}`);
        return Number((await client.query<{ n: string }>(numbered, params)).rows[0]?.n);
      } finally {
        await client.end();
      }
    },
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
