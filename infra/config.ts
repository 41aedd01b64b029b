import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DOTENV_PATH, lerAmbiente } from "@shop/service";
import { z } from "zod";

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The .env that every program loads (loadDotEnv in libs/service). */
const ENV_FILE = DOTENV_PATH;
const ENV_EXAMPLE = join(ROOT, ".env.example");

/**
 * Creates .env from .env.example when it is absent, giving the broker a local user name
 * and a random password, and Grafana a random admin password. Nothing secret is ever committed: .env is git-ignored.
 */
export function ensureEnvFile(): { created: boolean; path: string } {
  if (existsSync(ENV_FILE)) return { created: false, path: ENV_FILE };
  const example = readFileSync(ENV_EXAMPLE, "utf8");
  const filled = example
    .replace("<broker-user>", "shop")
    .replace("<broker-password>", randomBytes(18).toString("base64url"))
    .replace("<grafana-password>", randomBytes(18).toString("base64url"));
  writeFileSync(ENV_FILE, filled, { mode: 0o600 });
  return { created: true, path: ENV_FILE };
}

const placeholder = /^<.*>$/;
const secret = (name: string) =>
  z
    .string({ error: `${name} is not set: run \`npm run setup\` or copy .env.example to .env` })
    .min(1, { error: `${name} is empty` })
    .refine((v) => !placeholder.test(v), { error: `${name} still holds its placeholder` });

const hostPort = z
  .string()
  .regex(/^[^:,\s]+:\d+(,[^:,\s]+:\d+)*$/, { error: "must be host:port[,host:port...]" });

const InfraEnv = z.object({
  KAFKA_BROKERS: hostPort.default("127.0.0.1:9092"),
  KAFKA_CONTROLLER_PORT: z.coerce.number().int().min(1).max(65535).default(9093),
  BROKER_HOST: z.string().default("127.0.0.1"),
  BROKER_PORT: z.coerce.number().int().min(1).max(65535).default(5672),
  BROKER_PANEL_PORT: z.coerce.number().int().min(1).max(65535).default(15672),
  BROKER_VHOST: z.string().default("/"),
  BROKER_USER: secret("BROKER_USER"),
  BROKER_PASSWORD: secret("BROKER_PASSWORD"),
});

export interface InfraConfig {
  kafka: { brokers: string[]; host: string; port: number; controllerPort: number };
  rabbit: {
    host: string;
    port: number;
    panelPort: number;
    vhost: string;
    user: string;
    password: string;
  };
}

export function readInfraConfig(env: NodeJS.ProcessEnv = process.env): InfraConfig {
  const e = lerAmbiente(InfraEnv, env);
  const brokers = e.KAFKA_BROKERS.split(",");
  const [host, port] = (brokers[0] as string).split(":") as [string, string];
  return {
    kafka: { brokers, host, port: Number(port), controllerPort: e.KAFKA_CONTROLLER_PORT },
    rabbit: {
      host: e.BROKER_HOST,
      port: e.BROKER_PORT,
      panelPort: e.BROKER_PANEL_PORT,
      vhost: e.BROKER_VHOST,
      user: e.BROKER_USER,
      password: e.BROKER_PASSWORD,
    },
  };
}

export type Log = (line: string) => void;
