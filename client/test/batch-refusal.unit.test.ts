// A whole batch refused: only a refusal an op is at fault for (a 413, or a 400
// whose details point into an op) may split the batch and drop an op; one about
// the request itself (the installation not registered yet) keeps every op
// queued and fails the sync, and the same ops go out once it is fixed.
import { describe, expect, it } from "vitest";
import { TidesyncApiError } from "../api-error.ts";
import { batchRefusalOf } from "../batch-refusal.ts";
import type { SyncEvent } from "../events.ts";
import { envelope, FakeServer } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

/** The server's answer to a batch from an installation POST /v1/auth/session never registered (functions/api/sync/push-store.ts). */
const unknownDevice = () => envelope(400, "VALIDATION_FAILED", {}, {
  message: "device_id is not one of your devices",
  details: [{ field: "/device_id", code: "unknown_device", message: "register this installation with POST /v1/auth/session first" }],
});

const refusal = (code: "VALIDATION_FAILED" | "PAYLOAD_TOO_LARGE" | "UNAUTHENTICATED", fields?: string[]) =>
  new TidesyncApiError({ code, message: "refused", status: 400, retryable: false, ...(fields ? { details: fields.map((field) => ({ field, code: "invalid_format", message: "m" })) } : {}) });

describe("batchRefusalOf", () => {
  it("blames an op only for a 413 or a 400 whose every detail points into an op", () => {
    expect(batchRefusalOf(refusal("PAYLOAD_TOO_LARGE"))?.kind).toBe("too_large");
    expect(batchRefusalOf(refusal("VALIDATION_FAILED", ["/ops/3/op_id"]))).toEqual({
      kind: "broken_op",
      error: { code: "VALIDATION_FAILED", message: "refused", details: [{ field: "/ops/3/op_id", code: "invalid_format", message: "m" }] },
    });
    expect(batchRefusalOf(refusal("VALIDATION_FAILED", ["/ops/0", "/ops/12/data/x"]))?.kind).toBe("broken_op");
    for (const fields of [["/device_id"], ["/device_id", "/ops/1/op_id"], ["/ops"], ["/opsx/1"], [""], []]) {
      expect(batchRefusalOf(refusal("VALIDATION_FAILED", fields)), fields.join()).toBeNull();
    }
    expect(batchRefusalOf(refusal("VALIDATION_FAILED"))).toBeNull();
    expect(batchRefusalOf(refusal("UNAUTHENTICATED"))).toBeNull();
    expect(batchRefusalOf(new TypeError("network"))).toBeNull();
  });
});

describe("a whole batch refused", () => {
  it("not registered yet: every op stays queued, sync() fails, and after registering the same ops are applied", async () => {
    const server = new FakeServer();
    let registered = false;
    server.script = (request) => (request.path === "/v1/sync/batch" && !registered ? unknownDevice() : undefined);
    const { client } = await openClient(server);
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await client.create("tasks", { title: `t${i}` }));

    await expect(client.sync()).rejects.toMatchObject({ code: "VALIDATION_FAILED", details: [{ field: "/device_id", code: "unknown_device" }] });
    expect(client.status).toMatchObject({ state: "error", lastErrorCode: "VALIDATION_FAILED", pending: 4 });
    expect(client.pendingOps().map((p) => p.op.record_id)).toEqual(ids);
    expect(events).toEqual([]);
    expect((await client.list("tasks")).map((r) => r.data?.title)).toEqual(["t0", "t1", "t2", "t3"]);
    // One request, not a bisection down to single ops.
    expect(server.batches()).toHaveLength(1);

    registered = true; // the app called api.startSession
    const report = await client.sync();
    expect(report).toMatchObject({ applied: 4, rejected: 0 });
    expect(server.batches().at(-1)).toEqual(server.batches()[0]);
    expect(server.records.size).toBe(4);
    expect(client.status).toMatchObject({ state: "online", pending: 0, lastErrorCode: null });
  });

  it("a refusal naming an op: the batch is halved until that op is alone, then only it is dropped and reported", async () => {
    const server = new FakeServer();
    server.script = (request) => {
      if (request.path !== "/v1/sync/batch") return undefined;
      const index = (request.body as { ops: { data?: { title?: string } }[] }).ops.findIndex((op) => op.data?.title === "broken");
      return index < 0 ? undefined : envelope(400, "VALIDATION_FAILED", {}, { details: [{ field: `/ops/${index}/op_id`, code: "invalid_format", message: "must be a uuid" }] });
    };
    const { client } = await openClient(server);
    const events: SyncEvent[] = [];
    client.on((event) => events.push(event));
    for (let i = 0; i < 3; i++) await client.create("tasks", { title: `ok ${i}` });
    const broken = await client.create("tasks", { title: "broken" });
    await client.create("tasks", { title: "ok 3" });

    const report = await client.sync();
    expect(report).toMatchObject({ applied: 4, rejected: 1 });
    expect(client.status).toMatchObject({ state: "online", pending: 0 });
    expect(await client.get("tasks", broken)).toBeUndefined();
    expect(events).toContainEqual(expect.objectContaining({ type: "op_rejected", error: expect.objectContaining({ code: "VALIDATION_FAILED", details: [expect.objectContaining({ field: "/ops/0/op_id" })] }) }));
    expect(events).toContainEqual(expect.objectContaining({ type: "write_discarded", reason: "rejected", record_id: broken }));
    expect([...server.records.values()].map((r) => r.data?.title).sort()).toEqual(["ok 0", "ok 1", "ok 2", "ok 3"]);
  });
});
