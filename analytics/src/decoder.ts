import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { PedidoCriado, ResultadoPagamento, type StatusPagamento } from "@shop/contracts";
import { fromColumn, KEPT_FIELDS, type KeptFields, toColumn } from "./domain/orders-view.ts";

/**
 * Decoding off the thread that fetches. kafkajs fetches, then hands its batches over, then
 * fetches again: on one thread, a replay's decoding (JSON and the contract's checks, most
 * of its time) and Kafka's fetching take turns. Here a worker thread decodes a batch while
 * the main thread fetches the next one and applies the one before, so a replay uses both
 * cores, as Kafka's own ConsumerPerformance does with its fetcher thread.
 *
 * A batch goes over as its values laid end to end in one buffer (moved, not copied); what
 * comes back is one number array per batch and the text it names once per distinct text.
 * Batches are decoded and given back in the order they were handed over.
 */

const ROLE = "analytics-decoder";
/**
 * Numbers per record in a decoded batch: PedidoCriado [pedidoId, then each kept field in
 * KEPT_FIELDS's order]; ResultadoPagamento [pedidoId, status].
 */
const STRIDE = 1 + Math.max(KEPT_FIELDS.length, 1);

/** A batch's values, laid end to end: value i is bytes [ends[i-1], ends[i]) (null: -1). */
interface DecodeRequest {
  id: number;
  criado: boolean;
  bytes: Uint8Array;
  ends: Int32Array;
}

interface DecodeReply {
  id: number;
  /**
   * Per record, STRIDE numbers (see STRIDE); a text field and the status index `texts`
   * (-1: absent), an absent number is NaN. An invalid record is pedidoId NaN, its reason
   * in `invalid`.
   */
  numbers: Float64Array;
  /** Text seen for the first time in this batch, appended to the thread's table in order. */
  newTexts: string[];
  invalid: [index: number, reason: string][];
}

export type DecodedRecord =
  | ({ ok: true; criado: true; pedidoId: number } & KeptFields)
  | { ok: true; criado: false; pedidoId: number; status: StatusPagamento }
  | { ok: false; reason: string };

/** One batch decoded: its records in order, read without building an object per record. */
export class DecodedBatch {
  constructor(
    readonly criado: boolean,
    private readonly numbers: Float64Array,
    private readonly texts: string[],
    private readonly invalid: Map<number, string>,
  ) {}

  get length(): number {
    return this.numbers.length / STRIDE;
  }

  record(i: number): DecodedRecord {
    const at = i * STRIDE;
    const pedidoId = this.numbers[at] as number;
    if (Number.isNaN(pedidoId)) return { ok: false, reason: this.invalid.get(i) ?? "" };
    const n = this.numbers;
    if (!this.criado) {
      // Only a decoded status is ever put in the table at this index.
      const status = this.texts[n[at + 1] as number] as StatusPagamento;
      return { ok: true, criado: false, pedidoId, status };
    }
    // One object, its fields added in the same order each time.
    const record: Record<string, unknown> = { ok: true, criado: true, pedidoId };
    for (let f = 0; f < KEPT_FIELDS.length; f++) {
      const [field, kind] = KEPT_FIELDS[f] as (typeof KEPT_FIELDS)[number];
      record[field] = fromColumn(kind, n[at + 1 + f] as number, this.texts);
    }
    return record as DecodedRecord;
  }
}

/** The worker's side: decodes each batch it is sent with the contracts' own decode. */
function serveDecoding(): void {
  const port = parentPort;
  if (!port) return;
  const index = new Map<string, number>();
  const textIndex = (text: string, fresh: string[]) => {
    let i = index.get(text);
    if (i === undefined) {
      i = index.size;
      index.set(text, i);
      fresh.push(text);
    }
    return i;
  };
  port.on("message", ({ id, criado, bytes, ends }: DecodeRequest) => {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const numbers = new Float64Array(ends.length * STRIDE);
    const newTexts: string[] = [];
    const indexOf = (text: string) => textIndex(text, newTexts);
    const invalid: [number, string][] = [];
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      const end = ends[i] as number;
      const value = end < 0 ? null : buffer.subarray(start, end);
      if (end >= 0) start = end;
      const at = i * STRIDE;
      const decoded = criado ? PedidoCriado.decode(value) : ResultadoPagamento.decode(value);
      if (!decoded.ok) {
        numbers[at] = Number.NaN;
        invalid.push([i, decoded.error.reason]);
      } else if (criado) {
        const v = decoded.value as KeptFields & { pedidoId: number };
        numbers[at] = v.pedidoId;
        for (let f = 0; f < KEPT_FIELDS.length; f++) {
          const [field, kind] = KEPT_FIELDS[f] as (typeof KEPT_FIELDS)[number];
          numbers[at + 1 + f] = toColumn(kind, v[field], indexOf);
        }
      } else {
        const r = decoded.value as ResultadoPagamento;
        numbers[at] = r.pedidoId;
        numbers[at + 1] = textIndex(r.status, newTexts);
      }
    }
    const reply: DecodeReply = { id, numbers, newTexts, invalid };
    port.postMessage(reply, [numbers.buffer]);
  });
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) serveDecoding();

/**
 * The main thread's side: a worker thread that decodes batches of PedidoCriado or
 * ResultadoPagamento values, in the order they are handed over.
 */
export class BatchDecoder {
  private readonly worker: Worker;
  private readonly texts: string[] = [];
  private readonly waiting = new Map<
    number,
    { resolve: (b: DecodedBatch) => void; reject: (e: Error) => void; criado: boolean }
  >();
  private nextId = 0;
  private failed: Error | null = null;
  private closed = false;

  constructor() {
    // Built, the thread runs this same bundle (dist/analytics.mjs), which then only decodes
    // (main.ts starts the CLI on the main thread alone). From source, decoder-worker.mjs
    // loads this file through tsx.
    const file = import.meta.url;
    const fromSource = file.endsWith(".ts");
    this.worker = new Worker(fromSource ? new URL("./decoder-worker.mjs", file) : new URL(file), {
      workerData: { role: ROLE, file },
    });
    this.worker.on("message", (reply: DecodeReply) => {
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      for (const t of reply.newTexts) this.texts.push(t);
      w.resolve(new DecodedBatch(w.criado, reply.numbers, this.texts, new Map(reply.invalid)));
    });
    const fail = (error: Error) => {
      this.failed = error;
      for (const w of this.waiting.values()) w.reject(error);
      this.waiting.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => {
      if (code !== 0 && !this.closed)
        fail(new Error(`the decoding thread exited with code ${code}`));
    });
  }

  /** Decodes a batch's values (PedidoCriado when `criado`, else ResultadoPagamento). */
  decode(criado: boolean, values: readonly (Buffer | null)[]): Promise<DecodedBatch> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new Error("the decoding thread is closed"));
    let size = 0;
    for (const v of values) if (v) size += v.length;
    const bytes = new Uint8Array(size);
    const ends = new Int32Array(values.length);
    let at = 0;
    values.forEach((v, i) => {
      if (v === null) {
        ends[i] = -1;
        return;
      }
      bytes.set(v, at);
      at += v.length;
      ends[i] = at;
    });
    const id = this.nextId++;
    const request: DecodeRequest = { id, criado, bytes, ends };
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, criado });
      this.worker.postMessage(request, [bytes.buffer, ends.buffer]);
    });
  }

  /** Stops the thread; a batch still being decoded is dropped (its promise never settles). */
  async close(): Promise<void> {
    this.closed = true;
    await this.worker.terminate();
  }
}
