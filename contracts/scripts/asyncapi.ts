import { asyncapiBroker, asyncapiEventLog } from "../src/asyncapi.ts";

/** npm run asyncapi -- event-log | broker: prints that edition's AsyncAPI 3 document. */
const edicao = process.argv[2];
const documentos: Record<string, () => unknown> = {
  "event-log": asyncapiEventLog,
  broker: asyncapiBroker,
};
const gerar = edicao ? documentos[edicao] : undefined;
if (!gerar) {
  console.error("usage: npm run asyncapi -- event-log | broker   (prints the AsyncAPI 3 document)");
  process.exit(2);
}
console.log(JSON.stringify(gerar(), null, 2));
