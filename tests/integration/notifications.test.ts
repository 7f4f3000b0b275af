// GET and PUT /v1/users/me/notifications through real Deno and Postgres:
// defaults, whole-document replace, ETag/If-Match (412 when stale), every
// validation error with its field pointer, the required category, the audit
// trail, and that the categories and defaults of TypeScript and of the database agree.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_QUIET_HOURS,
  NOTIFICATION_CATEGORY_NAMES,
  NOTIFICATION_CHANNELS,
  REQUIRED_NOTIFICATION_CATEGORIES,
  withDefaultCategories,
} from "../../functions/_shared/notification-categories.ts";
import { notificationPreferencesSchema } from "../../functions/_shared/schemas/notifications.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack, type TestUser } from "../support/harness.ts";
import { phone, startSession } from "../support/device-sessions.ts";
import { signEs256 } from "../support/tokens.ts";
import { TidesyncApi } from "../../client/api-client.ts";
import { ACCEPTED_TIME_ZONES, REFUSED_TIME_ZONES } from "../support/time-zones.ts";
import { TIME_ZONE_MAX_LENGTH, TIME_ZONE_SHAPE } from "../../functions/_shared/locale-and-time-zone.ts";

const PATH = "/v1/users/me/notifications";

function document(overrides: Record<string, unknown> = {}) {
  return {
    categories: {
      security: { push: true, email: false, in_app: false },
      sync_conflicts: { push: false, email: false, in_app: true },
      reminders: { push: true, email: false, in_app: true },
      product_updates: { push: false, email: false, in_app: false },
    },
    quiet_hours: { enabled: true, start: "22:30", end: "06:45", timezone: "Europe/Paris" },
    ...overrides,
  };
}

async function put(user: TestUser, body: unknown, headers: Record<string, string> = {}) {
  return await call(PATH, { method: "PUT", token: user.token, body, headers });
}

async function auditRows(userId: string) {
  return await adminSql<{ id: string; device_id: string | null; session_id: string | null; old_version: number | null; new_version: number; old_document: any; new_document: any; changed_at: Date }[]>`
    select id, device_id, session_id, old_version, new_version, old_document, new_document, changed_at
    from app_private.notification_preference_audit where user_id = ${userId} order by id`;
}

describe("GET /v1/users/me/notifications", () => {
  it("returns the defaults, version 0 and ETag \"0\", when the user never saved any", async () => {
    const user = await createTestUser();
    const response = await call(PATH, { token: user.token });
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).toBe('"0"');
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(notificationPreferencesSchema.parse(response.body)).toEqual({
      version: 0,
      updated_at: null,
      categories: withDefaultCategories({}),
      quiet_hours: DEFAULT_QUIET_HOURS,
    });
    expect(response.body.categories.security).toEqual({ push: true, email: true, in_app: true });
    // Reading writes nothing.
    expect(await auditRows(user.userId)).toEqual([]);
  });

  it("401 without a token or with a revoked session, 403 for the anon role", async () => {
    expectEnvelope(await call(PATH), 401, "UNAUTHENTICATED");
    const user = await createTestUser();
    await adminSql`delete from auth.sessions where id = ${user.sessionId}`;
    expectEnvelope(await call(PATH, { token: user.token }), 401, "UNAUTHENTICATED");
    const now = Math.floor(Date.now() / 1000);
    const anon = await signEs256(stack.keys.privateJwk, { iss: "supabase", role: "anon", iat: now, exp: now + 3600 });
    expectEnvelope(await call(PATH, { token: anon }), 403, "FORBIDDEN");
    expectEnvelope(await call(PATH, { method: "PUT", token: anon, body: document() }), 403, "FORBIDDEN");
  });

  it("405 for another method, with Allow", async () => {
    const response = await call(PATH, { method: "DELETE" });
    expectEnvelope(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe("GET, PUT");
  });
});

describe("PUT /v1/users/me/notifications", () => {
  it("replaces the whole document, bumps the version and the ETag, and GET returns it", async () => {
    const user = await createTestUser();
    const first = await put(user, document());
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("etag")).toBe('"1"');
    expect(first.body).toMatchObject({ version: 1, ...document() });
    expect(Date.parse(first.body.updated_at)).toBeGreaterThan(Date.now() - 60_000);

    const replacement = document({ quiet_hours: { enabled: false, start: "23:00", end: "07:00", timezone: "America/New_York" } });
    const second = await put(user, replacement);
    expect(second.status).toBe(200);
    expect(second.headers.get("etag")).toBe('"2"');
    const read = await call(PATH, { token: user.token });
    expect(read.headers.get("etag")).toBe('"2"');
    expect(read.body).toEqual({ ...second.body });
    expect(read.body).toMatchObject({ version: 2, ...replacement });
  });

  it("a category left out gets its default; sending the same document again creates no new version", async () => {
    const user = await createTestUser();
    const only = { categories: { reminders: { push: false, email: false, in_app: false } }, quiet_hours: DEFAULT_QUIET_HOURS };
    const saved = await put(user, only);
    expect(saved.status).toBe(200);
    expect(saved.body.categories).toEqual(withDefaultCategories(only.categories));
    const again = await put(user, only);
    expect(again.body.version).toBe(1);
    expect(again.headers.get("etag")).toBe('"1"');
    expect(await auditRows(user.userId)).toHaveLength(1);
  });

  it("saving the unchanged defaults stores nothing: version 0 stays, no audit row, another device's ETag \"0\" still works", async () => {
    const user = await createTestUser();
    const read = await call(PATH, { token: user.token });
    const saved = await put(user, read.body, { "if-match": read.headers.get("etag")! });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.headers.get("etag")).toBe('"0"');
    expect(saved.body).toEqual(read.body);
    expect((await put(user, { categories: {}, quiet_hours: DEFAULT_QUIET_HOURS })).body.version).toBe(0);
    expect(await auditRows(user.userId)).toEqual([]);
    expect((await call(`${PATH}/history`, { token: user.token })).body.entries).toEqual([]);
    // A second device that read version 0 saves its change.
    const other = await put(user, document(), { "if-match": '"0"' });
    expect(other.status, other.text).toBe(200);
    expect(other.body.version).toBe(1);
  });

  it("a category left out gets its default, not its stored value: PUT replaces the whole document (api-v1)", async () => {
    const user = await createTestUser();
    const saved = await put(user, document());
    expect(saved.body.categories.reminders).toEqual(document().categories.reminders);
    // An app that does not know reminders saves quiet hours with the current ETag.
    const { reminders: _, ...known } = document().categories;
    const older = await put(user, { categories: known, quiet_hours: DEFAULT_QUIET_HOURS }, { "if-match": saved.headers.get("etag")! });
    expect(older.status).toBe(200);
    expect(older.body.categories).toEqual({ ...known, reminders: withDefaultCategories({}).reminders });
  });

  it("a retried conditional PUT whose first attempt was applied gets 412 (stale If-Match, api-v1) and changes nothing", async () => {
    const user = await createTestUser();
    const first = await put(user, document(), { "if-match": '"0"' });
    expect(first.status).toBe(200);
    expectEnvelope(await put(user, document(), { "if-match": '"0"' }), 412, "PRECONDITION_FAILED");
    expectEnvelope(await put(user, { ...document(), version: 0 }), 412, "PRECONDITION_FAILED");
    const current = await call(PATH, { token: user.token });
    expect(current.body).toMatchObject({ version: 1, ...document() });
    expect(await auditRows(user.userId)).toHaveLength(1);
  });

  it("accepts the document as read back (version and updated_at included)", async () => {
    const user = await createTestUser();
    const read = await call(PATH, { token: user.token });
    const edited = { ...read.body, quiet_hours: { ...read.body.quiet_hours, enabled: true } };
    const saved = await put(user, edited);
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({ version: 1, quiet_hours: { enabled: true } });
  });

  it("If-Match: the current ETag succeeds, a stale one → 412 PRECONDITION_FAILED and nothing changes", async () => {
    const user = await createTestUser();
    expect((await put(user, document(), { "if-match": '"0"' })).status).toBe(200);
    const stale = await put(user, document({ categories: { security: { push: true, email: true, in_app: true } } }), { "if-match": '"0"' });
    const error = expectEnvelope(stale, 412, "PRECONDITION_FAILED");
    expect(error.retryable).toBe(false);
    const current = await call(PATH, { token: user.token });
    expect(current.body).toMatchObject({ version: 1, ...document() });

    const fresh = await put(user, document({ categories: { security: { push: true, email: true, in_app: true } } }), { "if-match": current.headers.get("etag")! });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("etag")).toBe('"2"');
    expect(await auditRows(user.userId)).toHaveLength(2);
  });

  it("If-Match forms: * always matches, a list matches any member, weak or garbage tags never match", async () => {
    const user = await createTestUser();
    expect((await put(user, document(), { "if-match": "*" })).status).toBe(200);
    expect((await put(user, document({ quiet_hours: DEFAULT_QUIET_HOURS }), { "if-match": '"7", "1"' })).status).toBe(200);
    expectEnvelope(await put(user, document(), { "if-match": 'W/"2"' }), 412, "PRECONDITION_FAILED");
    expectEnvelope(await put(user, document(), { "if-match": "banana" }), 412, "PRECONDITION_FAILED");
  });

  it("If-Match present but empty or blank (an app sending `${etag ?? \"\"}`) → 412: only no If-Match or * is unconditional", async () => {
    const user = await createTestUser();
    expect((await put(user, document(), { "if-match": '"0"' })).status).toBe(200); // another device's save: version 1
    for (const header of ["", " "]) {
      expectEnvelope(await put(user, document({ quiet_hours: DEFAULT_QUIET_HOURS }), { "if-match": header }), 412, "PRECONDITION_FAILED");
    }
    expect(await auditRows(user.userId)).toHaveLength(1);
    expect((await call(PATH, { token: user.token })).body.quiet_hours).toEqual(document().quiet_hours);
  });

  it("a version in the body is a precondition too", async () => {
    const user = await createTestUser();
    expect((await put(user, { ...document(), version: 0 })).status).toBe(200);
    expectEnvelope(await put(user, { ...document({ quiet_hours: DEFAULT_QUIET_HOURS }), version: 0 }), 412, "PRECONDITION_FAILED");
    expect((await put(user, { ...document({ quiet_hours: DEFAULT_QUIET_HOURS }), version: 1 })).status).toBe(200);
  });

  it("two writers that read the same version: exactly one wins, the other gets 412", async () => {
    const user = await createTestUser();
    const results = await Promise.all([
      put(user, document(), { "if-match": '"0"' }),
      put(user, document({ quiet_hours: DEFAULT_QUIET_HOURS }), { "if-match": '"0"' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412]);
    const updated = await Promise.all([
      put(user, document({ categories: {} }), { "if-match": '"1"' }),
      put(user, document({ categories: { reminders: { push: false, email: true, in_app: false } } }), { "if-match": '"1"' }),
    ]);
    expect(updated.map((r) => r.status).sort()).toEqual([200, 412]);
    expect((await call(PATH, { token: user.token })).body.version).toBe(2);
  });

  it("400 VALIDATION_FAILED with the field pointer of each invalid part, and nothing is saved", async () => {
    const user = await createTestUser();
    const base = document();
    const cases: [unknown, string, string][] = [
      [{ ...base, categories: { ...base.categories, marketing: { push: true, email: true, in_app: true } } }, "/categories/marketing", "unexpected_field"],
      [{ ...base, categories: { ...base.categories, reminders: { push: true, email: false, in_app: true, sms: true } } }, "/categories/reminders/sms", "unexpected_field"],
      [{ ...base, categories: { ...base.categories, reminders: { push: true, email: false } } }, "/categories/reminders/in_app", "required"],
      [{ ...base, categories: { ...base.categories, reminders: { push: "yes", email: false, in_app: true } } }, "/categories/reminders/push", "invalid_type"],
      [{ ...base, quiet_hours: { ...base.quiet_hours, start: "25:00" } }, "/quiet_hours/start", "invalid_format"],
      [{ ...base, quiet_hours: { ...base.quiet_hours, end: "7:00" } }, "/quiet_hours/end", "invalid_format"],
      [{ ...base, quiet_hours: { ...base.quiet_hours, timezone: "Europe/Atlantis" } }, "/quiet_hours/timezone", "unknown_timezone"],
      [{ ...base, quiet_hours: { ...base.quiet_hours, timezone: "+02:00" } }, "/quiet_hours/timezone", "unknown_timezone"],
      [{ ...base, quiet_hours: { ...base.quiet_hours, timezone: "europe/paris" } }, "/quiet_hours/timezone", "unknown_timezone"],
      [{ ...base, quiet_hours: { ...base.quiet_hours, start: "22:00", end: "22:00" } }, "/quiet_hours/end", "empty_window"],
      [{ ...base, quiet_hours: { ...base.quiet_hours, snooze: true } }, "/quiet_hours/snooze", "unexpected_field"],
      [{ categories: base.categories }, "/quiet_hours", "required"],
      [{ ...base, owner: "someone" }, "/owner", "unexpected_field"],
      [{ ...base, version: -1 }, "/version", "too_small"],
    ];
    for (const [body, field, code] of cases) {
      const error = expectEnvelope(await put(user, body), 400, "VALIDATION_FAILED");
      expect(error.details, JSON.stringify(body)).toContainEqual(expect.objectContaining({ field, code }));
    }
    expect((await call(PATH, { token: user.token })).body.version).toBe(0);
    expect(await auditRows(user.userId)).toEqual([]);
  });

  it("a time zone is taken only spelled as in the tz database (aliases too) and stored as sent; another case is unknown_timezone", async () => {
    const user = await createTestUser();
    for (const timezone of REFUSED_TIME_ZONES) {
      const error = expectEnvelope(await put(user, document({ quiet_hours: { ...document().quiet_hours, timezone } })), 400, "VALIDATION_FAILED");
      expect(error.details, timezone).toEqual([expect.objectContaining({ field: "/quiet_hours/timezone", code: "unknown_timezone" })]);
    }
    expect(await auditRows(user.userId)).toEqual([]);
    for (const timezone of ACCEPTED_TIME_ZONES) {
      const saved = await put(user, document({ quiet_hours: { ...document().quiet_hours, timezone } }));
      expect(saved.status, `${timezone}: ${saved.text}`).toBe(200);
      expect(saved.body.quiet_hours.timezone).toBe(timezone);
      const [row] = await adminSql<{ quiet_hours_timezone: string }[]>`
        select quiet_hours_timezone from app_private.notification_preferences where user_id = ${user.userId}`;
      expect(row.quiet_hours_timezone).toBe(timezone);
    }
  });

  it("a required category (security) switched off on every channel → 400 with its field; one channel on is enough", async () => {
    expect(REQUIRED_NOTIFICATION_CATEGORIES).toContain("security");
    const user = await createTestUser();
    const off = document({ categories: { ...document().categories, security: { push: false, email: false, in_app: false } } });
    const error = expectEnvelope(await put(user, off), 400, "VALIDATION_FAILED");
    expect(error.details).toEqual([expect.objectContaining({ field: "/categories/security", code: "required_category" })]);
    const emailOnly = document({ categories: { ...document().categories, security: { push: false, email: true, in_app: false } } });
    expect((await put(user, emailOnly)).status).toBe(200);
  });

  it("400 MALFORMED_JSON, 415 and 413 for bodies that are not a small JSON document; 401 without a token", async () => {
    const user = await createTestUser();
    const headers = { "content-type": "application/json" };
    expectEnvelope(await call(PATH, { method: "PUT", token: user.token, rawBody: "[1,", headers }), 400, "MALFORMED_JSON");
    expectEnvelope(await call(PATH, { method: "PUT", token: user.token, rawBody: JSON.stringify(document()), headers: { "content-type": "text/plain" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    const huge = JSON.stringify({ ...document(), padding: "x".repeat(1024 * 1024 + 10) });
    expectEnvelope(await call(PATH, { method: "PUT", token: user.token, rawBody: huge, headers }), 413, "PAYLOAD_TOO_LARGE");
    expectEnvelope(await call(PATH, { method: "PUT", body: document() }), 401, "UNAUTHENTICATED");
  });

  it("every change is appended to the audit trail: user, device of the session, when, old → new", async () => {
    const user = await createTestUser();
    const { body } = await startSession(user.token, phone());
    const first = await put(user, document());
    const second = await put(user, document({ quiet_hours: DEFAULT_QUIET_HOURS }));
    const rows = await auditRows(user.userId);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      device_id: body.device.id,
      session_id: user.sessionId,
      old_version: null,
      old_document: null,
      new_version: 1,
      new_document: { categories: document().categories, quiet_hours: document().quiet_hours },
    });
    expect(rows[0].changed_at.toISOString()).toBe(first.body.updated_at);
    expect(rows[1]).toMatchObject({
      device_id: body.device.id,
      old_version: 1,
      old_document: { quiet_hours: document().quiet_hours },
      new_version: 2,
      new_document: { quiet_hours: DEFAULT_QUIET_HOURS },
    });
    expect(rows[1].changed_at.toISOString()).toBe(second.body.updated_at);

    // A session without a registered device is recorded with its session only.
    const other = await user.newSession();
    expect((await call(PATH, { method: "PUT", token: other.token, body: document() })).status).toBe(200);
    expect((await auditRows(user.userId))[2]).toMatchObject({ device_id: null, session_id: other.sessionId, old_version: 2, new_version: 3 });
  });

  it("the audit trail cannot be rewritten, not even by the owner role the function connects as", async () => {
    const user = await createTestUser();
    expect((await put(user, document())).status).toBe(200);
    const { default: postgres } = await import("postgres");
    const owner = postgres(stack.ownerDbUrl, { max: 1, onnotice: () => {} });
    try {
      await expect(owner`update app_private.notification_preference_audit set new_version = 99 where user_id = ${user.userId}`).rejects.toThrow(/append-only/);
      await expect(owner`delete from app_private.notification_preference_audit where user_id = ${user.userId}`).rejects.toThrow(/append-only/);
    } finally {
      await owner.end();
    }
    expect(await auditRows(user.userId)).toHaveLength(1);
  });
});

describe("the declared categories", () => {
  it("TypeScript and the database check agree on categories, required categories and channels", async () => {
    const [row] = await adminSql<{ categories: string[]; required: string[]; channels: string[] }[]>`
      select app_private.notification_category_names() as categories,
             app_private.required_notification_categories() as required,
             app_private.notification_channel_names() as channels`;
    expect([...row.categories].sort()).toEqual([...NOTIFICATION_CATEGORY_NAMES].sort());
    expect([...row.required].sort()).toEqual([...REQUIRED_NOTIFICATION_CATEGORIES].sort());
    expect([...row.channels].sort()).toEqual([...NOTIFICATION_CHANNELS].sort());
  });

  it("TypeScript and the database agree on the defaults (what a user who never saved takes)", async () => {
    const [row] = await adminSql<{ defaults: unknown }[]>`select app_private.notification_preference_defaults() as defaults`;
    expect(row.defaults).toEqual({ categories: withDefaultCategories({}), quiet_hours: DEFAULT_QUIET_HOURS });
  });

  it("the database accepts the TypeScript defaults and refuses what TypeScript refuses", async () => {
    const check = async (categories: unknown) => {
      const [row] = await adminSql<{ ok: boolean }[]>`select app_private.notification_categories_are_valid(${adminSql.json(categories as never)}) as ok`;
      return row.ok;
    };
    expect(await check(withDefaultCategories({}))).toBe(true);
    const defaults = withDefaultCategories({});
    expect(await check({ ...defaults, marketing: { push: true, email: true, in_app: true } })).toBe(false);
    expect(await check({ ...defaults, reminders: { push: true, email: true, in_app: true, sms: true } })).toBe(false);
    expect(await check({ ...defaults, reminders: { push: "yes", email: true, in_app: true } })).toBe(false);
    for (const name of REQUIRED_NOTIFICATION_CATEGORIES) {
      expect(await check({ ...defaults, [name]: { push: false, email: false, in_app: false } })).toBe(false);
    }
  });
});

describe("answers carrying a stored time zone the reader's Intl does not know", () => {
  // The server takes a zone its own Intl knows; a device with older ICU data
  // (or Node, which lacks "Factory") must still read it back: answers are
  // checked against the stored shape, not the reader's Intl.
  it("the client reads preferences, a session start, history, devices and the export", async () => {
    const user = await createTestUser();
    const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: async () => user.token });
    const { body: started } = await api.startSession({ device: phone() });
    for (const zone of ["Factory", "Mars/Olympus_Mons"]) {
      expect(() => new Intl.DateTimeFormat("en-US", { timeZone: zone })).toThrow(RangeError);
      await adminSql`
        insert into app_private.notification_preferences as p
          (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
        values (${user.userId}, ${adminSql.json(withDefaultCategories({}))}, true, '22:00', '07:00', ${zone})
        on conflict (user_id) do update set quiet_hours_timezone = excluded.quiet_hours_timezone`;

      expect((await api.getNotificationPreferences()).preferences.quiet_hours.timezone).toBe(zone);
      const again = await api.startSession({ device: phone({ installation_id: started.device.installation_id }) });
      expect(again.body.notifications.quiet_hours.timezone).toBe(zone);
      expect((await api.getNotificationHistory()).entries[0].new.quiet_hours.timezone).toBe(zone);
      await adminSql`update app_private.devices set timezone = ${zone} where id = ${started.device.id}`;
      expect((await api.listDevices()).devices[0].timezone).toBe(zone);
      expect((await api.exportAccount()).notification_preferences.quiet_hours.timezone).toBe(zone);
      if (zone !== "Factory") continue;
      // Saving something else with a zone the server knows (its Intl has Factory) reads back too.
      const { preferences } = await api.getNotificationPreferences();
      const saved = await api.putNotificationPreferences({ categories: preferences.categories, quiet_hours: { ...preferences.quiet_hours, enabled: false } });
      expect(saved.preferences.quiet_hours).toMatchObject({ enabled: false, timezone: zone });
    }
  });

  it("the answers' shape is the one the database checks", async () => {
    const checks = await adminSql<{ conname: string; def: string }[]>`
      select conname, pg_get_constraintdef(oid) as def from pg_constraint
      where conname in ('devices_timezone_shape', 'notification_preferences_quiet_hours_timezone_shape') order by conname`;
    expect(checks).toHaveLength(2);
    for (const { def } of checks) {
      expect(def).toContain(`<= ${TIME_ZONE_MAX_LENGTH}`);
      expect(def).toContain(`'${TIME_ZONE_SHAPE.source.replaceAll("\\/", "/")}'`);
    }
  });
});

describe("GET /v1/users/me/notifications/history", () => {
  it("lists the caller's own changes newest first, old → new, in keyset pages", async () => {
    const user = await createTestUser();
    const { body: session } = await startSession(user.token, phone());
    await put(user, document());
    await put(user, document({ quiet_hours: { enabled: false, start: "22:00", end: "07:00", timezone: "UTC" } }));
    await put(user, document({ quiet_hours: { enabled: true, start: "23:00", end: "07:00", timezone: "UTC" } }));

    const first = await call(`${PATH}/history?limit=2`, { token: user.token });
    expect(first.status).toBe(200);
    expect(first.body.entries.map((e: { new_version: number }) => e.new_version)).toEqual([3, 2]);
    expect(first.body.entries[0]).toMatchObject({
      device_id: session.device.id,
      old_version: 2,
      old: { quiet_hours: { enabled: false, start: "22:00" } },
      new: { quiet_hours: { enabled: true, start: "23:00" } },
    });
    expect(first.body.has_more).toBe(true);

    const second = await call(`${PATH}/history?limit=2&before=${first.body.next_before}`, { token: user.token });
    expect(second.body.entries).toHaveLength(1);
    expect(second.body.entries[0]).toMatchObject({ new_version: 1, old_version: null, old: null, new: { categories: document().categories } });
    expect(second.body).toMatchObject({ has_more: false, next_before: null });

    // The app-side client reads the same pages, validated by the shared schema.
    const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: async () => user.token });
    const viaClient = await api.getNotificationHistory({ limit: 2, before: first.body.next_before });
    expect(viaClient.entries.map((e) => e.new_version)).toEqual([1]);
  });

  it("shows a document saved before a category was declared with that category's default, as GET does", async () => {
    const user = await createTestUser();
    // A row as written before product_updates existed (the database takes it).
    const { product_updates: _, ...older } = withDefaultCategories({ reminders: { push: false, email: false, in_app: true } });
    await adminSql`
      insert into app_private.notification_preferences
        (user_id, categories, quiet_hours_enabled, quiet_hours_start, quiet_hours_end, quiet_hours_timezone)
      values (${user.userId}, ${adminSql.json(older)}, false, '22:00', '07:00', 'UTC')`;
    const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: async () => user.token });
    const shownBefore = withDefaultCategories(older);
    expect((await api.getNotificationPreferences()).preferences.categories).toEqual(shownBefore);
    expect((await put(user, document())).status).toBe(200);

    const { entries } = await api.getNotificationHistory();
    expect(entries.map((e) => [e.old?.categories ?? null, e.new.categories])).toEqual([
      [shownBefore, document().categories],
      [null, shownBefore],
    ]);
  });

  it("never shows another user's changes, and a fresh user's history is empty", async () => {
    const alice = await createTestUser();
    const bob = await createTestUser();
    await put(alice, document());
    const response = await call(`${PATH}/history`, { token: bob.token });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ entries: [], has_more: false, next_before: null });
  });

  it("rejects bad paging parameters with field details, and needs a token", async () => {
    const user = await createTestUser();
    for (const query of ["limit=0", "limit=101", "limit=abc", "before=-1", "surprise=1"]) {
      const error = expectEnvelope(await call(`${PATH}/history?${query}`, { token: user.token }), 400, "VALIDATION_FAILED");
      expect(error.details?.[0].field).toBe("/" + query.split("=")[0]);
      expect(error.details, query).toHaveLength(1);
    }
    // One detail per field, naming the field's own bound (not also the safe-integer one).
    for (const [query, message] of [["before=9007199254740992", "at most 9007199254740991"], ["limit=999999999999999999", "at most 100"]]) {
      const error = expectEnvelope(await call(`${PATH}/history?${query}`, { token: user.token }), 400, "VALIDATION_FAILED");
      expect(error.details, query).toEqual([{ field: "/" + query.split("=")[0], code: "too_large", message }]);
    }
    expectEnvelope(await call(`${PATH}/history`), 401, "UNAUTHENTICATED");
  });
});
