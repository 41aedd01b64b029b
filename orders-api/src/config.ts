import { MODOS } from "@shop/contracts";
import { kafkaEnvShape, kafkaServiceSettings } from "@shop/kafka";
import { frontOriginShape, httpEnvShape, readEnvironment } from "@shop/service";
import { z } from "zod";

/** Every setting of the orders API, read once from the environment. */
export const envSchema = z.object({
  ...httpEnvShape(8080),
  ...kafkaEnvShape,
  ...frontOriginShape,
  DB_PATH: z.string().default(".data/pedidos.db"),
  /**
   * The instance's name, when several share one database: its Kafka client id becomes
   * orders-api-<INSTANCIA>, so the platform panel tells the pedidos-api group's members apart.
   */
  INSTANCIA: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/, "1 to 40 lowercase letters, digits or hyphens")
    .optional(),
  /**
   * postgres://user:password@host:port/database: the orders are kept in PostgreSQL, which
   * several instances share (issue 37); without it, in the SQLite file at DB_PATH.
   */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "a postgres:// or postgresql:// URL")
    .optional(),
  /** eventos: publish PedidoCriado; sincrono: the earlier configuration, HTTP to payments. */
  MODO: z.enum(MODOS).default("eventos"),
  PAGAMENTOS_URL: z.string().url().default("http://127.0.0.1:5001"),
  /**
   * ligado: the order and its PedidoCriado are saved in one transaction and a relay
   * publishes it (nothing is orphaned); desligado: the spec's configuration, where an
   * event that is not confirmed is lost and the order is orphaned.
   */
  OUTBOX: z.enum(["ligado", "desligado"]).default("ligado"),
  /** How long POST /pedidos waits for Kafka's acknowledgement. */
  CONFIRMACAO_MS: z.coerce.number().int().positive().default(5000),
  /**
   * Fault injection: the outbox relay waits this long after Kafka acknowledged a batch,
   * before marking it sent, so that a test can kill it inside that window.
   */
  PAUSA_ANTES_DE_MARCAR_MS: z.coerce.number().int().min(0).default(0),
});

export type Config = ReturnType<typeof readConfig>;

export function readConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = readEnvironment(envSchema, env);
  return {
    ...kafkaServiceSettings(e),
    frontOrigin: e.FRONT_ORIGIN,
    dbPath: e.DB_PATH,
    databaseUrl: e.DATABASE_URL ?? null,
    clientId: e.INSTANCIA ? `orders-api-${e.INSTANCIA}` : "orders-api",
    modo: e.MODO,
    pagamentosUrl: e.PAGAMENTOS_URL,
    confirmMs: e.CONFIRMACAO_MS,
    outbox: e.OUTBOX === "ligado",
    pauseBeforeMarkMs: e.PAUSA_ANTES_DE_MARCAR_MS,
  };
}
