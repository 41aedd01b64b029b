import { loadDotEnv } from "@shop/service";
import { ensureEnvFile, type InfraConfig, readInfraConfig } from "../../infra/config.ts";

/** The brokers' addresses and credentials, read the same way the services read them. */
export function testConfig(): InfraConfig {
  ensureEnvFile();
  loadDotEnv();
  return readInfraConfig();
}
