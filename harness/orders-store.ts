import { loadDotEnv } from "@shop/service";
import { tempOrdersDatabase } from "../infra/postgres.ts";
import { tempDb } from "./env.ts";

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
export async function freshOrdersStore(
  name: string,
): Promise<{ env: { DB_PATH: string } | { DATABASE_URL: string }; drop(): Promise<void> }> {
  if (TEST_STORE === "sqlite") return { env: { DB_PATH: tempDb(name) }, drop: async () => {} };
  loadDotEnv();
  const db = await tempOrdersDatabase(name);
  return { env: { DATABASE_URL: db.url }, drop: db.drop };
}
