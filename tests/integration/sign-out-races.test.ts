// A sign-out racing what else touches the same session or device: a new
// sign-in on the installation that ran the session (the start signs the old
// session out itself), the same session moving to another installation, a
// push of the session, an account deletion request, another sign-out of the
// same session. Each race is forced into the interleaving that matters (one
// side's transaction held open, tests/support/held-transactions.ts), then run
// as a burst of attempts at once. Every one must end as one after the other
// would: no 503 (Postgres breaking a deadlock, 40P01), no 500, and no device
// left active on a session that is gone or holding a push token once revoked.
// docs/devices-and-sessions.md, "Lock order".
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { adminSql, type ApiResponse, call, createTestUser, expectEnvelope, type TestUser } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { addRefreshToken, deviceRow, phone, pushToken, sessionState, startSession } from "../support/device-sessions.ts";
import { upsert } from "../support/shared-lists.ts";
import type { DeviceRegistration } from "../../functions/_shared/schemas/devices.ts";

const CONFIRM = { confirm: "delete my account" };
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Phone {
  user: TestUser;
  device: DeviceRegistration;
  deviceId: string;
}

/** A user signed in on a phone (their first session) that registered a push token; the session has a refresh token. */
async function signedInPhone(): Promise<Phone> {
  const user = await createTestUser();
  await addRefreshToken(user.userId, user.sessionId);
  const device = phone({ push_token: pushToken(), push_provider: "apns" });
  const started = await startSession(user.token, device);
  return { user, device, deviceId: started.body.device.id };
}

/** A session of `user` signed out by the transaction `revoke_session` runs in, held open as that session. */
function heldSignOut(user: TestUser, sessionId: string) {
  return holdTransaction((tx) => tx`select app_private.revoke_session(${sessionId}::uuid)`, { as: { userId: user.userId, sessionId } });
}

/**
 * What the database must never hold for `userId`, whatever ran at once: a device bound to a
 * session that is gone, a device active without a session (or revoked with one), a push token
 * on a revoked device, a refresh token of a session that is gone.
 */
async function expectConsistent(userId: string): Promise<void> {
  const [row] = await adminSql<{ bound_to_missing: number; state_mismatch: number; token_on_revoked: number; orphan_refresh: number }[]>`
    select
      (select count(*)::int from app_private.devices d
        where d.user_id = ${userId} and d.session_id is not null
          and not exists (select 1 from auth.sessions s where s.id = d.session_id)) as bound_to_missing,
      (select count(*)::int from app_private.devices d
        where d.user_id = ${userId} and (d.revoked_at is null) <> (d.session_id is not null)) as state_mismatch,
      (select count(*)::int from app_private.devices d
        where d.user_id = ${userId} and d.revoked_at is not null and d.push_token is not null) as token_on_revoked,
      (select count(*)::int from auth.refresh_tokens r
        where r.user_id = ${userId}::text and r.session_id is not null
          and not exists (select 1 from auth.sessions s where s.id = r.session_id)) as orphan_refresh`;
  expect(row).toEqual({ bound_to_missing: 0, state_mismatch: 0, token_on_revoked: 0, orphan_refresh: 0 });
}

/** The ways a session is signed out while something else runs: ours, and Supabase Auth's own. */
const SIGN_OUTS = {
  "DELETE /v1/auth/session (the session signs itself out)": (p: Phone, _by: { token: string }) =>
    call("/v1/auth/session", { method: "DELETE", token: p.user.token }),
  "DELETE /v1/devices/{id} (a remote sign-out from another device)": (p: Phone, by: { token: string }) =>
    call(`/v1/devices/${p.deviceId}`, { method: "DELETE", token: by.token }),
  "supabase.auth.signOut() (Supabase Auth deletes the session row)": async (p: Phone, _by: { token: string }) => {
    await adminSql`delete from auth.sessions where id = ${p.user.sessionId}`;
    return { status: 204, text: "deleted by Supabase Auth" } as ApiResponse;
  },
} as const;

describe("a new sign-in on an installation racing a sign-out of the session it ran before", () => {
  // The start of the new session signs the old one out itself (an install
  // runs one session), so both delete the old session's row; the sign-out's
  // delete then revokes the device (the foreign key's on delete set null).
  // Before migration 20261126002600 the start locked the device row first and
  // the old session's row last, the sign-out the other way round: a deadlock.

  it.each(Object.keys(SIGN_OUTS))("the start holding the device: both answered, the device runs the new session (%s)", async (way) => {
    const old = await signedInPhone();
    const next = await old.user.newSession();
    const remote = await old.user.newSession();
    // Holds the start at the lock it takes on its own session's row (binding
    // the device to it takes FOR KEY SHARE): before the fix that came after
    // the start had locked the device row; now it comes before any row lock.
    const hold = holdTransaction((tx) => tx`select 1 from auth.sessions where id = ${next.sessionId} for update`);
    await hold.ran;
    const start = call("/v1/auth/session", { method: "POST", token: next.token, body: { device: { ...old.device, push_token: undefined, push_provider: undefined } } });
    let signOut: Promise<ApiResponse> | undefined;
    try {
      await waitersOf(await hold.pid);
      signOut = SIGN_OUTS[way as keyof typeof SIGN_OUTS](old, remote);
      // The sign-out either waits for the start (which waits for the hold) or is done.
      await Promise.race([waitersOf(await hold.pid, 2), signOut]);
    } finally {
      hold.commit();
    }
    await hold.done;
    const [started, signedOut] = await Promise.all([start, signOut!]);
    expect([started.status, signedOut.status], `${started.text}\n${signedOut.text}`).toEqual([200, 204]);
    expect(started.body.device.id).toBe(old.deviceId);
    // As one after the other: the sign-out revoked the device and cleared its
    // token, then the start bound the new session (the token left out: none).
    expect(await deviceRow(old.deviceId)).toMatchObject({ session_id: next.sessionId, revoked_at: null, push_token: null });
    expect(started.body.device.has_push_token).toBe(false);
    expect(await sessionState(old.user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    await expectConsistent(old.user.userId);
  });

  it("the sign-out first: the start waits for it, then binds the new session", async () => {
    const old = await signedInPhone();
    const next = await old.user.newSession();
    const signOut = heldSignOut(old.user, old.user.sessionId);
    await signOut.ran;
    const start = call("/v1/auth/session", { method: "POST", token: next.token, body: { device: old.device } });
    try {
      await Promise.race([waitersOf(await signOut.pid), start]);
    } finally {
      signOut.commit();
    }
    await signOut.done;
    const started = await start;
    expect(started.status, started.text).toBe(200);
    expect(started.body.device).toMatchObject({ id: old.deviceId, has_push_token: true, revoked_at: null });
    expect(await deviceRow(old.deviceId)).toMatchObject({ session_id: next.sessionId, revoked_at: null, push_token: old.device.push_token });
    expect(await sessionState(old.user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    await expectConsistent(old.user.userId);
  });

  it("many at once, either sign-out: never a 503 or 500, each ends as one after the other would", async () => {
    for (let round = 0; round < 8; round++) {
      await Promise.all([0, 1, 2, 3].map(async (i) => {
        const old = await signedInPhone();
        const next = await old.user.newSession();
        const remote = await old.user.newSession();
        const start = call("/v1/auth/session", { method: "POST", token: next.token, body: { device: { ...old.device, push_token: undefined, push_provider: undefined } } });
        // Spread over the start's transaction: the sign-out lands before, inside or after it.
        await delay((round * 4 + i) % 12);
        const signOut = i % 2 === 0
          ? call("/v1/auth/session", { method: "DELETE", token: old.user.token })
          : call(`/v1/devices/${old.deviceId}`, { method: "DELETE", token: remote.token });
        const [started, signedOut] = await Promise.all([start, signOut]);
        expect(started.status, started.text).toBe(200);
        // The old session's own sign-out after the start signed it out: 401.
        expect(i % 2 === 0 ? [204, 401] : [204], signedOut.text).toContain(signedOut.status);
        const row = await deviceRow(old.deviceId);
        if (i % 2 === 1 && row.session_id === null) {
          // The start first, then the remote sign-out of the device: it signed out the session the device ran then.
          expect(row).toMatchObject({ revoked_at: expect.any(Date), push_token: null });
          expect(await sessionState(next.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
        } else {
          expect(row).toMatchObject({ session_id: next.sessionId, revoked_at: null });
          // The token survives only when the start came first (it moved the device to the new session).
          expect(started.body.device.has_push_token).toBe(row.push_token !== null);
        }
        expect(await sessionState(old.user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
        await expectConsistent(old.user.userId);
      }));
    }
  });
});

describe("the same session on another installation racing a sign-out of that session", () => {
  // A reinstall on iOS keeps the session: the start unbinds it from the old
  // installation's device (locking that row) and binds it to the new one (the
  // foreign key locks the session row). A sign-out of the session at that
  // moment holds the session's row and waits for the old device's row.

  it("the start holding the old installation's device: the sign-out and the start both answered", async () => {
    const old = await signedInPhone();
    // Holds the start at the lock on its user's row (binding a new device
    // takes FOR KEY SHARE of it): before the fix, after the start had locked
    // the old installation's device; now before any row lock. The rate-limit
    // counter of both requests is there already (the sign-in), so their
    // admission writes no row that would wait for it too.
    const hold = holdTransaction((tx) => tx`select 1 from auth.users where id = ${old.user.userId} for update`);
    await hold.ran;
    const reinstalled = phone();
    const start = call("/v1/auth/session", { method: "POST", token: old.user.token, body: { device: reinstalled } });
    let signOut: Promise<ApiResponse> | undefined;
    try {
      await waitersOf(await hold.pid);
      signOut = call("/v1/auth/session", { method: "DELETE", token: old.user.token });
      await Promise.race([waitersOf(await hold.pid, 2), signOut]);
    } finally {
      hold.commit();
    }
    await hold.done;
    const [started, signedOut] = await Promise.all([start, signOut!]);
    expect(signedOut.status, signedOut.text).toBe(204);
    // One after the other, in either order (a new rate-limit window at that
    // very moment lets the two run in their own order): the sign-out first,
    // then the start is 401 and registers nothing; or the start first, then
    // the sign-out revokes the new installation's device.
    const [newDevice] = await adminSql<{ session_id: string | null; revoked_at: Date | null }[]>`
      select session_id, revoked_at from app_private.devices where user_id = ${old.user.userId} and installation_id = ${reinstalled.installation_id}`;
    if (started.status === 401) {
      expectEnvelope(started, 401, "UNAUTHENTICATED");
      expect(newDevice).toBeUndefined();
    } else {
      expect(started.status, started.text).toBe(201);
      expect(newDevice).toMatchObject({ session_id: null, revoked_at: expect.any(Date) });
    }
    expect(await deviceRow(old.deviceId)).toMatchObject({ session_id: null, revoked_at: expect.any(Date), push_token: null });
    expect(await sessionState(old.user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    await expectConsistent(old.user.userId);
  });

  it("many at once: never a 503 or 500", async () => {
    for (let round = 0; round < 6; round++) {
      await Promise.all([0, 1, 2, 3].map(async (i) => {
        const old = await signedInPhone();
        const start = call("/v1/auth/session", { method: "POST", token: old.user.token, body: { device: phone() } });
        await delay((round * 4 + i) % 12);
        const signOut = call("/v1/auth/session", { method: "DELETE", token: old.user.token });
        const [started, signedOut] = await Promise.all([start, signOut]);
        expect(signedOut.status, signedOut.text).toBe(204);
        expect([201, 401], started.text).toContain(started.status);
        expect(await sessionState(old.user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
        const [{ active }] = await adminSql<{ active: number }[]>`
          select count(*)::int as active from app_private.devices where user_id = ${old.user.userId} and revoked_at is null`;
        expect(active).toBe(0);
        await expectConsistent(old.user.userId);
      }));
    }
  });
});

describe("a sign-out racing a push of its session", () => {
  // A push writes rows that reference the user, not the session, and locks
  // no session or device row: it never waits for a sign-out nor a sign-out
  // for it. A push whose session check passed finishes as if it came just
  // before the sign-out.
  const listPush = () => ({ ops: [upsert("lists", randomUUID(), { title: "in flight" })] });

  it("the sign-out in, not committed: the push does not wait for it and is applied", async () => {
    const p = await signedInPhone();
    const signOut = heldSignOut(p.user, p.user.sessionId);
    await signOut.ran;
    let pushed: ApiResponse;
    try {
      pushed = await call("/v1/sync/batch", { method: "POST", token: p.user.token, body: { device_id: p.device.installation_id, ...listPush() } });
    } finally {
      signOut.commit();
    }
    await signOut.done;
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.body.results[0].status).toBe("applied");
    expect(await deviceRow(p.deviceId)).toMatchObject({ session_id: null, revoked_at: expect.any(Date), push_token: null });
    expectEnvelope(await call("/v1/sync/batch", { method: "POST", token: p.user.token, body: listPush() }), 401, "UNAUTHENTICATED");
    await expectConsistent(p.user.userId);
  });

  it("the push past its session check: the sign-out does not wait for it; the push ends applied, before it", async () => {
    const p = await signedInPhone();
    // The push's first statement takes the user's push lock: holding it keeps
    // the push's transaction open right after its session check.
    const hold = holdTransaction((tx) => tx`select pg_advisory_xact_lock(hashtextextended(${`tidesync.push ${p.user.userId}`}, 0))`);
    await hold.ran;
    const pushing = call("/v1/sync/batch", { method: "POST", token: p.user.token, body: listPush() });
    let signedOut: ApiResponse;
    try {
      await waitersOf(await hold.pid);
      signedOut = await call("/v1/auth/session", { method: "DELETE", token: p.user.token });
    } finally {
      hold.commit();
    }
    await hold.done;
    expect(signedOut.status, signedOut.text).toBe(204);
    const pushed = await pushing;
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.body.results[0].status).toBe("applied");
    expect(await deviceRow(p.deviceId)).toMatchObject({ session_id: null, revoked_at: expect.any(Date), push_token: null });
    await expectConsistent(p.user.userId);
  });

  it("many at once: the push is applied or refused 401, the sign-out always 204, never a 503 or 500", async () => {
    for (let round = 0; round < 6; round++) {
      await Promise.all([0, 1, 2, 3].map(async (i) => {
        const p = await signedInPhone();
        const pushing = call("/v1/sync/batch", { method: "POST", token: p.user.token, body: { device_id: p.device.installation_id, ...listPush() } });
        await delay((round * 4 + i) % 12);
        const [pushed, signedOut] = await Promise.all([pushing, call("/v1/auth/session", { method: "DELETE", token: p.user.token })]);
        expect(signedOut.status, signedOut.text).toBe(204);
        expect([200, 401], pushed.text).toContain(pushed.status);
        expect(await deviceRow(p.deviceId)).toMatchObject({ session_id: null, push_token: null });
        await expectConsistent(p.user.userId);
      }));
    }
  });
});

describe("an account deletion request racing a sign-out", () => {
  // The request signs every other session out (their rows, then their
  // devices) and clears the caller's tokens (the caller's device rows); a
  // sign-out locks its session's row, then its device's.

  /** A user on two phones: the request comes from `asking`, `other` is signed out. */
  async function twoPhones() {
    const asking = await signedInPhone();
    const second = await asking.user.newSession();
    const otherDevice = phone({ push_token: pushToken(), push_provider: "apns" });
    const registered = await startSession(second.token, otherDevice);
    await addRefreshToken(asking.user.userId, second.sessionId);
    return { asking, other: { ...second, deviceId: registered.body.device.id } };
  }

  async function requests(userId: string): Promise<number> {
    const [{ n }] = await adminSql<{ n: number }[]>`select count(*)::int as n from app_private.account_deletion_requests where user_id = ${userId}`;
    return n;
  }

  it("the request first: the sign-out of the other session waits for it, then finds it gone (204)", async () => {
    const { asking, other } = await twoPhones();
    const request = holdTransaction((tx) => tx`select from app_private.request_account_deletion(7)`, { as: asking.user });
    await request.ran;
    const signOut = call("/v1/auth/session", { method: "DELETE", token: other.token });
    try {
      await Promise.race([waitersOf(await request.pid), signOut]);
    } finally {
      request.commit();
    }
    await request.done;
    const signedOut = await signOut;
    expect(signedOut.status, signedOut.text).toBe(204);
    expect(await requests(asking.user.userId)).toBe(1);
    expect(await deviceRow(other.deviceId)).toMatchObject({ session_id: null, revoked_at: expect.any(Date), push_token: null });
    expect(await sessionState(other.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    await expectConsistent(asking.user.userId);
  });

  it("the sign-out first: the request waits for it, then is scheduled (202)", async () => {
    const { asking, other } = await twoPhones();
    const signOut = heldSignOut(asking.user, other.sessionId);
    await signOut.ran;
    const request = call("/v1/users/me/deletion", { method: "POST", token: asking.user.token, body: CONFIRM });
    try {
      await Promise.race([waitersOf(await signOut.pid), request]);
    } finally {
      signOut.commit();
    }
    await signOut.done;
    const requested = await request;
    expect(requested.status, requested.text).toBe(202);
    expect(await requests(asking.user.userId)).toBe(1);
    expect(await deviceRow(other.deviceId)).toMatchObject({ session_id: null, revoked_at: expect.any(Date), push_token: null });
    expect(await deviceRow(asking.deviceId)).toMatchObject({ session_id: asking.user.sessionId, push_token: null });
    await expectConsistent(asking.user.userId);
  });

  it("the requesting session signed out meanwhile: the request waits for its device, then is scheduled", async () => {
    const { asking, other } = await twoPhones();
    const signOut = heldSignOut(asking.user, asking.user.sessionId);
    await signOut.ran;
    const request = call("/v1/users/me/deletion", { method: "POST", token: asking.user.token, body: CONFIRM });
    try {
      await Promise.race([waitersOf(await signOut.pid), request]);
    } finally {
      signOut.commit();
    }
    await signOut.done;
    const requested = await request;
    expect(requested.status, requested.text).toBe(202);
    expect(await requests(asking.user.userId)).toBe(1);
    for (const id of [asking.deviceId, other.deviceId]) {
      expect(await deviceRow(id)).toMatchObject({ session_id: null, revoked_at: expect.any(Date), push_token: null });
    }
    await expectConsistent(asking.user.userId);
  });

  it("many at once (the request, a sign-out of each session): never a 503 or 500", async () => {
    for (let round = 0; round < 6; round++) {
      await Promise.all([0, 1, 2].map(async (i) => {
        const { asking, other } = await twoPhones();
        const calls = [
          call("/v1/users/me/deletion", { method: "POST", token: asking.user.token, body: CONFIRM }),
          delay((round + i) % 6).then(() => call("/v1/auth/session", { method: "DELETE", token: other.token })),
          delay((round * 3 + i) % 8).then(() => call("/v1/auth/session", { method: "DELETE", token: asking.user.token })),
        ];
        const [requested, otherOut, askingOut] = await Promise.all(calls);
        // The request is refused 401 only when its own session was signed out before its check.
        expect([202, 401], requested.text).toContain(requested.status);
        // The other session's sign-out is 401 when the request signed it out before its check.
        expect([204, 401], otherOut.text).toContain(otherOut.status);
        expect(askingOut.status, askingOut.text).toBe(204);
        for (const id of [asking.deviceId, other.deviceId]) {
          expect(await deviceRow(id)).toMatchObject({ session_id: null, push_token: null });
        }
        await expectConsistent(asking.user.userId);
      }));
    }
  });
});

describe("two sign-outs of one session at once", () => {
  it("the second waits for the first, then finds the session gone: both 204", async () => {
    const p = await signedInPhone();
    const remote = await p.user.newSession();
    const first = heldSignOut(p.user, p.user.sessionId);
    await first.ran;
    const own = call("/v1/auth/session", { method: "DELETE", token: p.user.token });
    const fromElsewhere = call(`/v1/devices/${p.deviceId}`, { method: "DELETE", token: remote.token });
    try {
      await Promise.race([waitersOf(await first.pid, 2), Promise.all([own, fromElsewhere])]);
    } finally {
      first.commit();
    }
    await first.done;
    const answers = await Promise.all([own, fromElsewhere]);
    expect(answers.map((a) => a.status), answers.map((a) => a.text).join("\n")).toEqual([204, 204]);
    expect(await deviceRow(p.deviceId)).toMatchObject({ session_id: null, revoked_at: expect.any(Date), push_token: null });
    expect(await sessionState(p.user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    await expectConsistent(p.user.userId);
  });

  it("many at once, from the session itself and from another device: all 204 (or 401 once it is gone), never a 503 or 500", async () => {
    for (let round = 0; round < 6; round++) {
      await Promise.all([0, 1, 2, 3].map(async () => {
        const p = await signedInPhone();
        const remote = await p.user.newSession();
        const answers = await Promise.all([
          call("/v1/auth/session", { method: "DELETE", token: p.user.token }),
          call("/v1/auth/session", { method: "DELETE", token: p.user.token }),
          call(`/v1/devices/${p.deviceId}`, { method: "DELETE", token: remote.token }),
          call(`/v1/devices/${p.deviceId}`, { method: "DELETE", token: remote.token }),
        ]);
        // The session's own sign-out checks the session first: after another one committed, 401.
        for (const a of answers.slice(0, 2)) expect([204, 401], a.text).toContain(a.status);
        for (const a of answers.slice(2)) expect(a.status, a.text).toBe(204);
        expect(await deviceRow(p.deviceId)).toMatchObject({ session_id: null, revoked_at: expect.any(Date), push_token: null });
        expect(await sessionState(p.user.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
        await expectConsistent(p.user.userId);
      }));
    }
  });
});
