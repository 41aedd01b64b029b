import { createLogger, loadDotEnv, onShutdown } from "@shop/service";
import { readConfig } from "./config.ts";
import { startPayments } from "./server.ts";

loadDotEnv();
const log = createLogger("broker-payments");
try {
  const service = await startPayments(readConfig(), log);
  onShutdown(service.stop, log);
} catch (error) {
  log.error("could not start", { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
