// The notification preference audit trail keeps a user's newest
// app_private.notification_preference_audit_kept() (1,000) entries: the change that
// appends one more deletes the oldest in the same transaction. Before, it grew by a row
// (~0.9 kB) per change, 120 changes a minute allowed: ~156 MB per user per day, which the
// account export then streamed whole under its 5-minute cap. The history's keyset pages
// (GET /v1/users/me/notifications/history) stay right across the pruning: newest first,
// each entry once, down to the oldest kept.
import { describe, expect, it } from "vitest";
import { withDefaultCategories } from "../../functions/_shared/notification-categories.ts";
import { adminSql, call, createTestUser, type TestUser } from "../support/harness.ts";

const PATH = "/v1/users/me/notifications";
const KEPT = 1000;

/** The user's first save (version 1, one audit entry). */
async function firstSave(userId: string) {
  await adminSql`
    insert into app_private.notification_preferences
      (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
    values (${userId}, ${adminSql.json(withDefaultCategories({}))}, true, '22:00', '07:00', 'UTC')`;
}

/** `count` more changes, each a version and an audit entry as a PUT's (in one round trip: the rate limit bounds PUTs). */
async function changes(userId: string, count: number) {
  await adminSql.unsafe(`
    do $$ begin
      for i in 1..${Number(count)} loop
        update app_private.notification_preferences set quiet_hours_enabled = not quiet_hours_enabled
         where user_id = '${userId}';
      end loop;
    end $$`);
}

async function kept(userId: string): Promise<number[]> {
  const rows = await adminSql<{ new_version: number }[]>`
    select new_version from app_private.notification_preference_audit where user_id = ${userId} order by id desc`;
  return rows.map((r) => r.new_version);
}

/** Every history page from `before` on (limit 100), as the client walks them. */
async function walk(user: TestUser, before?: number) {
  const versions: number[] = [];
  let cursor = before;
  for (;;) {
    const page = await call(`${PATH}/history?limit=100${cursor === undefined ? "" : `&before=${cursor}`}`, { token: user.token });
    expect(page.status).toBe(200);
    for (const entry of page.body.entries) {
      expect(entry.old_version, "each entry is one change").toBe(entry.new_version === 1 ? null : entry.new_version - 1);
      versions.push(entry.new_version);
    }
    if (!page.body.has_more) {
      expect(page.body.next_before).toBeNull();
      return versions;
    }
    cursor = page.body.next_before;
  }
}

const descending = (from: number, count: number) => Array.from({ length: count }, (_, i) => from - i);

describe("the notification preference history is bounded", () => {
  it("keeps the newest 1,000 changes of a user; the history pages list exactly those, newest first", async () => {
    const user = await createTestUser();
    await firstSave(user.userId);
    await changes(user.userId, KEPT + 4); // versions 1 .. 1,005
    expect(await kept(user.userId)).toEqual(descending(KEPT + 5, KEPT));
    expect(await walk(user)).toEqual(descending(KEPT + 5, KEPT));

    // A change through the API prunes as well, and shows first.
    const put = await call(PATH, { method: "PUT", token: user.token, body: { categories: {}, quiet_hours: { enabled: true, start: "23:00", end: "06:00", timezone: "UTC" } } });
    expect(put.status).toBe(200);
    expect(put.body.version).toBe(KEPT + 6);
    expect(await walk(user)).toEqual(descending(KEPT + 6, KEPT));
  });

  it("a reader paging while changes prune the oldest entries goes on where it stopped, each entry once, to the oldest kept", async () => {
    const user = await createTestUser();
    await firstSave(user.userId);
    await changes(user.userId, KEPT - 1); // versions 1 .. 1,000: nothing pruned yet
    const first = await call(`${PATH}/history?limit=100`, { token: user.token });
    expect(first.body.entries.map((e: { new_version: number }) => e.new_version)).toEqual(descending(KEPT, 100));

    await changes(user.userId, 250); // versions 1,001 .. 1,250: 1 .. 250 pruned
    const rest = await walk(user, first.body.next_before);
    expect(rest).toEqual(descending(900, 900 - 250));
    // A cursor below every kept entry (its entries pruned) reads an empty last page.
    const [{ id }] = await adminSql<{ id: string }[]>`
      select min(id) as id from app_private.notification_preference_audit where user_id = ${user.userId}`;
    const beyond = await call(`${PATH}/history?limit=100&before=${id}`, { token: user.token });
    expect(beyond.body).toMatchObject({ entries: [], has_more: false, next_before: null });
  });

  it("other users' trails are not pruned by a user's changes", async () => {
    const busy = await createTestUser();
    const quiet = await createTestUser();
    await firstSave(quiet.userId);
    await changes(quiet.userId, 2);
    await firstSave(busy.userId);
    await changes(busy.userId, KEPT + 10);
    expect(await kept(quiet.userId)).toEqual([3, 2, 1]);
    expect(await kept(busy.userId)).toHaveLength(KEPT);
  });
});
