// Two accounts on one phone (one installation id) are two devices to the
// merge (docs/devices-and-sessions.md: one device row per user and
// installation): a field another account changed on that phone is not the
// pusher's own write, and forgetting a deleted account's device leaves the
// stamps of a new account on the same phone alone (docs/sync.md, "Merge
// rules"; docs/account-deletion.md, step 5).
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { phone, startSession } from "../support/device-sessions.ts";
import { pushOk, remove, share, upsert } from "../support/shared-lists.ts";

async function onPhone(user: TestUser, installation: string): Promise<void> {
  await startSession(user.token, phone({ installation_id: installation }));
}

/** Sweeps until nothing queued for forgetting is left (another test's sweep may be under way). */
async function forgetEverythingQueued(): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const [{ done }] = await adminSql<{ done: boolean }[]>`
      select app_private.forget_queued_installations(interval '1 second', 5000)
             and not exists (select from app_private.installations_to_forget) as done`;
    if (done) return;
  }
  throw new Error("the sweep never finished");
}

describe("one phone, two accounts", () => {
  it("another account's newer edit on the same phone is a conflict, not the pusher's own write", async () => {
    const x = await createTestUser();
    const y = await createTestUser();
    const installation = randomUUID();
    await onPhone(x, installation);
    await onPhone(y, installation);
    const [list, milk, bread] = [randomUUID(), randomUUID(), randomUUID()];
    const created = await pushOk(x, { device_id: installation, ops: [
      upsert("lists", list, { title: "Shared" }),
      upsert("tasks", milk, { list_id: list, title: "milk" }),
      upsert("tasks", bread, { list_id: list, title: "bread" }),
    ] });
    const [vMilk, vBread] = [created.results[1].record!.version, created.results[2].record!.version];
    await share(x, list, y, "editor");

    const edited = await pushOk(y, { device_id: installation, ops: [
      upsert("tasks", milk, { title: "milk (Y)" }, vMilk),
      upsert("tasks", bread, { title: "bread (Y)" }, vBread),
    ] });
    expect(edited.results.map((r) => r.status)).toEqual(["applied", "applied"]);

    // X's stale edit and delete, queued before Y's edits.
    const stale = await pushOk(x, { device_id: installation, ops: [
      upsert("tasks", milk, { title: "milk (X)" }, vMilk),
      remove("tasks", bread, vBread),
    ] });
    expect(stale.results.map((r) => [r.status, r.conflicting_fields]), JSON.stringify(stale.results)).toEqual([["conflict", ["title"]], ["conflict", ["title"]]]);
    const titles = await adminSql<{ title: string }[]>`select title from public.tasks where id in (${milk}, ${bread}) order by title`;
    expect(titles.map((t) => t.title)).toEqual(["bread (Y)", "milk (Y)"]);
  });

  it("forgetting a deleted account's phone leaves a new account's own writes on that phone its own", async () => {
    const gone = await createTestUser();
    const installation = randomUUID();
    await onPhone(gone, installation);
    await adminSql`delete from auth.users where id = ${gone.userId}`;

    const z = await createTestUser();
    await onPhone(z, installation);
    const task = randomUUID();
    const created = await pushOk(z, { device_id: installation, ops: [upsert("tasks", task, { list_id: z.userId, title: "one" })] });
    const v1 = created.results[0].record!.version;
    const edited = await pushOk(z, { device_id: installation, ops: [upsert("tasks", task, { title: "two" }, v1)] });
    expect(edited.results[0].status).toBe("applied");

    await forgetEverythingQueued();

    // A later op of the same chain (based before Z's own edit) is still Z's chain.
    const again = await pushOk(z, { device_id: installation, ops: [upsert("tasks", task, { title: "three" }, v1)] });
    expect(again.results[0].status, JSON.stringify(again.results[0])).toBe("applied");
  });
});

/** The migration's conversion of the stamps it found (its first DO block), as it runs on deploy. */
async function conversionSql(): Promise<string> {
  const migration = await readFile("supabase/migrations/20261128001200_merge_tells_devices_by_row.sql", "utf8");
  return migration.slice(migration.indexOf("do $$"), migration.indexOf("end\n$$;") + "end\n$$;".length);
}

describe("migration 20261128001200: stamps that named installations", () => {
  it("name the device row the ledger shows wrote them, else nobody's", async () => {
    const [x, y, soft] = [await createTestUser(), await createTestUser(), await createTestUser()];
    const [shared, solo] = [randomUUID(), randomUUID()];
    const stamps = await adminSql.begin(async (tx) => {
      const [xShared, yShared, xSolo] = [randomUUID(), randomUUID(), randomUUID()];
      await tx`
        insert into app_private.devices (id, user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at, created_at)
        values (${xShared}, ${x.userId}, ${shared}, 'ios', '1', 1, now(), now(), now() - interval '1 day'),
               (${yShared}, ${y.userId}, ${shared}, 'ios', '1', 1, now(), now(), now() - interval '1 day'),
               (${xSolo}, ${x.userId}, ${solo}, 'ios', '1', 1, now(), now(), now() - interval '1 hour'),
               (${randomUUID()}, ${soft.userId}, ${shared}, 'ios', '1', 1, now(), now(), now() - interval '1 day')`;
      await tx`update auth.users set deleted_at = now() where id = ${soft.userId}`;
      /** A sync record; with `opBy`, the ledger row of an applied op of it (at `opVersion`, else the record's version). */
      const record = async (version: number, fieldVersions: object, opBy?: { user: string; installation: string; at: string }, opVersion = version) => {
        const id = randomUUID();
        await tx`insert into app_private.sync_records (collection, id, scope_id, version, field_versions, updated_at)
                 values ('tasks', ${id}, ${randomUUID()}, ${version}, ${tx.json(fieldVersions as never)}, now() - interval '10 minutes')`;
        if (opBy) {
          await tx`insert into app_private.sync_ops (user_id, op_id, device_id, collection, record_id, type, status, version, created_at)
                   values (${opBy.user}, ${randomUUID()}, ${opBy.installation}, 'tasks', ${id}, 'upsert', 'applied', ${opVersion},
                           now() - ${opBy.at}::interval)`;
        }
        return id;
      };
      const ids = {
        // X and Y on one phone: each stamp goes to the account whose op wrote it.
        byX: await record(9, { title: { v: 9, d: shared }, "*": { v: 5, d: null } }, { user: x.userId, installation: shared, at: "10 minutes" }),
        byY: await record(9, { title: { v: 9, d: shared } }, { user: y.userId, installation: shared, at: "10 minutes" }),
        // An earlier field version of X's, not the record's last write.
        xEarlier: await record(12, { title: { v: 7, d: solo }, done: { v: 12, d: null } }, { user: x.userId, installation: solo, at: "30 minutes" }, 7),
        // No op left in the ledger (older than retention, or a cascade's write).
        unlogged: await record(9, { "*": { v: 9, d: solo } }),
        // X's op at the record's version, but not in the write's transaction (applied without a write).
        noWrite: await record(9, { "*": { v: 9, d: shared } }, { user: x.userId, installation: shared, at: "5 minutes" }),
        // A soft-deleted user's write.
        bySoft: await record(9, { title: { v: 9, d: shared } }, { user: soft.userId, installation: shared, at: "10 minutes" }),
        // X's op from before X's device row for that installation (pruned, registered again since).
        beforeRow: await record(12, { title: { v: 9, d: solo } }, { user: x.userId, installation: solo, at: "2 hours" }, 9),
      };
      await tx.unsafe(await conversionSql());
      const rows = await tx<{ id: string; field_versions: Record<string, { v: number; d: string | null }> }[]>`
        select id::text, field_versions from app_private.sync_records where id = any (${Object.values(ids)}::uuid[])`;
      const byId = new Map(rows.map((r) => [r.id, r.field_versions]));
      const result = Object.fromEntries(Object.entries(ids).map(([name, id]) => [name, byId.get(id)]));
      await tx`rollback and chain`; // leave the shared test database as it was
      return { result, xShared, yShared, xSolo };
    });
    expect(stamps.result).toEqual({
      byX: { title: { v: 9, d: stamps.xShared }, "*": { v: 5, d: null } },
      byY: { title: { v: 9, d: stamps.yShared } },
      xEarlier: { title: { v: 7, d: stamps.xSolo }, done: { v: 12, d: null } },
      unlogged: { "*": { v: 9, d: null } },
      noWrite: { "*": { v: 9, d: null } },
      bySoft: { title: { v: 9, d: null } },
      beforeRow: { title: { v: 9, d: null } },
    });
  });
});
