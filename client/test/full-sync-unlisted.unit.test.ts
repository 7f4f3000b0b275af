// A full sync lists only changes below the cluster's snapshot xmin (docs/sync.md):
// a record this device just created may be applied and answered yet missing
// from a full sync that runs right after. Its sweep must not drop it: a later
// edit would then go out as a base-less partial upsert the server treats as a
// create without its required fields (VALIDATION_FAILED on list_id).
import { describe, expect, it } from "vitest";
import type { ChangesResponse } from "../../functions/_shared/schemas/sync.ts";
import { FakeServer, json, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

describe("full sync sweep", () => {
  it("keeps a record this device created that the full sync did not list yet, and edits it with its base", async () => {
    const server = new FakeServer();
    const { client } = await openClient(server);
    const id = await client.create("tasks", { list_id: LIST_ID, title: "created here", done: false });
    // The create is applied, but the full pull right after runs below a snapshot that does not list it yet.
    server.script = (request) => {
      if (request.path !== "/v1/sync/changes" || request.query.has("cursor")) return undefined;
      return (async () => {
        const page = (await server.answer(request).json()) as ChangesResponse;
        return json(200, { ...page, changes: page.changes.filter((change) => change.id !== id) });
      })();
    };
    await client.sync();
    server.script = null;

    expect((await client.get("tasks", id))?.data).toEqual({ list_id: LIST_ID, title: "created here", done: false });
    await client.upsert("tasks", id, { done: true });
    expect(client.pendingOps().map((p) => p.op.base_version)).toEqual([1]);
    const report = await client.sync();
    expect(report.rejected).toBe(0);
    expect((await client.get("tasks", id))?.data).toEqual({ list_id: LIST_ID, title: "created here", done: true });
  });
});
