// Realtime pokes through the real function and database: a committed push
// posts one data-free poke on the private topic of each list it touched; a
// batch that rolls back posts none (Realtime only ever sees committed
// messages); a pull posts none; sharing pokes the new member's user topic.
// (Who may receive them: supabase/tests/database/601-realtime-pokes.test.sql;
// the client's handling: client/test/realtime-pokes.unit.test.ts.)
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, call, createTestUser } from "../support/harness.ts";
import { push, pushOk, share, upsert } from "../support/shared-lists.ts";
import { withFailingLedger } from "../support/sync-records.ts";

const pokes = (topic: string) =>
  adminSql<{ event: string; private: boolean; extension: string; data: Record<string, unknown> }[]>`
    select event, private, extension, payload - 'id' as data from realtime.messages where topic = ${topic}`;

describe("realtime pokes from sync writes", () => {
  it("a committed push pokes each list it touched once, privately and without data; a pull pokes nothing", async () => {
    const user = await createTestUser();
    const list = randomUUID();
    const personalBefore = (await pokes(`tidesync:scope:${user.userId}`)).length; // its creation with the user poked it
    await pushOk(user, { ops: [
      upsert("lists", list, { title: "Trip" }),
      upsert("tasks", randomUUID(), { list_id: list, title: "Tent" }),
      upsert("tasks", randomUUID(), { list_id: list, title: "Map" }),
      upsert("tasks", randomUUID(), { list_id: user.userId, title: "Personal" }),
    ] });
    expect(await pokes(`tidesync:scope:${list}`)).toEqual([{ event: "poke", private: true, extension: "broadcast", data: {} }]);
    expect(await pokes(`tidesync:scope:${user.userId}`)).toHaveLength(personalBefore + 1);
    expect((await call("/v1/sync/changes", { token: user.token })).status).toBe(200);
    expect(await pokes(`tidesync:scope:${list}`)).toHaveLength(1);
  });

  it("a batch that rolls back leaves no poke behind", async () => {
    const user = await createTestUser();
    const list = randomUUID();
    const failed = await withFailingLedger(user.userId, () => push(user, { ops: [upsert("lists", list, { title: "never" })] }));
    expect(failed.status).toBe(500);
    expect(await pokes(`tidesync:scope:${list}`)).toEqual([]);
  });

  it("sharing a list pokes the new member's user topic", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const list = randomUUID();
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Groceries" })] });
    const before = (await pokes(`tidesync:user:${bob.userId}`)).length;
    await share(alice, list, bob, "editor");
    expect((await pokes(`tidesync:user:${bob.userId}`)).length).toBe(before + 1);
  });
});
