import { createLogger, escapeControls, loadDotEnv, readArguments } from "@shop/service";
import { type CartaMorta, json, linha } from "./cartas.ts";
import { readConfig } from "./config.ts";
import { kafkaDlq } from "./kafka.ts";
import { rabbitDlq } from "./rabbitmq.ts";

const USAGE = `usage: npm run dlq -- <command> [options]

Dead letters of both editions: Kafka's <topic>.dlq topics and RabbitMQ's .erros queues.

  list                 every dead letter: id, state, origin, attempts, reason, body
  show <id>            one dead letter, whole (headers and body)
  redrive <id>         put one back on its original path
  redrive --all        put every pending one back
  options: --edition kafka|rabbitmq (default: both), --json`;

/** Where dead letters come from: Kafka's .dlq topics or RabbitMQ's .erros queues. */
type Fonte = ReturnType<typeof kafkaDlq> | ReturnType<typeof rabbitDlq>;

async function main(): Promise<number> {
  loadDotEnv();
  const parsed = readArguments(
    {
      allowPositionals: true,
      options: {
        all: { type: "boolean" },
        json: { type: "boolean" },
        edition: { type: "string" },
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
  const fontes: Fonte[] = [];
  if (values.edition !== "rabbitmq")
    fontes.push(kafkaDlq(config.kafkaBrokers, config.kafkaPrefix, log));
  if (values.edition !== "kafka") {
    if (config.rabbit) fontes.push(rabbitDlq(config.rabbit, log));
    else if (values.edition === "rabbitmq")
      throw new Error("BROKER_USER and BROKER_PASSWORD are needed for RabbitMQ (see .env)");
  }

  const todas = async () => (await Promise.all(fontes.map((f) => f.ler()))).flat();
  const print = (cartas: CartaMorta[]) => {
    if (values.json) console.log(json(cartas));
    else for (const c of cartas) console.log(linha(c));
  };

  switch (command) {
    case "list": {
      const cartas = await todas();
      print(cartas);
      if (!values.json)
        console.log(
          `${cartas.length} dead letter(s), ${cartas.filter((c) => c.estado === "pendente").length} pending`,
        );
      return 0;
    }
    case "show": {
      const c = (await todas()).find((x) => x.id === id);
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
      const feitos = (
        await Promise.all(fontes.map((f) => f.reenviar((c) => values.all === true || c.id === id)))
      ).flat();
      for (const c of feitos) console.log(escapeControls(`redriven: ${c.id} -> ${c.origem}`));
      console.log(`${feitos.length} dead letter(s) redriven`);
      return feitos.length === 0 && id ? 1 : 0;
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
