// exportSlots (functions/api/account/export-slots.ts): at most `max` data exports
// stream at once per process; one more is 429 RATE_LIMITED with Retry-After, as
// docs/errors.md and docs/account-export.md say (errors.md's 503 row once said 503).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../functions/_shared/errors.ts";
import { EXPORT_BUSY_RETRY_AFTER_S, exportSlots } from "../../functions/api/account/export-slots.ts";

describe("exportSlots", () => {
  it("refuses one more export than it allows with 429 RATE_LIMITED and Retry-After, and takes it once one is given back", () => {
    const slots = exportSlots(2);
    const first = slots.take();
    slots.take();
    let refusal: unknown;
    try {
      slots.take();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ code: "RATE_LIMITED" });
    expect((refusal as ApiError).headers).toEqual({ "Retry-After": String(EXPORT_BUSY_RETRY_AFTER_S) });
    first();
    first(); // given back once, however often called
    slots.take();
    expect(() => slots.take()).toThrow(ApiError);
  });

  it("is documented in docs/errors.md under 429 and under no other status", () => {
    const doc = readFileSync(path.join(import.meta.dirname, "../../docs/errors.md"), "utf8");
    const statuses = doc.split("\n")
      .filter((line) => /^\| \d{3} \|/.test(line) && /TIDESYNC_CONCURRENT_EXPORTS|exports? already streaming|users\/me\/export/.test(line))
      .map((line) => line.slice(2, 5));
    expect(statuses).toEqual(["429"]);
  });
});
