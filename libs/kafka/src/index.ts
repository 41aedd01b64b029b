export * from "./client.ts";
export * from "./config.ts";
export * from "./consumer.ts";
export * from "./platform.ts";
export * from "./publisher.ts";
export * from "./read.ts";
