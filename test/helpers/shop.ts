import { createLogger, type Logger } from "@shop/service";
import { type JsonResponse, send } from "../../harness/http.ts";
import { validateResponse } from "./openapi.ts";

export { brokerEnv, serviceEnv, tempDb, uniquePrefix } from "../../harness/env.ts";
export type { JsonResponse } from "../../harness/http.ts";
export {
  analyticsCli,
  countRows,
  logRecords,
  programArgs,
  queryRows,
  ServiceProcess,
} from "../../harness/process.ts";

/** A logger that keeps its lines, for asserting on what a service printed. */
export function capturingLogger(component: string): Logger & { lines: string[] } {
  const lines: string[] = [];
  const write = (line: string) => {
    lines.push(line);
    if (process.env.SHOP_TEST_LOGS) console.log(line);
  };
  return Object.assign(createLogger(component, write), { lines });
}

/**
 * One HTTP exchange with a service (harness/http.ts's send), whose answer is checked
 * against the OpenAPI description of the route it came from.
 */
export async function http<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const response = await send<T>(method, url, body, headers);
  await validateResponse(
    method,
    url,
    response.status,
    response.headers.get("content-type"),
    response.body,
  );
  return response;
}
