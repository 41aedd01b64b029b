// Run from source (tsx, the tests), the decoding thread starts here: a worker does not get
// the main thread's TypeScript loader, so this plain module loads decoder.ts through tsx.
// Built, decoder.ts's thread is the bundle itself and this file is not used.
import { workerData } from "node:worker_threads";
import { tsImport } from "tsx/esm/api";

await tsImport(workerData.file, import.meta.url);
