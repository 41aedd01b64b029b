import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../infra/config.ts";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** A frame of a profile, read by `key` (its function, or its part). */
type FrameKey = (frame: Node["callFrame"]) => string;

/**
 * A profile's self time summed by `key`, as shares of its busy time (every sample but
 * "(idle)"), largest first: enough to see where a service spends its time without
 * opening DevTools.
 */
function selfTimeBy(file: string, key: FrameKey, top: number): string[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[] };
  const byKey = new Map<string, number>();
  let busy = 0;
  for (const n of profile.nodes) {
    if (n.callFrame.functionName === "(idle)" && !n.callFrame.url) continue;
    const hits = n.hitCount ?? 0;
    busy += hits;
    const k = key(n.callFrame);
    byKey.set(k, (byKey.get(k) ?? 0) + hits);
  }
  return [...byKey]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, hits]) => `${((hits / Math.max(1, busy)) * 100).toFixed(1).padStart(5)}%  ${k}`);
}

/** The functions with the most self time, for `npm run bench -- --profile`. */
export function topSelfTime(file: string, top = 15): string[] {
  return selfTimeBy(
    file,
    ({ functionName, url, lineNumber }) => {
      const where = url ? `${relative(ROOT, url.replace(/^file:\/\//, ""))}:${lineNumber + 1}` : "";
      return `${functionName || "(anonymous)"} ${where}`.trim();
    },
    top,
  );
}

/** Where a frame's code lives: a package of node_modules, a folder of the shop, Node's own, or V8's. */
export function partOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node";
  const path = url.replace(/^file:\/\//, "");
  // The innermost package: a dependency's own copy of another is that other's.
  const pkg = [...path.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].at(-1);
  if (pkg) return pkg[1] as string;
  const inShop = relative(ROOT, path);
  if (inShop.startsWith("..")) return path;
  // dist/<service>.mjs is one bundle: run with --source to see its packages apart.
  if (inShop.startsWith("dist/")) return inShop;
  const [top, second] = inShop.split("/");
  return top === "libs" || top === "broker" ? `${top}/${second}` : (top as string);
}

/**
 * A profile's self time by part (partOf): how much of a service's CPU each package and
 * each folder of the shop takes, the garbage collector and V8's "(program)" included.
 */
export function selfTimeByPart(file: string, top = 12): string[] {
  return selfTimeBy(file, ({ url, functionName }) => partOf(url, functionName), top);
}

/** Prints the top of each service's profile (its main thread's: the largest file). */
export function printProfiles(dir: string, log: (l: string) => void): void {
  if (!existsSync(dir)) return;
  for (const service of readdirSync(dir)) {
    const files = readdirSync(join(dir, service))
      .filter((n) => n.endsWith(".cpuprofile"))
      .map((n) => join(dir, service, n))
      .sort((a, b) => statSync(b).size - statSync(a).size);
    if (!files[0]) continue;
    log(
      `\nprofile of ${service}, ${relative(ROOT, files[0])} (self time, share of its busy time):`,
    );
    for (const line of topSelfTime(files[0])) log(line);
    log("by part:");
    for (const line of selfTimeByPart(files[0])) log(line);
  }
}
