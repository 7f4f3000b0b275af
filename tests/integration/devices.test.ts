// GET /v1/devices and DELETE /v1/devices/{id} through real Deno and Postgres,
// and the push-token rule: a token belongs to at most one active device, so
// registering it elsewhere (a shared phone) detaches it from the old device.
import { describe, expect, it } from "vitest";
import { deviceListSchema } from "../../functions/_shared/schemas/devices.ts";
import { applySeed } from "../../scripts/db/database.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { addRefreshToken, deviceRow, phone, pushToken, sessionState, startSession, withoutRequestId } from "../support/device-sessions.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { releaseWithFeedback } from "../support/releases.ts";
import { signEs256 } from "../support/tokens.ts";

async function listDevices(token: string) {
  const response = await call("/v1/devices", { token });
  expect(response.status, response.text).toBe(200);
  return deviceListSchema.parse(response.body).devices;
}

describe("GET /v1/devices", () => {
  it("lists the caller's devices only, current: true on the calling one, active before signed-out", async () => {
    const user = await createTestUser();
    const tablet = await user.newSession();
    const laptop = await user.newSession();
    const stranger = await createTestUser();
    const mine = await startSession(user.token, phone());
    const theirs = await startSession(tablet.token, phone({ platform: "android", model: "Pixel Tablet" }));
    const gone = await startSession(laptop.token, phone({ platform: "web" }));
    await startSession(stranger.token, phone());
    expect((await call(`/v1/devices/${gone.body.device.id}`, { method: "DELETE", token: user.token })).status).toBe(204);

    const devices = await listDevices(user.token);
    expect(devices.map((d) => d.id).sort()).toEqual([mine.body.device.id, theirs.body.device.id, gone.body.device.id].sort());
    expect(devices.find((d) => d.current)?.id).toBe(mine.body.device.id);
    expect(devices.filter((d) => d.current)).toHaveLength(1);
    expect(devices.at(-1)).toMatchObject({ id: gone.body.device.id, revoked_at: expect.any(String), current: false });
    expect(devices.slice(0, 2).every((d) => d.revoked_at === null)).toBe(true);

    // The same list, seen from the tablet: current moves with the caller.
    expect((await listDevices(tablet.token)).find((d) => d.current)?.id).toBe(theirs.body.device.id);
  });

  it("lists every signed-in device, however many: the calling one (current: true) and the oldest can be found and signed out", async () => {
    const user = await createTestUser();
    const mine = await startSession(user.token, phone());
    const oldest = await startSession((await user.newSession()).token, phone({ platform: "android" }));
    for (let i = 0; i < 101; i++) await startSession((await user.newSession()).token, phone({ platform: "web" }));

    const devices = await listDevices(user.token);
    expect(devices).toHaveLength(103);
    expect(devices.every((d) => d.active)).toBe(true);
    expect(devices.find((d) => d.current)?.id).toBe(mine.body.device.id);
    expect((await call(`/v1/devices/${oldest.body.device.id}`, { method: "DELETE", token: user.token })).status).toBe(204);
    expect((await listDevices(user.token)).at(-1)).toMatchObject({ id: oldest.body.device.id, active: false, revoked_at: expect.any(String) });
  });

  it("an empty list for a user without devices", async () => {
    const user = await createTestUser();
    expect(await listDevices(user.token)).toEqual([]);
  });

  it("401 without a token or with a revoked session, 403 for the anon role, 405 for another method", async () => {
    expectEnvelope(await call("/v1/devices"), 401, "UNAUTHENTICATED");
    const user = await createTestUser();
    await adminSql`delete from auth.sessions where id = ${user.sessionId}`;
    expectEnvelope(await call("/v1/devices", { token: user.token }), 401, "UNAUTHENTICATED");
    const now = Math.floor(Date.now() / 1000);
    const anon = await signEs256(stack.keys.privateJwk, { iss: "supabase", role: "anon", iat: now, exp: now + 3600 });
    expectEnvelope(await call("/v1/devices", { token: anon }), 403, "FORBIDDEN");
    const wrongMethod = await call("/v1/devices", { method: "POST", body: {} });
    expectEnvelope(wrongMethod, 405, "METHOD_NOT_ALLOWED");
    expect(wrongMethod.headers.get("allow")).toBe("GET");
  });
});

describe("DELETE /v1/devices/{id} (remote sign-out)", () => {
  it("204: the device's Supabase session and refresh tokens are gone, its token gets 401, its push token is cleared", async () => {
    const user = await createTestUser();
    const lost = await user.newSession();
    await addRefreshToken(user.userId, lost.sessionId);
    const here = await startSession(user.token, phone());
    const there = await startSession(lost.token, phone({ platform: "android", push_token: pushToken(), push_provider: "fcm" }));
    expect(await sessionState(lost.sessionId)).toEqual({ sessions: 1, refreshTokens: 1 });

    const response = await call(`/v1/devices/${there.body.device.id}`, { method: "DELETE", token: user.token });
    expect(response.status).toBe(204);
    expect(response.text).toBe("");

    expect(await sessionState(lost.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    expectEnvelope(await call("/v1/devices", { token: lost.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/users/me/notifications", { token: lost.token }), 401, "UNAUTHENTICATED");
    const row = await deviceRow(there.body.device.id);
    expect(row).toMatchObject({ push_token: null, push_provider: null, session_id: null });
    expect(row.revoked_at).not.toBeNull();

    // The caller's own session and device are untouched.
    expect(await sessionState(user.sessionId)).toMatchObject({ sessions: 1 });
    const devices = await listDevices(user.token);
    expect(devices.find((d) => d.id === here.body.device.id)).toMatchObject({ current: true, revoked_at: null });
    expect(devices.find((d) => d.id === there.body.device.id)).toMatchObject({ has_push_token: false, revoked_at: expect.any(String) });

    // Signing it out again is a no-op.
    expect((await call(`/v1/devices/${there.body.device.id}`, { method: "DELETE", token: user.token })).status).toBe(204);
  });

  it("signing out the calling device itself revokes the caller's own session", async () => {
    const user = await createTestUser();
    const here = await startSession(user.token, phone());
    expect((await call(`/v1/devices/${here.body.device.id}`, { method: "DELETE", token: user.token })).status).toBe(204);
    expect(await sessionState(user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    expectEnvelope(await call("/v1/devices", { token: user.token }), 401, "UNAUTHENTICATED");
  });

  it("another user's device id → 404 identical to an unknown id, and nothing happens to that device", async () => {
    const owner = await createTestUser();
    const intruder = await createTestUser();
    const victim = await startSession(owner.token, phone({ push_token: pushToken(), push_provider: "apns" }));

    const foreign = await call(`/v1/devices/${victim.body.device.id}`, { method: "DELETE", token: intruder.token });
    const unknown = await call("/v1/devices/7f1e9a52-3c1d-4b8e-9f00-0123456789ab", { method: "DELETE", token: intruder.token });
    const malformed = await call("/v1/devices/not-a-device", { method: "DELETE", token: intruder.token });
    expectEnvelope(foreign, 404, "NOT_FOUND");
    expectEnvelope(unknown, 404, "NOT_FOUND");
    expectEnvelope(malformed, 404, "NOT_FOUND");
    expect(withoutRequestId(foreign.body)).toEqual(withoutRequestId(unknown.body));
    expect(withoutRequestId(malformed.body)).toEqual(withoutRequestId(unknown.body));
    expect(foreign.headers.get("content-type")).toBe(unknown.headers.get("content-type"));

    expect(await sessionState(owner.sessionId)).toMatchObject({ sessions: 1 });
    expect(await deviceRow(victim.body.device.id)).toMatchObject({ session_id: owner.sessionId, push_token: expect.any(String), revoked_at: null });
    expect((await call("/v1/devices", { token: owner.token })).status).toBe(200);
  });

  it("401 without a token or with a revoked session, 403 for the anon role", async () => {
    const user = await createTestUser();
    const { body } = await startSession(user.token, phone());
    expectEnvelope(await call(`/v1/devices/${body.device.id}`, { method: "DELETE" }), 401, "UNAUTHENTICATED");
    const now = Math.floor(Date.now() / 1000);
    const anon = await signEs256(stack.keys.privateJwk, { iss: "supabase", role: "anon", iat: now, exp: now + 3600 });
    expectEnvelope(await call(`/v1/devices/${body.device.id}`, { method: "DELETE", token: anon }), 403, "FORBIDDEN");
    await adminSql`delete from auth.sessions where id = ${user.sessionId}`;
    expectEnvelope(await call(`/v1/devices/${body.device.id}`, { method: "DELETE", token: user.token }), 401, "UNAUTHENTICATED");
  });
});

/** The devices app_private.push_targets names for a user, read as push senders read it (service_role). */
async function pushTargets(userId: string): Promise<string[]> {
  return await adminSql.begin(async (tx) => {
    await tx`set local role service_role`;
    const rows = await tx<{ device_id: string }[]>`select device_id from app_private.push_targets where user_id = ${userId} order by device_id`;
    return rows.map((row) => row.device_id);
  });
}

describe("a device whose session no longer counts (expired, user banned)", () => {
  it("is listed not active, with no push token in use, and is no push target once its session passed not_after", async () => {
    const user = await createTestUser();
    const other = await user.newSession();
    const expiring = (await startSession(user.token, phone({ push_token: pushToken(), push_provider: "apns" }))).body.device;
    const mine = (await startSession(other.token, phone({ platform: "android", push_token: pushToken(), push_provider: "fcm" }))).body.device;
    expect(mine).toMatchObject({ active: true, has_push_token: true, current: true });
    expect(await pushTargets(user.userId)).toEqual([expiring.id, mine.id].sort());

    await adminSql`update auth.sessions set not_after = now() - interval '1 minute' where id = ${user.sessionId}`;
    expectEnvelope(await call("/v1/whoami", { token: user.token }), 401, "UNAUTHENTICATED");
    const devices = await listDevices(other.token);
    expect(devices.map((d) => d.id)).toEqual([mine.id, expiring.id]); // active first
    expect(devices[0]).toMatchObject({ active: true, has_push_token: true, push_provider: "fcm", current: true });
    expect(devices[1]).toMatchObject({ active: false, has_push_token: false, push_provider: null, current: false });
    expect(await pushTargets(user.userId)).toEqual([mine.id]);
  });

  it("a banned user's devices lose their push tokens at once; after the ban the app registers its token again", async () => {
    const user = await createTestUser();
    const installation = phone({ push_token: pushToken(), push_provider: "fcm" });
    const device = (await startSession(user.token, installation)).body.device;
    expect(await pushTargets(user.userId)).toEqual([device.id]);
    await adminSql`update auth.users set banned_until = now() + interval '100 years' where id = ${user.userId}`;
    expect(await deviceRow(device.id)).toMatchObject({ push_token: null, push_provider: null, session_id: user.sessionId });
    expectEnvelope(await call("/v1/devices", { token: user.token }), 401, "UNAUTHENTICATED");
    expect(await pushTargets(user.userId)).toEqual([]);
    await adminSql`update auth.users set banned_until = now() - interval '1 second' where id = ${user.userId}`;
    expect((await listDevices(user.token)).map((d) => [d.active, d.has_push_token])).toEqual([[true, false]]);
    expect((await startSession(user.token, installation)).body.device).toMatchObject({ id: device.id, has_push_token: true });
    expect(await pushTargets(user.userId)).toEqual([device.id]);
  });

  it("a ban while feedback from the device is being sent still deletes its push token: no push target after the ban ends", async () => {
    const releaseId = await releaseWithFeedback("works for me");
    const user = await createTestUser();
    const token = pushToken();
    const device = (await startSession(user.token, phone({ push_token: token, push_provider: "apns" }))).body.device;
    // The feedback insert's foreign key holds the device row FOR KEY SHARE until it commits.
    const feedback = holdTransaction((tx) => tx`
      insert into app_private.release_feedback (release_id, user_id, device_id, platform, build_number, body)
      values (${releaseId}, ${user.userId}, ${device.id}, 'ios', 200, 'sent at the moment of the ban')`);
    await feedback.ran;
    await adminSql`update auth.users set banned_until = now() + interval '1 hour' where id = ${user.userId}`;
    feedback.commit();
    await feedback.done;
    expect(await deviceRow(device.id)).toMatchObject({ push_token: null, push_provider: null });
    await adminSql`update auth.users set banned_until = null where id = ${user.userId}`;
    expect(await pushTargets(user.userId)).toEqual([]);
  });

  it("a ban waits for a transaction holding the device row and then deletes the token it left", async () => {
    const user = await createTestUser();
    const device = (await startSession(user.token, phone({ push_token: pushToken(), push_provider: "fcm", platform: "android" }))).body.device;
    // A writer that locked the row and will leave the token as it is (e.g. it rolls back).
    const holder = holdTransaction((tx) => tx`select id from app_private.devices where id = ${device.id} for update`);
    await holder.ran;
    const ban = adminSql`update auth.users set banned_until = now() + interval '1 hour' where id = ${user.userId}`.then(() => {});
    await waitersOf(await holder.pid);
    holder.commit();
    await Promise.all([holder.done, ban]);
    expect(await deviceRow(device.id)).toMatchObject({ push_token: null, push_provider: null });
  });

  it("an expired session's push token is kept by no one: the export says what is stored, before and after the sweep", async () => {
    const user = await createTestUser();
    const other = await user.newSession();
    const expiring = (await startSession(user.token, phone({ push_token: pushToken(), push_provider: "apns" }))).body.device;
    await startSession(other.token, phone({ platform: "android", push_token: pushToken(), push_provider: "fcm" }));
    await adminSql`update auth.sessions set not_after = now() - interval '1 minute' where id = ${user.sessionId}`;
    const exported = async () => {
      const response = await call("/v1/users/me/export", { token: other.token });
      expect(response.status).toBe(200);
      return (response.body.devices as { id: string; has_push_token: boolean; active: boolean }[]).find((d) => d.id === expiring.id)!;
    };
    // Until the sweep has run (pg_cron, every 5 minutes) the token is stored, and the export says so.
    expect((await deviceRow(expiring.id)).push_token).not.toBeNull();
    expect(await exported()).toMatchObject({ active: false, has_push_token: true });
    const [{ released }] = await adminSql.begin(async (tx) => {
      await tx`set local role service_role`;
      return await tx<{ released: number }[]>`select app_private.release_expired_push_tokens() as released`;
    });
    expect(released).toBeGreaterThanOrEqual(1);
    expect(await deviceRow(expiring.id)).toMatchObject({ push_token: null, push_provider: null });
    expect(await exported()).toMatchObject({ active: false, has_push_token: false });
  });
});

describe("push tokens: at most one active device each", () => {
  it("re-registered by a second user on the same installation (shared phone), the token is gone from the first user's device", async () => {
    const first = await createTestUser();
    const second = await createTestUser();
    const token = pushToken();
    const installation = phone({ push_token: token, push_provider: "apns" });
    const a = await startSession(first.token, installation);
    const b = await startSession(second.token, installation);
    expect(b.status).toBe(201);
    expect(b.body.device.id).not.toBe(a.body.device.id);
    expect(b.body.device.has_push_token).toBe(true);

    const firstDevices = await listDevices(first.token);
    expect(firstDevices).toEqual([expect.objectContaining({ id: a.body.device.id, has_push_token: false, push_provider: null, revoked_at: null })]);
    expect(await deviceRow(a.body.device.id)).toMatchObject({ push_token: null, session_id: first.sessionId });
    const holders = await adminSql`select user_id from app_private.devices where push_token = ${token}`;
    expect(holders.map((h) => h.user_id)).toEqual([second.userId]);
  });

  it("sent by a second user with a pending account deletion, the token is withheld from them and still gone from the first user's device", async () => {
    const first = await createTestUser();
    const second = await createTestUser();
    const token = pushToken();
    const installation = phone({ push_token: token, push_provider: "apns" });
    const a = await startSession(first.token, installation);
    expect((await call("/v1/users/me/deletion", { method: "POST", token: second.token })).status).toBe(202);
    const b = await startSession(second.token, installation);
    expect(b.body.device.has_push_token).toBe(false); // withheld while the deletion is pending
    // The phone runs the second user's session now: the first user's pushes must not reach it.
    expect(await deviceRow(a.body.device.id)).toMatchObject({ push_token: null, session_id: first.sessionId });
    expect(await pushTargets(first.userId)).toEqual([]);
    expect(await adminSql`select id from app_private.devices where push_token = ${token}`).toEqual([]);
  });

  // A shared phone runs one user's session at a time: whoever starts one there
  // takes every other user's push token off that installation, also when the
  // start sends no token (notifications off: null; not known yet: left out).
  for (const [variant, withoutToken] of [
    ["null (notifications off)", { push_token: null, push_provider: null }],
    ["left out (no token yet at launch)", {}],
  ] as const) {
    it(`a second user signing in on the installation with push_token ${variant}: the first user's pushes no longer reach it`, async () => {
      const first = await createTestUser();
      const second = await createTestUser();
      const firstsOtherPhone = await first.newSession();
      const installation = phone(); // no push_token key of its own
      const a = (await startSession(first.token, { ...installation, push_token: pushToken(), push_provider: "apns" })).body.device;
      await startSession(firstsOtherPhone.token, phone());
      expect(await pushTargets(first.userId)).toEqual([a.id]);

      const b = await startSession(second.token, { ...installation, ...withoutToken });
      expect(b.body.device).toMatchObject({ has_push_token: false, active: true });
      expect(await pushTargets(first.userId)).toEqual([]);
      expect(await deviceRow(a.id)).toMatchObject({ push_token: null, push_provider: null, session_id: first.sessionId });
      // The first user's session there is still theirs to end: listed active, without a token.
      expect((await listDevices(firstsOtherPhone.token)).find((d) => d.id === a.id)).toMatchObject({ active: true, has_push_token: false });
    });
  }

  it("the first user signing in again before her app has the token: the second user's pushes no longer reach the phone", async () => {
    const first = await createTestUser();
    const second = await createTestUser();
    const token = pushToken();
    const installation = phone({ push_token: token, push_provider: "apns" });
    await startSession(first.token, installation);
    const b = (await startSession(second.token, installation)).body.device;
    expect(await pushTargets(second.userId)).toEqual([b.id]);

    const { push_token: _t, push_provider: _p, ...withoutToken } = installation;
    const again = await first.newSession();
    const a = (await startSession(again.token, withoutToken)).body.device;
    expect(a.has_push_token).toBe(false); // the token went to the second user's device, and she sent none
    expect(await pushTargets(second.userId)).toEqual([]);
    expect(await deviceRow(b.id)).toMatchObject({ push_token: null, session_id: second.sessionId });
    // Her app sends the token once it has it: the phone is hers again for pushes.
    expect((await startSession(again.token, installation)).body.device.has_push_token).toBe(true);
    expect(await pushTargets(first.userId)).toEqual([a.id]);
  });

  it("a user's other installations keep their tokens when another user signs in on one of them", async () => {
    const first = await createTestUser();
    const second = await createTestUser();
    const elsewhere = await first.newSession();
    const shared = phone({ push_token: pushToken(), push_provider: "apns" });
    const tablet = (await startSession(first.token, shared)).body.device;
    const own = (await startSession(elsewhere.token, phone({ push_token: pushToken(), push_provider: "fcm", platform: "android" }))).body.device;
    await startSession(second.token, { ...shared, push_token: null, push_provider: null });
    expect(await pushTargets(first.userId)).toEqual([own.id]);
    expect((await deviceRow(tablet.id)).push_token).toBeNull();
  });

  it("concurrent registrations of one token leave exactly one holder", async () => {
    const users = await Promise.all([createTestUser(), createTestUser(), createTestUser(), createTestUser()]);
    const token = pushToken();
    const results = await Promise.all(users.map((u) => startSession(u.token, phone({ push_token: token, push_provider: "fcm", platform: "android" }))));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    const holders = await adminSql`select user_id from app_private.devices where push_token = ${token}`;
    expect(holders).toHaveLength(1);
    expect(users.map((u) => u.userId)).toContain(holders[0].user_id);
  });

  it("a revoked device never keeps a token that another device can then take", async () => {
    const user = await createTestUser();
    const token = pushToken();
    await startSession(user.token, phone({ push_token: token, push_provider: "apns" }));
    expect((await call("/v1/auth/session", { method: "DELETE", token: user.token })).status).toBe(204);
    const again = await user.newSession();
    const fresh = await startSession(again.token, phone({ push_token: token, push_provider: "apns" }));
    expect(fresh.body.device.has_push_token).toBe(true);
    const holders = await adminSql`select id from app_private.devices where push_token = ${token}`;
    expect(holders.map((h) => h.id)).toEqual([fresh.body.device.id]);
  });
});

describe("sample data (fixtures → supabase/seed.sql)", () => {
  const ALICE = "00000000-0000-4000-8000-00000000a11c";
  const BOB = "00000000-0000-4000-8000-000000000b0b";

  async function sampleState() {
    const [row] = await adminSql`
      select
        (select json_agg(json_build_object('id', d.id, 'active', d.revoked_at is null, 'push', d.push_token is not null) order by d.id)
           from app_private.devices d where d.user_id in (${ALICE}, ${BOB})) as devices,
        (select json_agg(json_build_object('user', p.id, 'name', p.display_name) order by p.id)
           from public.profiles p where p.id in (${ALICE}, ${BOB})) as profiles,
        (select json_agg(json_build_object('user', n.user_id, 'version', n.version)) from app_private.notification_preferences n where n.user_id in (${ALICE}, ${BOB})) as preferences,
        (select count(*)::int from app_private.notification_preference_audit a where a.user_id in (${ALICE}, ${BOB})) as audit_rows`;
    return row;
  }

  it("has sample users Supabase Auth can sign in: no token column NULL (Auth reads them as strings; a NULL fails the sign-in, supabase/auth#1940)", async () => {
    const rows = await adminSql`
      select email, confirmation_token, recovery_token, email_change_token_new, email_change
        from auth.users where id in (${ALICE}, ${BOB}) order by email`;
    expect(rows.map((r) => ({ ...r }))).toEqual(["alice@sample.tidesync.dev", "bob@sample.tidesync.dev"].map((email) => ({
      email, confirmation_token: "", recovery_token: "", email_change_token_new: "", email_change: "",
    })));
  });

  it("has the sample devices and preferences, and applying the seed again changes nothing", async () => {
    const before = await sampleState();
    expect(before.devices).toEqual([
      { id: "00000000-0000-4000-8000-0000000de501", active: true, push: true },
      { id: "00000000-0000-4000-8000-0000000de502", active: false, push: false },
      { id: "00000000-0000-4000-8000-0000000de503", active: true, push: true },
    ]);
    expect(before.profiles).toEqual([
      { user: BOB, name: "Bob (sample)" },
      { user: ALICE, name: "Alice (sample)" },
    ]);
    expect(before.preferences).toEqual([{ user: ALICE, version: 1 }]);
    expect(before.audit_rows).toBe(1);

    await applySeed(stack.ownerDbUrl);
    expect(await sampleState()).toEqual(before);
  });
});
