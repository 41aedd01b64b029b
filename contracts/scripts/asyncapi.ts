import { asyncapiBroker, asyncapiEventLog } from "../src/asyncapi.ts";

/** npm run asyncapi -- event-log | broker: prints that edition's AsyncAPI 3 document. */
const edition = process.argv[2];
const documents: Record<string, () => unknown> = {
  "event-log": asyncapiEventLog,
  broker: asyncapiBroker,
};
const write = edition ? documents[edition] : undefined;
if (!write) {
  console.error("usage: npm run asyncapi -- event-log | broker   (prints the AsyncAPI 3 document)");
  process.exit(2);
}
console.log(JSON.stringify(write(), null, 2));
