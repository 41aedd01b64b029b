// First: on a Node older than the shop's, stop before this package's modules load theirs.
import "./node-version.ts";

export * from "./batch.ts";
export * from "./cli.ts";
export * from "./config.ts";
export * from "./docs.ts";
export * from "./dotenv.ts";
export * from "./errors.ts";
export * from "./events.ts";
export * from "./http.ts";
export * from "./lifecycle.ts";
export * from "./logger.ts";
export * from "./metrics.ts";
export * from "./node-version.ts";
export * from "./sqlite.ts";
export * from "./trace.ts";
export * from "./wait.ts";
