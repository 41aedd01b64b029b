import { withTimeLimit } from "./batch.ts";

type Truthy<T> = Exclude<T, false | null | undefined | 0 | "">;

/** Waits for a condition instead of sleeping: polls until check returns a truthy value. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 15_000, intervalMs = 50, what = "the condition" } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      // A check that never settles (a client waiting on a dead broker) must not outlive the
      // deadline: it is raced against the time left, so the wait fails instead of hanging.
      const value = await withTimeLimit(
        Promise.resolve().then(check),
        Math.max(deadline - Date.now(), 1),
        () => new Error("the check itself did not answer in time"),
      );
      if (value) return value as Truthy<T>;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
}
