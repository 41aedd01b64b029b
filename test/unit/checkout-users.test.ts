import { describe, expect, it } from "vitest";
import { checkoutUsers, ROOT } from "../../infra/config.ts";

describe("Each checkout's own RabbitMQ users (issue 34)", () => {
  it("When two checkouts write their .env, then their users differ, so that one's setup never resets the other's passwords; one checkout always gets the same names", () => {
    const here = checkoutUsers(ROOT);
    expect(here).toEqual(checkoutUsers(`${ROOT}/.`));
    const other = checkoutUsers("/tmp/another-clone");
    for (const key of ["user", "admin", "monitor"] as const) {
      expect(here[key]).not.toBe(other[key]);
      expect(here[key]).toMatch(/^shop(-admin|-monitor)?-[0-9a-f]{6}$/);
    }
    expect(new Set(Object.values(here)).size).toBe(3);
  });
});
