import { createLogger, onShutdown } from "@shop/service";
import { readConfig } from "./config.ts";
import { startOrdersApi } from "./server.ts";

const log = createLogger("orders-api");
try {
  const api = await startOrdersApi(readConfig(), log);
  onShutdown(api.stop, log);
} catch (error) {
  log.error("could not start", { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
