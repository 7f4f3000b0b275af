// The pure parts the WatermelonDB and RxDB adapters share (client/adapters/core):
// which ops a retried push sends (the unanswered ones, never again as new
// ops), ids the server would not return as they are, and Retry-After holding
// back every later request of the adapter, also the library's own retries.
import { describe, expect, it } from "vitest";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";
import { TidesyncApiError } from "../api-error.ts";
import { planOps, unsendableId } from "../adapters/core/plan-ops.ts";
import { retryOptions, withRetry } from "../adapters/core/retry.ts";

const ID = "5b1f4c1e-8a83-4f5e-9d7e-0d3c2b1a0f9e";
let n = 0;
const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
const sent = (data: Record<string, unknown>, base: number | null = 3): SyncOp => ({ op_id: newId(), collection: "tasks", record_id: ID, type: "upsert", base_version: base, data });

describe("planOps", () => {
  it("sends nothing new for a change the unanswered ops already carry (the retry re-sends them with their op_ids)", () => {
    expect(planOps([sent({ title: "a", done: true })], [{ collection: "tasks", id: ID, type: "upsert", data: { title: "a", done: true }, baseVersion: 3 }], newId)).toEqual([]);
  });

  it("sends only what the record gained since, on the same base", () => {
    const ops = planOps([sent({ title: "a" })], [{ collection: "tasks", id: ID, type: "upsert", data: { title: "b", notes: "n" }, baseVersion: 3 }], newId);
    expect(ops).toEqual([expect.objectContaining({ type: "upsert", base_version: 3, data: { title: "b", notes: "n" } })]);
    expect(planOps([sent({ title: "a" })], [{ collection: "tasks", id: ID, type: "upsert", data: { title: "a", notes: "n" }, baseVersion: 3 }], newId))
      .toEqual([expect.objectContaining({ data: { notes: "n" } })]);
  });

  it("a delete after a sent upsert is a new op; after a sent delete it is already on its way", () => {
    const remove = { collection: "tasks", id: ID, type: "delete" as const, baseVersion: 3 };
    expect(planOps([sent({ title: "a" })], [remove], newId)).toEqual([expect.objectContaining({ type: "delete", base_version: 3 })]);
    expect(planOps([{ op_id: newId(), collection: "tasks", record_id: ID, type: "delete", base_version: 3 }], [remove], newId)).toEqual([]);
  });

  it("records without unanswered ops become ops as they are; an empty patch none", () => {
    expect(planOps([], [{ collection: "tasks", id: ID, type: "upsert", data: { title: "x" }, baseVersion: null }], newId))
      .toEqual([expect.objectContaining({ record_id: ID, base_version: null, data: { title: "x" } })]);
    expect(planOps([], [{ collection: "tasks", id: ID, type: "upsert", data: {}, baseVersion: 4 }], newId)).toEqual([]);
  });
});

describe("unsendableId", () => {
  it("refuses ids the server would return in another form (upper-case uuids), with a field detail", () => {
    expect(unsendableId({ collection: "tasks", id: ID, type: "upsert" }, newId())).toBeNull();
    const refused = unsendableId({ collection: "tasks", id: ID.toUpperCase(), type: "upsert" }, newId());
    expect(refused?.error).toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/record_id", code: "invalid_format" }] });
    expect(unsendableId({ collection: "tasks", id: "not-a-uuid", type: "delete" }, newId())).not.toBeNull();
  });
});

describe("withRetry", () => {
  const rateLimited = () => new TidesyncApiError({ code: "RATE_LIMITED", message: "slow down", status: 429, retryable: true, retryAfter: 7 });

  it("waits Retry-After before the next attempt, and holds later calls back until it has passed", async () => {
    let clock = 1_000_000;
    const slept: number[] = [];
    const options = retryOptions({ backoff: { baseMs: 10, maxMs: 10, maxAttempts: 2 }, random: () => 0, now: () => clock, sleep: async (ms) => {
      slept.push(ms);
      clock += ms;
    } });
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(rateLimited());
    };
    await expect(withRetry(failing, options)).rejects.toMatchObject({ code: "RATE_LIMITED" });
    // Second attempt only after the 7 s; the call gives up after maxAttempts.
    expect({ calls, slept }).toEqual({ calls: 2, slept: [7000] });
    // The library retries on its own timer a moment later: the adapter still waits out the last Retry-After.
    clock += 1000;
    slept.length = 0;
    expect(await withRetry(async () => "ok", options)).toBe("ok");
    expect(slept).toEqual([6000]);
  });

  it("does not retry what is not retryable", async () => {
    const options = retryOptions({ sleep: async () => {} });
    let calls = 0;
    await expect(withRetry(() => {
      calls++;
      return Promise.reject(new TidesyncApiError({ code: "FORBIDDEN", message: "no", status: 403, retryable: false }));
    }, options)).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(calls).toBe(1);
  });
});
