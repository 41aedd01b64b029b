import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkoutId, type InfraConfig, type Log } from "../config.ts";
import { portStartedByInfra, stopKafka } from "./kafka.ts";

/** Where the runs that use a Kafka on this machine say so: one file per run, machine-wide. */
const USERS_DIR = join(tmpdir(), "shop-kafka-users");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * The runs (a test run, from any checkout) that use the Kafka on one address. A run that
 * started that Kafka stops it at its end only when no other run still uses it: a second
 * checkout's `npm test` that reused it would otherwise lose its broker mid-run.
 */
export function kafkaUsers(kafka: Pick<InfraConfig["kafka"], "host" | "port">) {
  const dir = join(USERS_DIR, `${kafka.host}_${kafka.port}`);
  const runs = () => {
    mkdirSync(dir, { recursive: true });
    return readdirSync(dir).map((file) => ({ file, pid: Number(file.split("-")[1]) }));
  };
  return {
    /** Says that process `pid` (this one by default) uses this Kafka until it leaves. */
    join(pid = process.pid) {
      mkdirSync(dir, { recursive: true });
      const file = `${checkoutId()}-${pid}-${Date.now().toString(36)}`;
      writeFileSync(join(dir, file), "");
      return { leave: () => rmSync(join(dir, file), { force: true }) };
    },
    /** The other processes that use it now; a run that died without leaving is forgotten. */
    others(): number[] {
      const pids = new Set<number>();
      for (const { file, pid } of runs()) {
        if (!Number.isInteger(pid) || !alive(pid)) rmSync(join(dir, file), { force: true });
        else if (pid !== process.pid) pids.add(pid);
      }
      return [...pids];
    },
  };
}

/**
 * Stops the single Kafka broker this checkout's infra started on this address, unless
 * another process still uses it (kafkaUsers); says which, then leaves it running. A broker
 * this checkout started on another port is not the one asked for, and is left running.
 */
export async function stopKafkaUnlessUsed(
  kafka: Pick<InfraConfig["kafka"], "host" | "port">,
  log: Log,
): Promise<{ stopped: boolean; inUse: boolean }> {
  const others = kafkaUsers(kafka).others();
  if (others.length > 0) {
    log(
      `kafka: left running, in use by pid ${others.join(", ")} (a test run, a lab or npm start, maybe of another checkout)`,
    );
    return { stopped: false, inUse: true };
  }
  const ours = portStartedByInfra();
  if (ours !== null && ours !== kafka.port) {
    log(
      `kafka: this checkout's infra runs its broker on port ${ours}, not ${kafka.port}; left running`,
    );
    return { stopped: false, inUse: false };
  }
  return { stopped: (await stopKafka(log)).stopped, inUse: false };
}
