import { relative } from "node:path";

/**
 * The shop runs on Node 24. npm's scripts run it on the Node 24 that `npm ci` puts in
 * node_modules (the node-linux-* packages in package.json), whatever the machine's own
 * Node is; a program started by hand with an older node stops here, before any package
 * loads, with one sentence instead of a crash inside a native module. Built programs
 * (dist/) import this first (infra/build.ts); from source, @shop/service's index does.
 */
export const NODE_MAJOR = 24;

export function nodeTooOld(version: string, program: string): string | undefined {
  if (Number(version.split(".")[0]) >= NODE_MAJOR) return undefined;
  return `${program} needs Node ${NODE_MAJOR} and this is Node ${version}: run it through npm (npm start, npm run ...), which uses the Node ${NODE_MAJOR} that npm ci installed, or with node_modules/.bin/node instead of node.`;
}

const program = process.argv[1] ? relative(process.cwd(), process.argv[1]) : "This program";
const refused = nodeTooOld(process.versions.node, program);
if (refused !== undefined) {
  process.stderr.write(`${refused}\n`);
  process.exit(1);
}
