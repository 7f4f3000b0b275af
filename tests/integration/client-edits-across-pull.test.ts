// The real client (client/) against real Deno + Postgres: an edit the user makes
// after a pull showed them another device's change is judged against that
// change (its base_version is the version they saw), though an earlier edit of
// the record, made before the pull, is still queued unsent. Merged into that op
// (one op per record, on the older base), it conflicted with the change the user
// had seen and was discarded: the other device's value stayed on the server.
import { describe, expect, it } from "vitest";
import type { SyncEvent } from "../../client/events.ts";
import { clientDevice } from "../support/client-device.ts";
import { adminSql, createTestUser } from "../support/harness.ts";

describe("an edit made after a pull is based on what the pull showed", () => {
  for (const edit of ["untick", "delete"] as const) {
    it(`a queued edit from before the pull and the user's ${edit} after it: both applied, nothing discarded`, async () => {
      const alice = await createTestUser();
      let beforePull: (() => Promise<void>) | null = null;
      const { client, events } = await clientDevice(alice, {
        fetch: async (input, init) => {
          // During a sync that has nothing to push: the app edits, another phone changes the record.
          if (String(input).includes("/v1/sync/changes") && beforePull) {
            const act = beforePull;
            beforePull = null;
            await act();
          }
          return globalThis.fetch(input, init);
        },
      });
      const id = await client.create("tasks", { list_id: alice.userId, title: "Milk" });
      await client.sync();
      const other = await clientDevice(alice);
      await other.client.sync();
      beforePull = async () => {
        await client.upsert("tasks", id, { title: "Oat milk" });
        await other.client.upsert("tasks", id, { done: true });
        await other.client.sync();
      };
      await client.sync();
      expect((await client.get("tasks", id))?.data).toMatchObject({ title: "Oat milk", done: true });

      if (edit === "untick") await client.upsert("tasks", id, { done: false });
      else await client.delete("tasks", id);
      await client.sync();

      const rows = await adminSql<{ title: string; done: boolean }[]>`select title, done from public.tasks where id = ${id}`;
      expect(rows).toEqual(edit === "untick" ? [{ title: "Oat milk", done: false }] : []);
      expect(events.filter((event: SyncEvent) => event.type === "write_discarded" || event.type === "conflict")).toEqual([]);
    });
  }
});
