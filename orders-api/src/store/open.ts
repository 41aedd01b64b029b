import type { PedidoStore } from "../store.ts";

/**
 * The store DATABASE_URL names (postgres://…), else the SQLite file at `dbPath`. Each
 * implementation is loaded only when chosen: the PostgreSQL driver stays out of a SQLite
 * process's memory.
 */
export async function openStore(where: {
  databaseUrl?: string | null;
  dbPath: string;
}): Promise<PedidoStore> {
  if (where.databaseUrl) {
    const { openPostgresStore } = await import("./postgres.ts");
    return openPostgresStore(where.databaseUrl);
  }
  const { openSqliteStore } = await import("./sqlite.ts");
  return openSqliteStore(where.dbPath);
}
