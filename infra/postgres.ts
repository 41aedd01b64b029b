import { randomBytes } from "node:crypto";
import pg from "pg";
import { checkoutId, type Log } from "./config.ts";

/**
 * The orders API's PostgreSQL (issue 37): a database and a user of this checkout's own on
 * the PostgreSQL that runs on the machine, made by an administrator's connection
 * (POSTGRES_ADMIN_URL; the machine's `postgres` user by default). The user may log in and
 * owns its database, and nothing else: no superuser, no other database, no roles; other
 * users may not connect to it.
 */
export const POSTGRES_ADMIN_URL =
  process.env.POSTGRES_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A name PostgreSQL takes unquoted: the checkout's id after a prefix. */
export const ordersDbName = (suffix = checkoutId()) => `shop_pedidos_${suffix}`;

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`${name} is not a plain PostgreSQL name`);
  return name;
}

/** Runs `work` on an administrator's connection; says how to point infra elsewhere if none. */
export async function asPostgresAdmin<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: 3000,
  });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `postgres: no administrator connection at ${POSTGRES_ADMIN_URL.replace(/:[^:@/]*@/, ":***@")} (${(error as Error).message}); set POSTGRES_ADMIN_URL to an administrator's URL of your PostgreSQL, or DATABASE_URL to a database the orders API may use`,
    );
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * The user `user` with `password` (created, or its password set) and the database `name`
 * it owns (created when absent). Returns the DATABASE_URL that reaches it.
 */
export async function ensureOrdersDatabase(
  c: pg.Client,
  { name, user, password }: { name: string; user: string; password: string },
): Promise<string> {
  identifier(name);
  identifier(user);
  // Two test files making their databases at once would update the role at once, which
  // PostgreSQL refuses ("tuple concurrently updated"): one at a time.
  await c.query("SELECT pg_advisory_lock($1)", [ROLE_LOCK]);
  try {
    return await ensureRoleAndDatabase(c, { name, user, password });
  } finally {
    await c.query("SELECT pg_advisory_unlock($1)", [ROLE_LOCK]);
  }
}

/** Any constant: the lock infra holds while it makes roles and databases. */
const ROLE_LOCK = 370_038;

async function ensureRoleAndDatabase(
  c: pg.Client,
  { name, user, password }: { name: string; user: string; password: string },
): Promise<string> {
  const role = await c.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [user]);
  const verb = role.rowCount ? "ALTER" : "CREATE";
  const { rows } = await c.query<{ sql: string }>(
    `SELECT format('${verb} ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD %L', $1::text, $2::text) AS sql`,
    [user, password],
  );
  await c.query((rows[0] as { sql: string }).sql);
  const db = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  if (!db.rowCount) {
    await c.query(`CREATE DATABASE ${name} OWNER ${user}`);
    await c.query(`REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
  }
  const { host, port } = new URL(POSTGRES_ADMIN_URL);
  return `postgres://${user}:${encodeURIComponent(password)}@${host.split(":")[0] || "127.0.0.1"}:${port || 5432}/${name}`;
}

/** The checkout's orders database, from the .env's ORDERS_DB_* settings. */
export async function ensureCheckoutDatabase(log: Log): Promise<string> {
  const user = process.env.ORDERS_DB_USER;
  const password = process.env.ORDERS_DB_PASSWORD;
  if (!user || !password)
    throw new Error(
      "postgres: ORDERS_DB_USER and ORDERS_DB_PASSWORD are not set (npm run setup writes them to .env)",
    );
  const url = await asPostgresAdmin((c) =>
    ensureOrdersDatabase(c, { name: ordersDbName(), user, password }),
  );
  log(
    `postgres: database ${ordersDbName()} and user ${user} ready; DATABASE_URL=${url.replace(/:[^:@/]*@/, ":***@")} (the password is ORDERS_DB_PASSWORD of .env)`,
  );
  return url;
}

/** A fresh database owned by the checkout's user, for one test or benchmark; dropped by `drop`. */
export async function tempOrdersDatabase(
  label: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = ordersDbName(
    `${checkoutId()}_${label.replace(/[^a-z0-9]/g, "")}_${randomBytes(3).toString("hex")}`,
  );
  const user = process.env.ORDERS_DB_USER ?? `shop_${checkoutId()}`;
  const password = process.env.ORDERS_DB_PASSWORD ?? randomBytes(18).toString("base64url");
  const url = await asPostgresAdmin((c) => ensureOrdersDatabase(c, { name, user, password }));
  return {
    url,
    drop: () =>
      asPostgresAdmin(async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}
