import { createLogger, executarServico, loadDotEnv } from "@shop/service";
import { readConfig } from "./config.ts";
import { startOrders } from "./server.ts";

loadDotEnv();
const log = createLogger("broker-orders");
await executarServico(() => startOrders(readConfig(), log), log);
