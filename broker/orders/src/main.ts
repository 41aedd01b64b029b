import { createLogger, loadDotEnv, runService } from "@shop/service";
import { readConfig } from "./config.ts";
import { startOrders } from "./server.ts";

loadDotEnv();
const log = createLogger("broker-orders");
await runService("broker-orders", () => startOrders(readConfig(), log), log);
