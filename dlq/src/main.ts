import { kafkaProblem } from "@shop/kafka";
import { createLogger, escapeControls, loadDotEnv, readArguments } from "@shop/service";
import { readConfig } from "./config.ts";
import { kafkaDlq } from "./kafka.ts";
import { type DeadLetter, json, line } from "./letters.ts";
import { rabbitDlq } from "./rabbitmq.ts";

const USAGE = `usage: npm run dlq -- <command> [options]

Dead letters of both editions: Kafka's <topic>.dlq topics and RabbitMQ's .erros queues.

  list                 every dead letter: id, state, origin, attempts, reason, body
  show <id>            one dead letter, whole (headers and body)
  redrive <id>         put one back on its original path, as it was
  redrive <id> --corpo '<json>'
                       put a fixed copy back instead: this body, the letter's key and headers
  redrive --all        put every pending one back
  options: --edition kafka|rabbitmq (default: both), --json`;

/** Where dead letters come from: Kafka's .dlq topics or RabbitMQ's .erros queues. */
type Source = ReturnType<typeof kafkaDlq> | ReturnType<typeof rabbitDlq>;

async function main(): Promise<number> {
  loadDotEnv();
  const parsed = readArguments(
    {
      allowPositionals: true,
      options: {
        all: { type: "boolean" },
        json: { type: "boolean" },
        edition: { type: "string" },
        corpo: { type: "string" },
        help: { type: "boolean" },
      },
    },
    USAGE,
  );
  if (!parsed) return 2;
  const { values, positionals } = parsed;
  const [command, id] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  if (values.edition && !["kafka", "rabbitmq"].includes(values.edition)) {
    console.error(`--edition must be kafka or rabbitmq\n\n${USAGE}`);
    return 2;
  }
  const config = readConfig();
  const log = createLogger("dlq", "stderr");
  const sources: Source[] = [];
  if (values.edition !== "rabbitmq")
    sources.push(kafkaDlq(config.kafkaBrokers, config.kafkaPrefix, log, config.kafkaSecurity));
  if (values.edition !== "kafka") {
    if (config.rabbit) sources.push(rabbitDlq(config.rabbit, log));
    else if (values.edition === "rabbitmq")
      throw new Error("BROKER_USER and BROKER_PASSWORD are needed for RabbitMQ (see .env)");
  }

  /**
   * Each source read on its own: one that cannot be read is said in one sentence on
   * stderr (never a stack trace), and what the others hold is still listed. Null when no
   * source could be read at all.
   */
  const all = async (): Promise<DeadLetter[] | null> => {
    const read = await Promise.all(
      sources.map((source) =>
        source.read().catch((error: unknown) => {
          console.error(`dlq: ${problemOf(source, error)}`);
          return null;
        }),
      ),
    );
    for (const source of sources) for (const note of source.notes) console.error(`dlq: ${note}`);
    const readable = read.filter((letters) => letters !== null);
    return readable.length === 0 ? null : readable.flat();
  };
  const problemOf = (source: Source, error: unknown) =>
    source.name === "Kafka"
      ? kafkaProblem(config.kafkaBrokers, error)
      : error instanceof Error
        ? error.message
        : String(error);
  const print = (letters: DeadLetter[]) => {
    if (values.json) console.log(json(letters));
    else for (const c of letters) console.log(line(c));
  };

  switch (command) {
    case "list": {
      const letters = await all();
      if (letters === null) return 1;
      print(letters);
      if (!values.json)
        console.log(
          `${letters.length} dead letter(s), ${letters.filter((c) => c.estado === "pendente").length} pending`,
        );
      return 0;
    }
    case "show": {
      const c = (await all())?.find((x) => x.id === id);
      if (!c) {
        console.error(
          escapeControls(
            `no dead letter ${id ?? "(none given)"}; \`npm run dlq -- list\` shows the ids`,
          ),
        );
        return 1;
      }
      console.log(json(c));
      return 0;
    }
    case "redrive": {
      if (!id && !values.all) {
        console.error(`redrive needs an id or --all\n\n${USAGE}`);
        return 2;
      }
      const corpo = values.corpo;
      if (corpo !== undefined) {
        if (!id || values.all) {
          console.error("--corpo fixes one letter: give its id, not --all");
          return 2;
        }
        try {
          JSON.parse(corpo);
        } catch {
          console.error("--corpo must be the fixed body as JSON text (quote it for the shell)");
          return 2;
        }
      }
      // A letter's id names its edition: a source that cannot hold it is not asked.
      const asked = sources.filter(
        (f) => values.all === true || id?.startsWith(`${f.name.toLowerCase()}:`),
      );
      const done = (
        await Promise.all(
          asked.map((f) =>
            f
              .redrive((c) => values.all === true || c.id === id, corpo)
              .catch((error: unknown) => {
                console.error(`dlq: ${problemOf(f, error)}`);
                return [];
              }),
          ),
        )
      ).flat();
      for (const source of asked) for (const note of source.notes) console.error(`dlq: ${note}`);
      const how = corpo === undefined ? "" : " (a fixed copy)";
      for (const c of done) console.log(escapeControls(`redriven${how}: ${c.id} -> ${c.origem}`));
      console.log(`${done.length} dead letter(s) redriven`);
      if (done.length === 0 && id) {
        console.error(
          escapeControls(
            `no pending dead letter ${id}; \`npm run dlq -- list\` shows the ids and their state`,
          ),
        );
        return 1;
      }
      return 0;
    }
    default:
      console.error(`unknown command ${command}\n\n${USAGE}`);
      return 2;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`dlq: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
