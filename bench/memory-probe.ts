import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { serviceEnv, tempDb, uniquePrefix } from "../harness/env.ts";
import { ServiceProcess } from "../harness/process.ts";
import { measureCpu } from "./stats.ts";

/**
 * Where the built orders API's resident memory goes under the intake load (issue 36): the
 * binary's own pages, the V8 heap (from /metrics) and glibc's arenas (anonymous mappings),
 * for each environment given, one after another on the running Kafka.
 *
 *   npm run build && npm run infra -- up
 *   npx tsx bench/memory-probe.ts '{"default":{},"arenas 2":{"MALLOC_ARENA_MAX":"2"}}' 12
 */
process.env.SHOP_CONSTRUIDO = "1";
const ORDER = JSON.stringify({
  cliente: "Ana",
  item: "caneca",
  quantidade: 2,
  precoUnitario: 18.9,
});
const MB = 1024;

/** The process's resident memory in MB: all, file-backed, anonymous, and the brk heap. */
function resident(pid: number) {
  let mapping = "";
  const by = { all: 0, file: 0, anonymous: 0, brk: 0 };
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = line.match(/^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/);
    if (head) mapping = head[1] ?? "";
    else if (line.startsWith("Rss:")) {
      const kb = Number(line.split(/\s+/)[1]);
      by.all += kb;
      if (mapping.startsWith("/")) by.file += kb;
      else by.anonymous += kb;
      if (mapping === "[heap]") by.brk += kb;
    }
  }
  return Object.fromEntries(
    Object.entries(by).map(([k, kb]) => [k, Math.round(kb / MB)]),
  ) as typeof by;
}

/** The V8 heap's figures from the service's own /metrics, in MB. */
async function heapOf(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const mb = (name: string) =>
    Math.round(
      Number(text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, "m"))?.[1]) / MB / MB,
    );
  return { total: mb("nodejs_heap_size_total_bytes"), used: mb("nodejs_heap_size_used_bytes") };
}

const variants: Record<string, Record<string, string>> = JSON.parse(
  process.argv[2] ?? '{"default":{}}',
);
const seconds = Number(process.argv[3] ?? 12);
for (const [name, env] of Object.entries(variants)) {
  const api = await ServiceProcess.start("orders-api", "orders-api", {
    ...serviceEnv(uniquePrefix("memoria"), { DB_PATH: tempDb("memoria") }),
    ...env,
  });
  const pid = api.child.pid as number;
  const rest = resident(pid);
  let peak = rest;
  let heap = { total: 0, used: 0 };
  const cpu = measureCpu({ api: [pid] });
  const sampling = setInterval(() => {
    const now = resident(pid);
    if (now.all > peak.all) peak = now;
  }, 200);
  const late = setTimeout(async () => {
    heap = await heapOf(api.url());
  }, seconds * 800);
  const load = await autocannon({
    url: `${api.url()}/pedidos`,
    method: "POST",
    connections: 64,
    duration: seconds,
    headers: { "content-type": "application/json" },
    body: ORDER,
  });
  clearInterval(sampling);
  clearTimeout(late);
  const spent = cpu.stop(load.requests.total);
  console.log(
    `${name}: at rest ${rest.all} MB (binary and files ${rest.file}); peak ${peak.all} MB: ` +
      `files ${peak.file}, anonymous ${peak.anonymous} (brk heap ${peak.brk}; V8 heap ` +
      `${heap.total}, ${heap.used} used); ${Math.round(load.requests.average)} req/s, ` +
      `${(spent.perUnit.api ?? 0).toFixed(3)} ms CPU a request, ${load.non2xx} not 2xx`,
  );
  await api.stop();
}
process.exit(0);
