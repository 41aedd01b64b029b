import { createLogger, executarServico } from "@shop/service";
import { readConfig } from "./config.ts";
import { startOrdersApi } from "./server.ts";

const log = createLogger("orders-api");
await executarServico(() => startOrdersApi(readConfig(), log), log);
