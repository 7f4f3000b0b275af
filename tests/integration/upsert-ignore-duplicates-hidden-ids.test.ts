// supabase-js upsert(rows, { ignoreDuplicates: true }) is INSERT … ON CONFLICT (id) DO NOTHING.
// An id of a row the caller cannot see is answered as a taken id (23505 on the primary key,
// raised by the trigger tidesync_hidden_ids_taken before the insert) and ON CONFLICT does not
// catch an error a trigger raises: the whole statement fails, the new rows with it, where an
// id of the caller's own row is skipped. What an app does instead is in docs/sync.md ("Direct
// writes interoperate") and docs/security-model.md.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestUser } from "../support/harness.ts";
import { asUser, pushOk, upsert } from "../support/shared-lists.ts";

describe("supabase-js upsert with ignoreDuplicates", () => {
  it("skips an id of the caller's own row, but fails whole (23505) on one of a row they cannot see", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    const hidden = randomUUID();
    await pushOk(alice, { ops: [upsert("tasks", hidden, { list_id: alice.userId, title: "Alice's private" })] });
    const own = randomUUID();
    await pushOk(bob, { ops: [upsert("tasks", own, { list_id: bob.userId, title: "Bob's" })] });
    const importing = (ids: string[]) =>
      asUser(bob, (tx) => tx`insert into public.tasks (id, list_id, title) select id, ${bob.userId}, 'imported' from unnest(${ids}::uuid[]) as t(id)
                             on conflict (id) do nothing returning id`)
        .then((rows) => ({ inserted: rows.map((r) => r.id) }), (error) => ({ error: error.code, constraint: error.constraint_name }));

    const fresh = randomUUID();
    expect(await importing([fresh, own])).toEqual({ inserted: [fresh] });
    const other = randomUUID();
    expect(await importing([other, hidden])).toEqual({ error: "23505", constraint: "tasks_pkey" });
    // Nothing of it was kept; without the hidden id the same batch goes in.
    expect(await importing([other])).toEqual({ inserted: [other] });
  });
});
