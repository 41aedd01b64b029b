import {
  ensureEnvFile,
  type InfraConfig,
  loadEnvFile,
  readInfraConfig,
} from "../../infra/config.ts";

/** The brokers' addresses and credentials, read the same way the services read them. */
export function testConfig(): InfraConfig {
  ensureEnvFile();
  loadEnvFile();
  return readInfraConfig();
}
