import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Where a run keeps its logs (SHOP_TEST_LOG_DIR, which the fault suite sets), created when
 * needed; null when the run keeps none.
 */
export function runLogDir(): string | null {
  const dir = process.env.SHOP_TEST_LOG_DIR;
  if (!dir) return null;
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Marks a step of a scenario in SHOP_TEST_LOG_DIR/steps.log (the fault suite sets it) with
 * its time: where a run that failed or hung on CI stopped, beside the services' and the
 * brokers' logs of the same directory.
 */
export function step(scenario: string, what: string): void {
  const dir = runLogDir();
  if (!dir) return;
  appendFileSync(join(dir, "steps.log"), `${new Date().toISOString()} ${scenario}: ${what}\n`);
}
