import { createLogger, runService } from "@shop/service";
import { readConfig } from "./config.ts";
import { startOrdersApi } from "./server.ts";

const log = createLogger("orders-api");
await runService("orders-api", () => startOrdersApi(readConfig(), log), log);
