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
  /** eventos: consume pedidos-criados; sincrono: only POST /pagamentos, no Kafka. */
  MODO: z.enum(MODOS).default("eventos"),
  /** Offsets are committed automatically at this interval (5 s in the spec). */
  COMMIT_INTERVAL_MS: z.coerce.number().int().positive().default(5000),
});

export type Config = ReturnType<typeof readConfig>;

export function readConfig(env: NodeJS.ProcessEnv = process.env) {
  const e = readEnvironment(envSchema, env);
  return {
    ...kafkaServiceSettings(e),
    instancia: e.INSTANCIA,
    decisionWaitMs: e.TEMPO_DECISAO_MS,
    modo: e.MODO,
    commitIntervalMs: e.COMMIT_INTERVAL_MS,
  };
}
