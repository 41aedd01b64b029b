import { beforeAll } from "vitest";
import { forgetDocuments } from "./openapi.ts";

/**
 * Runs before each test file of the projects whose files share a worker (vitest.config.ts,
 * setupFiles): what a file reads of the services it starts is not left to the next file.
 */
beforeAll(() => {
  forgetDocuments();
});
