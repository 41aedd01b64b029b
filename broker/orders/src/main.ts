import { createLogger, loadDotEnv, onShutdown } from "@shop/service";
import { readConfig } from "./config.ts";
import { startOrders } from "./server.ts";

loadDotEnv();
const log = createLogger("broker-orders");
try {
  const service = await startOrders(readConfig(), log);
  onShutdown(service.stop, log);
} catch (error) {
  log.error("could not start", { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
