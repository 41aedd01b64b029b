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

/** What the person typed, parsed. */
interface Command {
  command: string;
  id: string | undefined;
  values: { all?: boolean; json?: boolean; edition?: string; corpo?: string };
}

/** The sources asked for, and how a failure of one is said. */
interface Cli {
  sources: Source[];
  problemOf: (source: Source, error: unknown) => string;
}

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
  const cli = openSources(values.edition);
  const asked: Command = { command, id, values };
  if (command === "list") return listLetters(cli, asked);
  if (command === "show") return showLetter(cli, asked);
  if (command === "redrive") return redriveCommand(cli, asked);
  console.error(`unknown command ${command}\n\n${USAGE}`);
  return 2;
}

/** Kafka's and RabbitMQ's sources, or the one --edition names. */
function openSources(edition: string | undefined): Cli {
  const config = readConfig();
  const log = createLogger("dlq", "stderr");
  const sources: Source[] = [];
  if (edition !== "rabbitmq")
    sources.push(kafkaDlq(config.kafkaBrokers, config.kafkaPrefix, log, config.kafkaSecurity));
  if (edition !== "kafka") {
    if (config.rabbit) sources.push(rabbitDlq(config.rabbit, log));
    else if (edition === "rabbitmq")
      throw new Error("BROKER_USER and BROKER_PASSWORD are needed for RabbitMQ (see .env)");
  }
  const problemOf = (source: Source, error: unknown) =>
    source.name === "Kafka"
      ? kafkaProblem(config.kafkaBrokers, error)
      : error instanceof Error
        ? error.message
        : String(error);
  return { sources, problemOf };
}

/**
 * Each source read on its own: one that cannot be read is said in one sentence on stderr
 * (never a stack trace), and what the others hold is still listed. Null when no source
 * could be read at all.
 */
async function readAll({ sources, problemOf }: Cli): Promise<DeadLetter[] | null> {
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
}

async function listLetters(cli: Cli, { values }: Command): Promise<number> {
  const letters = await readAll(cli);
  if (letters === null) return 1;
  if (values.json) console.log(json(letters));
  else for (const c of letters) console.log(line(c));
  if (!values.json) {
    const pending = letters.filter((c) => c.estado === "pendente").length;
    console.log(`${letters.length} dead letter(s), ${pending} pending`);
  }
  return 0;
}

async function showLetter(cli: Cli, { id }: Command): Promise<number> {
  const c = (await readAll(cli))?.find((x) => x.id === id);
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

/** The arguments of redrive checked: an id or --all, and --corpo only with one id and as JSON. */
function redriveRefusal({ id, values }: Command): string | null {
  if (!id && !values.all) return `redrive needs an id or --all\n\n${USAGE}`;
  const corpo = values.corpo;
  if (corpo === undefined) return null;
  if (!id || values.all) return "--corpo fixes one letter: give its id, not --all";
  try {
    JSON.parse(corpo);
    return null;
  } catch {
    return "--corpo must be the fixed body as JSON text (quote it for the shell)";
  }
}

async function redriveCommand({ sources, problemOf }: Cli, asked: Command): Promise<number> {
  const refusal = redriveRefusal(asked);
  if (refusal) {
    console.error(refusal);
    return 2;
  }
  const { id, values } = asked;
  const corpo = values.corpo;
  // A letter's id names its edition: a source that cannot hold it is not asked.
  const askedSources = sources.filter(
    (f) => values.all === true || id?.startsWith(`${f.name.toLowerCase()}:`),
  );
  const done = (
    await Promise.all(
      askedSources.map((f) =>
        f
          .redrive((c) => values.all === true || c.id === id, corpo)
          .catch((error: unknown) => {
            console.error(`dlq: ${problemOf(f, error)}`);
            return [];
          }),
      ),
    )
  ).flat();
  for (const source of askedSources) for (const note of source.notes) console.error(`dlq: ${note}`);
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

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`dlq: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
