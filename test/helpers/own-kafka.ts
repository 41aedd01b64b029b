import { existsSync, readFileSync } from "node:fs";
import { startKafka, stopKafka } from "../../infra/kafka/kafka.ts";

/**
 * Linux hands out ports in this range as the local end of outgoing connections; a broker
 * told to listen on one of them fails to start whenever some client holds it (CI saw it).
 */
function ephemeralRange(): [number, number] {
  const file = "/proc/sys/net/ipv4/ip_local_port_range";
  if (!existsSync(file)) return [32768, 60999];
  const [low, high] = readFileSync(file, "utf8").trim().split(/\s+/).map(Number);
  return [low ?? 32768, high ?? 60999];
}

/**
 * A Kafka broker of the test's own, on its own ports and data folder, that the test may
 * stop, kill and restart without touching the broker every other test uses.
 */
export function ownKafka(instance: string, port: number) {
  const [low, high] = ephemeralRange();
  if (port + 1 >= low && port <= high) {
    throw new Error(
      `ownKafka: ports ${port}-${port + 1} fall in the ephemeral range ${low}-${high}`,
    );
  }
  const settings = {
    brokers: [`127.0.0.1:${port}`],
    host: "127.0.0.1",
    port,
    controllerPort: port + 1,
  };
  const log = (line: string) => {
    if (process.env.SHOP_TEST_LOGS) console.log(`[${instance}] ${line}`);
  };
  return {
    brokers: settings.brokers.join(","),
    start: () => startKafka(settings, log, { instance }),
    stop: () => stopKafka(log, { instance }),
    kill: () => stopKafka(log, { instance, signal: "SIGKILL" }),
  };
}
