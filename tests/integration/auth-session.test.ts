// POST and DELETE /v1/auth/session through real Deno and Postgres: session
// start is idempotent per (user, installation), binds the session, returns the
// start-up state; sign-out deletes the Supabase session (and its refresh
// tokens) so the token is refused; every status of the contract, including
// 429 and 503 for all device/session/notification routes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ONBOARDING_STEPS } from "../../functions/_shared/onboarding-steps.ts";
import { withDefaultCategories } from "../../functions/_shared/notification-categories.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { addRefreshToken, deviceRow, phone, pushToken, sessionState, startSession } from "../support/device-sessions.ts";
import { ACCEPTED_TIME_ZONES, REFUSED_TIME_ZONES } from "../support/time-zones.ts";
import { freePort, type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { signEs256 } from "../support/tokens.ts";
import { asUser } from "../support/shared-lists.ts";

describe("POST /v1/auth/session", () => {
  it("201 the first time for an installation, 200 after, with the same device id", async () => {
    const user = await createTestUser();
    const device = phone();
    const first = await startSession(user.token, device);
    expect(first.status).toBe(201);
    const second = await startSession(user.token, { ...device, app_version: "1.5.0", build_number: 150 });
    expect(second.status).toBe(200);
    expect(second.body.device.id).toBe(first.body.device.id);
    expect(second.body.device).toMatchObject({ app_version: "1.5.0", build_number: 150, current: true, revoked_at: null });
    const [{ count }] = await adminSql<{ count: number }[]>`select count(*)::int as count from app_private.devices where user_id = ${user.userId}`;
    expect(count).toBe(1);
  });

  it("returns the session, the device, the onboarding state, the notification defaults and the server time", async () => {
    const user = await createTestUser();
    const device = phone({ push_token: pushToken(), push_provider: "apns" });
    const response = await call("/v1/auth/session", { method: "POST", token: user.token, body: { device } });
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = response.body;
    expect(body.session).toMatchObject({ id: user.sessionId, user_id: user.userId, aal: "aal1" });
    expect(Date.parse(body.session.expires_at)).toBeGreaterThan(Date.now());
    expect(body.device).toMatchObject({
      installation_id: device.installation_id,
      platform: "ios",
      app_version: "1.4.0",
      build_number: 140,
      locale: "en-GB",
      timezone: "Europe/London",
      push_provider: "apns",
      has_push_token: true,
      current: true,
      revoked_at: null,
    });
    expect(body.device).not.toHaveProperty("push_token");
    expect(body.user).toEqual({ id: user.userId, display_name: null, onboarding: { completed_steps: [], completed_at: null } });
    expect(body.notifications).toMatchObject({ version: 0, updated_at: null, categories: withDefaultCategories({}) });
    expect(Math.abs(Date.parse(body.server_time) - Date.now())).toBeLessThan(60_000);
    // The Supabase session is bound to the device.
    expect((await deviceRow(body.device.id)).session_id).toBe(user.sessionId);
  });

  it("shows the onboarding state the database derives (completed_at when every step is done)", async () => {
    const user = await createTestUser();
    await adminSql`update public.profiles set completed_steps = ${["first_sync", "welcome"]} where id = ${user.userId}`;
    const partial = await startSession(user.token, phone());
    expect(partial.body.user.onboarding).toEqual({ completed_steps: ["welcome", "first_sync"], completed_at: null });

    await adminSql`update public.profiles set completed_steps = ${[...ONBOARDING_STEPS]}, display_name = 'Ada' where id = ${user.userId}`;
    const done = await startSession(user.token, phone());
    expect(done.body.user.display_name).toBe("Ada");
    expect(done.body.user.onboarding.completed_steps).toEqual([...ONBOARDING_STEPS]);
    expect(done.body.user.onboarding.completed_at).not.toBeNull();
  });

  it("two devices marking different onboarding steps at the same moment both count (rpc complete_onboarding_steps)", async () => {
    const user = await createTestUser();
    await asUser(user, (tx) => tx`select public.complete_onboarding_steps(${["welcome"]}::text[])`);
    // The phone's call holds the row; the tablet's waits for it, then adds to what the phone stored.
    let releasePhone!: () => void;
    const phoneHolds = new Promise<void>((resolve) => (releasePhone = resolve));
    let phoneCalled!: () => void;
    const phoneCalledP = new Promise<void>((resolve) => (phoneCalled = resolve));
    const phoneCall = asUser(user, async (tx) => {
      await tx`select * from public.complete_onboarding_steps(${["profile", "first_sync"]}::text[])`;
      phoneCalled();
      await phoneHolds;
    });
    await phoneCalledP;
    const tabletCall = asUser(user, (tx) => tx<{ completed_steps: string[]; completed_at: Date | null }[]>`
      select * from public.complete_onboarding_steps(${["notifications"]}::text[])`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    releasePhone();
    await phoneCall;
    const [tablet] = await tabletCall;
    expect(tablet.completed_steps).toEqual([...ONBOARDING_STEPS]);
    expect(tablet.completed_at).not.toBeNull();
    const session = await startSession(user.token, phone());
    expect(session.body.user.onboarding.completed_steps).toEqual([...ONBOARDING_STEPS]);
  });

  it("the onboarding steps of TypeScript and of the database are the same list", async () => {
    const [row] = await adminSql<{ steps: string[] }[]>`select app_private.onboarding_steps() as steps`;
    expect(row.steps).toEqual([...ONBOARDING_STEPS]);
  });

  it("keeps the registered push token when the request leaves it out, and removes it on null", async () => {
    const user = await createTestUser();
    const device = phone({ push_token: pushToken(), push_provider: "apns" });
    const first = await startSession(user.token, device);
    const { push_token: _t, push_provider: _p, ...withoutToken } = device;
    const kept = await startSession(user.token, withoutToken);
    expect(kept.body.device.has_push_token).toBe(true);
    expect((await deviceRow(first.body.device.id)).push_token).toBe(device.push_token);
    const removed = await startSession(user.token, { ...withoutToken, push_token: null, push_provider: null });
    expect(removed.body.device).toMatchObject({ has_push_token: false, push_provider: null });
    expect((await deviceRow(first.body.device.id)).push_token).toBeNull();
  });

  it("a new sign-in on the same installation signs the session it replaces out", async () => {
    const user = await createTestUser();
    const device = phone();
    const first = await startSession(user.token, device);
    const second = await user.newSession();
    const again = await startSession(second.token, device);
    expect(again.status).toBe(200);
    expect(again.body.device.id).toBe(first.body.device.id);
    expect(again.body.session.id).toBe(second.sessionId);
    expect(await sessionState(user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    expectEnvelope(await call("/v1/devices", { token: user.token }), 401, "UNAUTHENTICATED");
    expect((await call("/v1/devices", { token: second.token })).status).toBe(200);
  });

  it("the same session on a new installation (a reinstall) moves the binding and revokes the old device", async () => {
    const user = await createTestUser();
    const token = pushToken();
    const before = await startSession(user.token, phone({ push_token: token, push_provider: "apns" }));
    const after = await startSession(user.token, phone({ push_token: token, push_provider: "apns" }));
    expect(after.status).toBe(201);
    expect(after.body.device.id).not.toBe(before.body.device.id);
    const old = await deviceRow(before.body.device.id);
    expect(old).toMatchObject({ session_id: null, push_token: null });
    expect(old.revoked_at).not.toBeNull();
    expect((await deviceRow(after.body.device.id)).push_token).toBe(token);
  });

  it("400 VALIDATION_FAILED with a field pointer for each invalid device field", async () => {
    const user = await createTestUser();
    const cases: [Record<string, unknown>, string, string][] = [
      [{}, "/device", "required"],
      [{ device: { ...phone(), platform: "symbian" } }, "/device/platform", "invalid_value"],
      [{ device: { ...phone(), platform: undefined } }, "/device/platform", "required"],
      [{ device: { ...phone(), installation_id: "not-a-uuid" } }, "/device/installation_id", "invalid_format"],
      [{ device: { ...phone(), build_number: 1.5 } }, "/device/build_number", "invalid_type"],
      [{ device: { ...phone(), app_version: "" } }, "/device/app_version", "too_short"],
      [{ device: { ...phone(), timezone: "Mars/Olympus_Mons" } }, "/device/timezone", "unknown_timezone"],
      [{ device: { ...phone(), locale: "not a locale" } }, "/device/locale", "invalid_locale"],
      [{ device: { ...phone(), push_token: pushToken() } }, "/device/push_provider", "required"],
      [{ device: { ...phone(), push_token: pushToken(), push_provider: "webpush" } }, "/device/push_provider", "invalid_value"],
      [{ device: { ...phone(), model: "Pixel\u0000 9" } }, "/device/model", "invalid_characters"],
      [{ device: { ...phone(), app_version: "1.0\uD800" } }, "/device/app_version", "invalid_characters"],
      [{ device: { ...phone(), imei: "123" } }, "/device/imei", "unexpected_field"],
      [{ device: phone(), user_id: user.userId }, "/user_id", "unexpected_field"],
      // A key Postgres cannot store: on the object that holds it (a pointer naming it would not, as U+FFFD).
      [{ device: { ...phone(), "\udc00": 1 } }, "/device", "invalid_characters"],
      [{ device: phone(), "a\u0000": 1 }, "", "invalid_characters"],
    ];
    for (const [body, field, code] of cases) {
      const error = expectEnvelope(await call("/v1/auth/session", { method: "POST", token: user.token, body }), 400, "VALIDATION_FAILED");
      expect(error.details, JSON.stringify(body)).toContainEqual(expect.objectContaining({ field, code }));
    }
    const [{ count }] = await adminSql<{ count: number }[]>`select count(*)::int as count from app_private.devices where user_id = ${user.userId}`;
    expect(count).toBe(0);
  });

  it("one detail per field and code: a build_number of 1e20 is too_large once, at the tighter bound", async () => {
    const user = await createTestUser();
    const error = expectEnvelope(await call("/v1/auth/session", { method: "POST", token: user.token, body: { device: { ...phone(), build_number: 1e20 } } }), 400, "VALIDATION_FAILED");
    expect(error.message).toBe("1 field is invalid");
    expect(error.details).toEqual([{ field: "/device/build_number", code: "too_large", message: "at most 2147483647" }]);
  });

  it("a build_number written as a literal JSON.parse reads as another number (1e-400 as 0) is 400 not_exact, never registered as that number", async () => {
    const user = await createTestUser();
    const headers = { "content-type": "application/json" };
    for (const literal of ["1e-400", "140.00000000000000001"]) {
      const rawBody = JSON.stringify({ device: phone() }).replace('"build_number":140', `"build_number":${literal}`);
      const error = expectEnvelope(await call("/v1/auth/session", { method: "POST", token: user.token, rawBody, headers }), 400, "VALIDATION_FAILED");
      expect(error.details, literal).toEqual([{ field: "/device/build_number", code: "not_exact", message: expect.stringMatching(/^would be stored as (0|140):/) }]);
    }
    expect((await adminSql`select count(*)::int as n from app_private.devices where user_id = ${user.userId}`)[0].n).toBe(0);
  });

  it("a device's time zone is taken only spelled as in the tz database (aliases too) and stored as sent; another case is unknown_timezone", async () => {
    const user = await createTestUser();
    for (const timezone of REFUSED_TIME_ZONES) {
      const refused = await call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone({ timezone }) } });
      const error = expectEnvelope(refused, 400, "VALIDATION_FAILED");
      expect(error.details, timezone).toEqual([expect.objectContaining({ field: "/device/timezone", code: "unknown_timezone" })]);
    }
    expect((await adminSql`select count(*)::int as n from app_private.devices where user_id = ${user.userId}`)[0].n).toBe(0);
    for (const timezone of ACCEPTED_TIME_ZONES) {
      const { body } = await startSession(user.token, phone({ timezone }));
      const [row] = await adminSql<{ timezone: string }[]>`select timezone from app_private.devices where id = ${body.device.id}`;
      expect(row.timezone, timezone).toBe(timezone);
    }
  });

  it("400 MALFORMED_JSON, 415 and 413 for bodies that are not a small JSON document", async () => {
    const user = await createTestUser();
    const headers = { "content-type": "application/json" };
    expectEnvelope(await call("/v1/auth/session", { method: "POST", token: user.token, rawBody: "{not json", headers }), 400, "MALFORMED_JSON");
    expectEnvelope(await call("/v1/auth/session", { method: "POST", token: user.token, rawBody: JSON.stringify({ device: phone() }), headers: { "content-type": "text/plain" } }), 415, "UNSUPPORTED_MEDIA_TYPE");
    const huge = JSON.stringify({ device: { ...phone(), model: "x".repeat(1024 * 1024 + 10) } });
    expectEnvelope(await call("/v1/auth/session", { method: "POST", token: user.token, rawBody: huge, headers }), 413, "PAYLOAD_TOO_LARGE");
  });

  it("401 without a token or with a revoked session, 403 for the anon role", async () => {
    expectEnvelope(await call("/v1/auth/session", { method: "POST", body: { device: phone() } }), 401, "UNAUTHENTICATED");
    const user = await createTestUser();
    await adminSql`delete from auth.sessions where id = ${user.sessionId}`;
    expectEnvelope(await call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone() } }), 401, "UNAUTHENTICATED");
    const now = Math.floor(Date.now() / 1000);
    const anon = await signEs256(stack.keys.privateJwk, { iss: "supabase", role: "anon", iat: now, exp: now + 3600 });
    expectEnvelope(await call("/v1/auth/session", { method: "POST", token: anon, body: { device: phone() } }), 403, "FORBIDDEN");
  });

  it("405 for another method, with Allow", async () => {
    const response = await call("/v1/auth/session", { method: "PUT", body: {} });
    expectEnvelope(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe("POST, DELETE");
  });
});

describe("DELETE /v1/auth/session", () => {
  it("204: deletes the Supabase session and its refresh tokens, clears the push token, and the token gets 401 next", async () => {
    const user = await createTestUser();
    const other = await user.newSession();
    await addRefreshToken(user.userId, user.sessionId);
    const { body } = await startSession(user.token, phone({ push_token: pushToken(), push_provider: "apns" }));
    expect(await sessionState(user.sessionId)).toEqual({ sessions: 1, refreshTokens: 1 });

    const response = await call("/v1/auth/session", { method: "DELETE", token: user.token });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");

    expect(await sessionState(user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    const device = await deviceRow(body.device.id);
    expect(device).toMatchObject({ push_token: null, push_provider: null, session_id: null });
    expect(device.revoked_at).not.toBeNull();
    expectEnvelope(await call("/v1/devices", { token: user.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/auth/session", { method: "DELETE", token: user.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone() } }), 401, "UNAUTHENTICATED");

    // The user's other session is untouched; it sees the device as signed out.
    const list = await call("/v1/devices", { token: other.token });
    expect(list.status).toBe(200);
    expect(list.body.devices).toEqual([expect.objectContaining({ id: body.device.id, current: false, has_push_token: false, revoked_at: expect.any(String) })]);
  });

  it("204 for a session that never registered a device", async () => {
    const user = await createTestUser();
    expect((await call("/v1/auth/session", { method: "DELETE", token: user.token })).status).toBe(204);
    expect(await sessionState(user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
  });

  it("401 without a token, 403 for the anon role", async () => {
    expectEnvelope(await call("/v1/auth/session", { method: "DELETE" }), 401, "UNAUTHENTICATED");
    const now = Math.floor(Date.now() / 1000);
    const anon = await signEs256(stack.keys.privateJwk, { iss: "supabase", role: "anon", iat: now, exp: now + 3600 });
    expectEnvelope(await call("/v1/auth/session", { method: "DELETE", token: anon }), 403, "FORBIDDEN");
  });
});

// 429 and 503 need servers with other settings; one of each serves every
// route of devices, sessions and notification preferences.
const ROUTES: { method: string; path: (deviceId: string) => string; body?: unknown; needsDevice?: boolean }[] = [
  { method: "POST", path: () => "/v1/auth/session", body: { device: phone() } },
  { method: "DELETE", path: () => "/v1/auth/session" },
  { method: "GET", path: () => "/v1/devices" },
  { method: "DELETE", path: (id) => `/v1/devices/${id}`, needsDevice: true },
  { method: "GET", path: () => "/v1/users/me/notifications" },
  {
    method: "PUT",
    path: () => "/v1/users/me/notifications",
    body: { categories: {}, quiet_hours: { enabled: false, start: "22:00", end: "07:00", timezone: "UTC" } },
  },
];

describe("429 RATE_LIMITED and 503 UNAVAILABLE", () => {
  let limited: FunctionsServer;
  let deadDb: FunctionsServer;
  beforeAll(async () => {
    // Per user, so that a second session of the user meets the budget the first spent (below).
    const one = { limit: 1, window_seconds: 3600, per: "user" };
    [limited, deadDb] = await Promise.all([
      startFunctionsServer({
        ...stack.functionsEnv,
        TIDESYNC_RATE_LIMITS: JSON.stringify({ "auth.session": one, "devices": one, "notifications": one, "sync.pull": one, "sync.batch": one }),
      }, { name: "issue4-rate-limited" }),
      freePort().then((port) =>
        startFunctionsServer({
          ...stack.functionsEnv,
          SUPABASE_DB_URL: `postgres://tidesync_owner@127.0.0.1:${port}/nowhere`,
          TIDESYNC_DB_CONNECT_TIMEOUT_S: "1",
        }, { name: "issue4-dead-db" })),
    ]);
  });
  afterAll(async () => {
    await Promise.all([limited?.stop(), deadDb?.stop()]);
  });

  it("each route answers 429 with Retry-After once the caller's budget for its operation is spent", async () => {
    for (const route of ROUTES) {
      // A fresh user per route: budgets are per user (as configured above) and
      // operation, counted in the shared database (so setting up a device spends auth.session).
      const user = await createTestUser();
      const deviceId = route.needsDevice ? (await startSession(user.token, phone())).body.device.id : "";
      const path = route.path(deviceId);
      const first = await call(path, { method: route.method, token: user.token, body: route.body, baseUrl: limited.apiUrl });
      expect(first.status, `${route.method} ${path}: ${first.text}`).toBeLessThan(400);
      // The second call comes from another live session of the same user (the
      // budget is per user): the first may have signed its own session out,
      // and a signed-out token gets 401 before any budget is looked at.
      const other = await user.newSession();
      const second = await call(path, { method: route.method, token: other.token, body: route.body, baseUrl: limited.apiUrl });
      expectEnvelope(second, 429, "RATE_LIMITED");
      expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });

  it("each route answers 503 with Retry-After when the database is unreachable", async () => {
    const user = await createTestUser();
    for (const route of ROUTES) {
      const response = await call(route.path("00000000-0000-4000-8000-000000000000"), { method: route.method, token: user.token, body: route.body, baseUrl: deadDb.apiUrl });
      const error = expectEnvelope(response, 503, "UNAVAILABLE");
      expect(error.retryable).toBe(true);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });
});
