import { createLogger, executarServico, loadDotEnv } from "@shop/service";
import { readConfig } from "./config.ts";
import { startPayments } from "./server.ts";

loadDotEnv();
const log = createLogger("broker-payments");
await executarServico(() => startPayments(readConfig(), log), log);
