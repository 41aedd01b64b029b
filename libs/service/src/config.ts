import { z } from "zod";

/** PORTA and HOST, the HTTP settings every service reads. */
export function httpEnvShape(defaultPort: number) {
  return {
    PORTA: z.coerce.number().int().min(0).max(65535).default(defaultPort),
    /** The address to listen on: the loopback by default, 0.0.0.0 in containers. */
    HOST: z.string().default("127.0.0.1"),
  };
}
