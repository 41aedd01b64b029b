import { createLogger, onShutdown } from "@shop/service";
import { readConfig } from "./config.ts";
import { startPayments } from "./server.ts";

const config = readConfig();
const log = createLogger(`payments ${config.instancia}`);
try {
  const instance = await startPayments(config, log);
  onShutdown(instance.stop, log);
} catch (error) {
  log.error("could not start", { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
