import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger, type Logger } from "@shop/service";
import { programArgs, ServiceProcess } from "../../lab/src/process.ts";
import { testConfig } from "./env.ts";
import { uniqueName } from "./kafka.ts";
import { validateResponse } from "./openapi.ts";
import { testLogDir } from "./wait.ts";

export { countRows, logRecords, queryRows } from "../../lab/src/process.ts";
export { programArgs, ServiceProcess };

ServiceProcess.logDir = testLogDir;
if (process.env.SHOP_TEST_LOGS)
  ServiceProcess.echo = (name, line) => console.log(`[${name}] ${line}`);

/** A fresh database path in a temporary folder. */
export function tempDb(name = "test"): string {
  return join(mkdtempSync(join(tmpdir(), `${name}-`)), `${name}.db`);
}

/** A logger that keeps its lines, for asserting on what a service printed. */
export function capturingLogger(component: string): Logger & { lines: string[] } {
  const lines: string[] = [];
  const write = (line: string) => {
    lines.push(line);
    if (process.env.SHOP_TEST_LOGS) console.log(line);
  };
  return Object.assign(createLogger(component, write), { lines });
}

/** Environment for a service under test: its own topic/group prefix, port 0, loopback. */
export function serviceEnv(prefix: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PORTA: "0",
    HOST: "127.0.0.1",
    KAFKA_BROKERS: testConfig().kafka.brokers.join(","),
    KAFKA_PREFIXO: prefix,
    ...extra,
  };
}

export const testPrefix = (name: string) => `${uniqueName(name)}.`;

export interface JsonResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export async function http<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const response = await fetch(url, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  await validateResponse(
    method,
    url,
    response.status,
    response.headers.get("content-type"),
    parsed,
  );
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** The analytics CLI reading to the current end, printing its summary as JSON. */
export function analyticsCli(brokers: string, prefix: string, grupo: string) {
  return {
    args: [...programArgs("analytics"), "--until-caught-up", "--json", "--quiet"],
    env: { ...process.env, KAFKA_BROKERS: brokers, KAFKA_PREFIXO: prefix, GRUPO: grupo },
  };
}
