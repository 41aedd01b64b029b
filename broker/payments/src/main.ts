import { createLogger, loadDotEnv, runService } from "@shop/service";
import { readConfig } from "./config.ts";
import { startPayments } from "./server.ts";

loadDotEnv();
const log = createLogger("broker-payments");
await runService("broker-payments", () => startPayments(readConfig(), log), log);
