// A member removed from a list gets, on their next pull, every row that was in
// it as a removal (`reason: "access_revoked"`), through the real function. What
// such a removal says must be what they may know: that they lost access, and
// when; never when the list's owner edited or deleted a row after they left
// (each removal's `updated_at` was the row's latest change, later edits by
// others included).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser } from "../support/harness.ts";
import { asUser, membershipIds, pullAll, removeMember, share } from "../support/shared-lists.ts";
import { writeRows } from "../support/sync-records.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A timestamptz column as the wire prints it (ISO 8601 UTC, microseconds, "Z"). */
const WIRE = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

describe("removals of a list the user lost", () => {
  it("carry the time access was lost, not the time of what others changed after", async () => {
    const [alice, bob] = [await createTestUser(), await createTestUser()];
    const [list, edited, deleted, kept] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await writeRows(alice, [
      { collection: "lists", id: list, data: { title: "Shared" } },
      ...[edited, deleted, kept].map((id) => ({ collection: "tasks" as const, id, data: { list_id: list, title: "t" } })),
    ]);
    await share(alice, list, bob, "viewer");
    const before = await pullAll(bob);
    expect(before.changes.filter((c) => c.collection === "tasks").map((c) => c.id).sort()).toEqual([edited, deleted, kept].sort());

    const members = await membershipIds(list); // Alice's and Bob's: removed from his device too
    await removeMember(alice, list, bob);
    const [{ revokedAt, revokedSeq }] = await adminSql<{ revokedAt: string; revokedSeq: string }[]>`
      select to_char(changed_at at time zone 'UTC', ${adminSql.unsafe(WIRE)}) as "revokedAt", seq::text as "revokedSeq"
        from app_private.sync_access where user_id = ${bob.userId} and scope_id = ${list}`;
    // Alice goes on with her list once Bob is out.
    await sleep(20);
    await asUser(alice, (tx) => tx`update public.tasks set title = 'edited after Bob left' where id = ${edited}`);
    await sleep(20);
    await asUser(alice, (tx) => tx`delete from public.tasks where id = ${deleted}`);
    const [{ editedAt }] = await adminSql<{ editedAt: string }[]>`
      select to_char(updated_at at time zone 'UTC', ${adminSql.unsafe(WIRE)}) as "editedAt" from app_private.sync_records where collection = 'tasks' and id = ${edited}`;
    expect(editedAt > revokedAt).toBe(true);

    const after = await pullAll(bob, before.cursor);
    const removals = after.changes.map((c) => ({ id: c.id, deleted: c.deleted, data: c.data, reason: (c as { reason?: string }).reason, updated_at: c.updated_at, version: c.version }));
    const expected = (id: string) => ({ id, deleted: true, data: null, reason: "access_revoked", updated_at: revokedAt, version: Number(revokedSeq) });
    expect(removals.sort((a, b) => a.id.localeCompare(b.id))).toEqual([list, edited, deleted, kept, ...members].sort().map(expected));
  });
});
