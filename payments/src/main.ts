import { createLogger, runService } from "@shop/service";
import { readConfig } from "./config.ts";
import { startPayments } from "./server.ts";

const config = readConfig();
const log = createLogger(`payments ${config.instancia}`);
await runService("payments", () => startPayments(config, log), log);
