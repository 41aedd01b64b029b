import { isMainThread } from "node:worker_threads";
import { kafkaProblem } from "@shop/kafka";
import { createLogger, readArguments } from "@shop/service";
import { ReplayRefused, runAnalytics } from "./analytics.ts";
import { readConfig } from "./config.ts";
import { AnalyticsOutput } from "./output.ts";

const USAGE = `usage: npm run analytics -- [--replay] [--until-caught-up] [--json] [--quiet]

Reads pedidos-criados and pagamentos-resultados in its own consumer group (GRUPO,
default analytics) and prints one line per record and the dashboard after each batch.

  --replay           reset the group's offsets to the earliest offset and read everything again
                     (refused while the group has an active member)
  --until-caught-up  exit with the final dashboard once the end offsets seen at start are read
  --json             print the final dashboard as JSON on stdout (everything else goes to stderr)
  --quiet            no per-record lines or per-batch dashboards
  --help             this text`;

async function main(): Promise<number> {
  const parsed = readArguments(
    {
      options: {
        replay: { type: "boolean" },
        "until-caught-up": { type: "boolean" },
        json: { type: "boolean" },
        quiet: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    },
    USAGE,
  );
  if (!parsed) return 2;
  const { values } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const config = readConfig();
  const output = new AnalyticsOutput({ json: Boolean(values.json), quiet: Boolean(values.quiet) });
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());
  try {
    await runAnalytics({
      brokers: config.kafkaBrokers,
      security: config.kafkaSecurity,
      prefix: config.kafkaPrefix,
      grupo: config.grupo,
      replay: Boolean(values.replay),
      untilCaughtUp: Boolean(values["until-caught-up"]),
      output: output,
      log: createLogger("analytics", "stderr"),
      signal: stop.signal,
    });
    return 0;
  } catch (error) {
    if (error instanceof ReplayRefused) {
      console.error(`analytics: ${error.message}`);
      return 3;
    }
    console.error(`analytics: ${kafkaProblem(config.kafkaBrokers, error)}`);
    return 1;
  }
}

// Built, this file is also what the decoding thread loads (decoder.ts): it runs the CLI on
// the main thread only.
if (isMainThread) process.exitCode = await main();
