import { MODOS } from "@shop/contracts";
import { kafkaEnvShape, kafkaServiceSettings } from "@shop/kafka";
import { httpEnvShape, readEnvironment } from "@shop/service";
import { z } from "zod";

/** Every setting of a payments instance, read once from the environment. */
export const envSchema = z.object({
  INSTANCIA: z.string().trim().min(1).default("caixa-1"),
  ...httpEnvShape(5001),
  ...kafkaEnvShape,
  /** The simulated decision time per record (3 s in the spec); tests and benchmarks shorten it. */
  TEMPO_DECISAO_MS: z.coerce.number().int().min(0).default(3000),
  /**
   * Partitions an instance decides side by side. 1 (the spec's rule 6: one thread, 3 s per
   * record): a second and third instance in the group are what makes payments faster.
   */
  PARTICOES_EM_PARALELO: z.coerce.number().int().min(1).max(64).default(1),
  /** eventos: consume pedidos-criados; sincrono: only POST /pagamentos, no Kafka. */
  MODO: z.enum(MODOS).default("eventos"),
  /**
   * Offsets are committed automatically at this interval: 5 s in the spec; 1 s by default
   * with ENTREGA=exatamente-uma-vez (EXACTLY_ONCE_COMMIT_MS).
   */
  COMMIT_INTERVAL_MS: z.coerce.number().int().positive().optional(),
  /**
   * pelo-menos-uma-vez (the spec): a result is published, then its offset committed; a
   * crash between them publishes it again. exatamente-uma-vez: the result and the offset
   * are committed in one Kafka transaction (read_committed readers never see a result
   * whose transaction did not commit).
   */
  ENTREGA: z.enum(["pelo-menos-uma-vez", "exatamente-uma-vez"]).default("pelo-menos-uma-vez"),
});

export type Config = ReturnType<typeof readConfig>;

export function readConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = readEnvironment(envSchema, env);
  return {
    ...kafkaServiceSettings(e),
    instancia: e.INSTANCIA,
    decisionWaitMs: e.TEMPO_DECISAO_MS,
    partitionsAtOnce: e.PARTICOES_EM_PARALELO,
    modo: e.MODO,
    commitIntervalMs:
      e.COMMIT_INTERVAL_MS ??
      (e.ENTREGA === "exatamente-uma-vez" ? EXACTLY_ONCE_COMMIT_MS : SPEC_COMMIT_MS),
    exactlyOnce: e.ENTREGA === "exatamente-uma-vez",
  };
}

/** The spec's offset commit interval. */
export const SPEC_COMMIT_MS = 5_000;

/**
 * Exactly-once, a result becomes visible to read_committed readers (the orders API) only
 * when its transaction commits, and a transaction is committed at this interval or at the
 * batch's end: the interval is also how late results arrive. At 5 s, the payments kill
 * row of the fault suite resumed 3.5 s after the session's end (its next owner's first
 * batch of twelve 300 ms decisions in one transaction); each second, a commit costs a few
 * milliseconds of a 3 s decision (issue 55).
 */
export const EXACTLY_ONCE_COMMIT_MS = 1_000;
