import { readArguments } from "@shop/service";
import { portIsFree } from "../../infra/ports.ts";
import type { Experiment } from "./experiment.ts";
import { brokerCourse } from "./experiments/broker-course.ts";
import { failover } from "./experiments/failover.ts";
import { kafkaDown } from "./experiments/kafka-down.ts";
import { poison } from "./experiments/poison.ts";
import { rebalance } from "./experiments/rebalance.ts";
import { replay } from "./experiments/replay.ts";
import { scaleOut } from "./experiments/scale-out.ts";
import { Narrator } from "./narrator.ts";
import { LabWorld } from "./world.ts";

const EXPERIMENTS: Experiment[] = [
  rebalance,
  kafkaDown,
  poison,
  replay,
  brokerCourse,
  failover,
  scaleOut,
];

const USAGE = `usage: npm run lab -- <experiment> [--port N]
       npm run lab -- list

Runs one experiment against the real brokers: it starts what it needs (services under
names of their own, beside any shop you run), says what it does and what to watch,
checks the outcome from the shop's real state (PASS or FAIL lines) and stops what it
started. Exit status 0 when every check passed.

  --port N    the orders service's port (default 8080 when free, otherwise any free port)
  --help      this text`;

async function main(): Promise<number> {
  const parsed = readArguments(
    {
      allowPositionals: true,
      options: { port: { type: "string" }, help: { type: "boolean", short: "h" } },
    },
    USAGE,
  );
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  const [which] = positionals;
  if (values.help || which === undefined) {
    console.log(USAGE);
    return which === undefined && !values.help ? 2 : 0;
  }
  if (which === "list") {
    const width = Math.max(...EXPERIMENTS.map((e) => e.name.length));
    for (const e of EXPERIMENTS) console.log(`${e.name.padEnd(width)}  ${e.summary}`);
    return 0;
  }
  const experiment = EXPERIMENTS.find((e) => e.name === which);
  if (!experiment) {
    console.error(
      `lab: no experiment named ${JSON.stringify(which)}; \`npm run lab -- list\` lists them`,
    );
    return 2;
  }
  const port =
    values.port === undefined ? ((await portIsFree(8080)) ? 8080 : 0) : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`lab: --port takes a port number from 0 to 65535, not ${values.port}`);
    return 2;
  }

  const say = new Narrator();
  const world = new LabWorld(experiment.name, say, { port });
  const started = Date.now();
  say.title(experiment.name, experiment.summary);
  const interrupted = () => {
    say.saw("Interrompido: parando o que o experimento iniciou.");
    void world.cleanUp().then(() => process.exit(130));
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    await experiment.run(world);
  } catch (error) {
    say.check(false, `o experimento não pôde seguir: ${(error as Error).message}`);
  } finally {
    say.doing("Parando o que o experimento iniciou");
    await world.cleanUp();
  }
  return say.finish(experiment.name, (Date.now() - started) / 1000);
}

process.exitCode = await main();
