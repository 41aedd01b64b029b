export * from "./client.ts";
export * from "./config.ts";
export * from "./consumer.ts";
export * from "./service.ts";
export * from "./topology.ts";
export * from "./url.ts";
