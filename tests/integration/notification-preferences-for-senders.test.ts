// A push sender (service_role, in SQL) decides what a user takes from the database alone:
// app_private.effective_notification_preferences(user) answers what GET
// /v1/users/me/notifications answers that user (the defaults for a user who never saved, a
// category declared after the row was saved filled in with its default), and the query of
// docs/devices-and-sessions.md ("Sending pushes") is run as written. Before, a sender read
// app_private.notification_preferences, found no row for a user who never saved (NULL), and
// the opt-in default of product_updates (push off) existed only in TypeScript.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_QUIET_HOURS, withDefaultCategories } from "../../functions/_shared/notification-categories.ts";
import { adminSql, call, createTestUser, type TestUser } from "../support/harness.ts";
import { phone, pushToken, startSession } from "../support/device-sessions.ts";

const PATH = "/v1/users/me/notifications";

/** What the sender's function answers for the user, as service_role, in GET's shape. */
async function asSender(userId: string) {
  const rows = await adminSql.begin(async (tx) => {
    await tx`set local role service_role`;
    return await tx<{ version: number; updated_at: Date | null; categories: unknown; quiet_hours: unknown }[]>`
      select version, updated_at, categories, quiet_hours from app_private.effective_notification_preferences(${userId})`;
  });
  expect(rows).toHaveLength(1);
  const [row] = rows;
  return { ...row, updated_at: row.updated_at?.toISOString() ?? null };
}

async function asApi(user: TestUser) {
  const response = await call(PATH, { token: user.token });
  expect(response.status).toBe(200);
  const { version, updated_at, categories, quiet_hours } = response.body;
  return { version, updated_at, categories, quiet_hours };
}

/** The sender's query of docs/devices-and-sessions.md, "Sending pushes", as written there. */
function documentedQuery(): string {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/devices-and-sessions.md"), "utf8");
  const section = doc.slice(doc.indexOf("\n## Sending pushes"), doc.indexOf("\n## ", doc.indexOf("\n## Sending pushes") + 1));
  const query = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]).find((q) => q.includes("effective_notification_preferences"));
  expect(query, "docs/devices-and-sessions.md, Sending pushes, shows the sender's query").toBeTruthy();
  return query!;
}

/** The devices the documented query pushes `category` to, for the user. */
async function pushedTo(userId: string, category: string): Promise<string[]> {
  const rows = await adminSql.begin(async (tx) => {
    await tx`set local role service_role`;
    return await tx.unsafe<{ device_id: string }[]>(documentedQuery(), [userId, category]);
  });
  return rows.map((r) => r.device_id);
}

describe("a push sender's view of notification preferences", () => {
  it("a user who never saved: the defaults, as GET answers them (product_updates is not pushed: opt-in)", async () => {
    const user = await createTestUser();
    const sender = await asSender(user.userId);
    expect(sender).toEqual(await asApi(user));
    expect(sender).toEqual({ version: 0, updated_at: null, categories: withDefaultCategories({}), quiet_hours: DEFAULT_QUIET_HOURS });
    expect(sender.categories).toMatchObject({ product_updates: { push: false } });
  });

  it("a user who saved: their document, as GET answers it", async () => {
    const user = await createTestUser();
    const saved = await call(PATH, {
      method: "PUT",
      token: user.token,
      body: {
        categories: withDefaultCategories({ product_updates: { push: true, email: false, in_app: true }, reminders: { push: false, email: true, in_app: true } }),
        quiet_hours: { enabled: true, start: "22:30", end: "06:45", timezone: "Europe/Paris" },
      },
    });
    expect(saved.status).toBe(200);
    const sender = await asSender(user.userId);
    expect(sender).toEqual(await asApi(user));
    expect(sender).toMatchObject({ version: 1, categories: { product_updates: { push: true }, reminders: { push: false } } });
  });

  it("a row saved before a category was declared: that category's default, as GET answers it", async () => {
    const user = await createTestUser();
    const { product_updates: _, ...older } = withDefaultCategories({ reminders: { push: false, email: false, in_app: true } });
    await adminSql`
      insert into app_private.notification_preferences
        (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
      values (${user.userId}, ${adminSql.json(older)}, false, '22:00', '07:00', 'UTC')`;
    const sender = await asSender(user.userId);
    expect(sender).toEqual(await asApi(user));
    expect(sender.categories).toMatchObject({ product_updates: { push: false, email: false, in_app: true }, reminders: { push: false } });
  });

  it("the documented query pushes a category only to a user who takes it by push, outside their quiet hours", async () => {
    const user = await createTestUser();
    const { body } = await startSession(user.token, phone({ push_token: pushToken(), push_provider: "apns" }));
    const device = body.device.id;
    // Never saved: the defaults decide.
    expect(await pushedTo(user.userId, "reminders")).toEqual([device]);
    expect(await pushedTo(user.userId, "product_updates")).toEqual([]);

    // Opted in to product_updates, reminders off by push.
    const categories = withDefaultCategories({ product_updates: { push: true, email: false, in_app: true }, reminders: { push: false, email: false, in_app: true } });
    const put = async (quiet_hours: object) =>
      expect((await call(PATH, { method: "PUT", token: user.token, body: { categories, quiet_hours } })).status).toBe(200);
    await put({ enabled: false, start: "22:00", end: "07:00", timezone: "UTC" });
    expect(await pushedTo(user.userId, "product_updates")).toEqual([device]);
    expect(await pushedTo(user.userId, "reminders")).toEqual([]);

    // Quiet hours from an hour ago to an hour from now (in UTC, the zone they name): nothing.
    const [{ start, end }] = await adminSql<{ start: string; end: string }[]>`
      select to_char(now() at time zone 'UTC' - interval '1 hour', 'HH24:MI') as start,
             to_char(now() at time zone 'UTC' + interval '1 hour', 'HH24:MI') as end`;
    await put({ enabled: true, start, end, timezone: "UTC" });
    expect(await pushedTo(user.userId, "product_updates")).toEqual([]);
    expect(await pushedTo(user.userId, "security")).toEqual([]);
  });
});
