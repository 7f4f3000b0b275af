// Session start (POST /v1/auth/session) racing what changes the same user's
// devices: a sign-out of its session, other starts with the same session, an
// account deletion request; and another user's start with the same push
// token. One side's transaction is held open while the other runs
// (tests/support/held-transactions.ts), so each interleaving happens every
// time rather than now and then.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { adminSql, type ApiResponse, call, createTestUser, expectEnvelope, type TestUser } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { deviceRow, phone, pushToken } from "../support/device-sessions.ts";

const CONFIRM = { confirm: "delete my account" };

/** The request POST /v1/users/me/deletion makes, in a transaction held open as `user`. */
const deletionRequest = (tx: postgres.TransactionSql) => tx`select from app_private.request_account_deletion(7)`;

async function storedPushTokens(user: TestUser): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`select count(*)::int as n from app_private.devices where user_id = ${user.userId} and push_token is not null`;
  return row.n;
}

describe("a session start racing a sign-out of its session", () => {
  it("answers 401 UNAUTHENTICATED, not 500, when the sign-out commits while the start waits for it", async () => {
    const user = await createTestUser();
    // The sign-out is in, not committed: the session check still passes.
    const signOut = holdTransaction((tx) => tx`delete from auth.sessions where id = ${user.sessionId}`);
    await signOut.ran;
    const start = call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone() } });
    // Binding the device to the session waits for the deleted session row.
    await waitersOf(await signOut.pid);
    signOut.commit();
    await signOut.done;
    const error = expectEnvelope(await start, 401, "UNAUTHENTICATED");
    expect(error.message).toMatch(/signed out/);
    const [{ devices }] = await adminSql<{ devices: number }[]>`select count(*)::int as devices from app_private.devices where user_id = ${user.userId}`;
    expect(devices).toBe(0);
  });

  it("answers 401 when another device's account deletion request signs it out meanwhile", async () => {
    const user = await createTestUser();
    const other = await user.newSession();
    // The request from this session signs the other one out; not committed yet.
    const deletion = holdTransaction(deletionRequest, { as: user });
    await deletion.ran;
    const start = call("/v1/auth/session", { method: "POST", token: other.token, body: { device: phone() } });
    await waitersOf(await deletion.pid);
    deletion.commit();
    await deletion.done;
    expectEnvelope(await start, 401, "UNAUTHENTICATED");
  });
});

describe("session starts of one session on several installations at once", () => {
  it("end as one after the other would: each 201, the last holds the session, the others are revoked", async () => {
    const user = await createTestUser();
    // Holds the first start at the FOR KEY SHARE of its session's row (taken
    // before any device row since 20261126002600, after its insert before),
    // the user's device lock held: the other starts queue behind it.
    const hold = holdTransaction((tx) => tx`select 1 from auth.sessions where id = ${user.sessionId} for update`);
    await hold.ran;
    const starts = [1, 2, 3, 4].map(() => call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone() } }));
    try {
      await waitersOf(await hold.pid, starts.length);
    } finally {
      hold.commit();
    }
    const responses = await Promise.all(starts);
    expect(responses.map((r) => r.status), responses.map((r) => r.text).join("\n")).toEqual([201, 201, 201, 201]);
    const devices = await Promise.all(responses.map((r) => deviceRow(r.body.device.id)));
    expect(new Set(responses.map((r) => r.body.device.id)).size).toBe(4);
    expect(devices.filter((d) => d.session_id === user.sessionId)).toHaveLength(1);
    for (const revoked of devices.filter((d) => d.session_id !== user.sessionId)) {
      expect(revoked).toMatchObject({ session_id: null, revoked_at: expect.any(Date) });
    }
  });
});

describe("a session start with a push token racing an account deletion request", () => {
  it("the request first: the start waits for it, then stores no token and shows the deletion", async () => {
    const user = await createTestUser();
    const deletion = holdTransaction(deletionRequest, { as: user });
    await deletion.ran;
    const start = call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone({ push_token: pushToken(), push_provider: "apns" }) } });
    try {
      await Promise.race([waitersOf(await deletion.pid), start]);
    } finally {
      deletion.commit();
    }
    await deletion.done;
    const response = await start;
    expect(response.status, response.text).toBe(201);
    expect(response.body.device.has_push_token).toBe(false);
    expect(response.body.account_deletion.status).toBe("scheduled");
    expect(await storedPushTokens(user)).toBe(0);
  });

  it("the start first: the request waits for it, then clears the token", async () => {
    const user = await createTestUser();
    // Holds the start at the FOR KEY SHARE of its session's row (taken
    // before any device row since 20261126002600), the user's device lock
    // held, its device and token not written yet.
    const hold = holdTransaction((tx) => tx`select 1 from auth.sessions where id = ${user.sessionId} for update`);
    await hold.ran;
    const start = call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone({ push_token: pushToken(), push_provider: "apns" }) } });
    let deletion: ReturnType<typeof call> | undefined;
    try {
      await waitersOf(await hold.pid);
      deletion = call("/v1/users/me/deletion", { method: "POST", token: user.token, body: CONFIRM });
      await Promise.race([waitersOf(await hold.pid, 2), deletion]);
    } finally {
      hold.commit();
    }
    const [started, requested] = await Promise.all([start, deletion]);
    expect(started.status, started.text).toBe(201);
    expect(requested?.status, requested?.text).toBe(202);
    expect(await storedPushTokens(user)).toBe(0);
  });
});

describe("two users registering the same push token at once (a shared phone)", () => {
  /** The active devices holding `token`, by user. */
  async function holdersOf(token: string): Promise<string[]> {
    const rows = await adminSql<{ user_id: string }[]>`
      select user_id from app_private.devices where push_token = ${token} and revoked_at is null`;
    return rows.map((row) => row.user_id);
  }

  it("end as one after the other would, not in a deadlock: both answered, the later one holds the token", async () => {
    const first = await createTestUser();
    const second = await createTestUser();
    const token = pushToken();
    // The second user's device holds the token already (they signed in on the phone first).
    const secondPhone = phone({ push_token: token, push_provider: "apns" });
    const registered = await call("/v1/auth/session", { method: "POST", token: second.token, body: { device: secondPhone } });
    expect(registered.status, registered.text).toBe(201);
    // A third registration of the token is in flight: it holds the token's
    // lock (the one devices_20_release_push_token takes), so both starts
    // below queue for it: the first user's, then the second user's, which
    // re-registers its device.
    const inFlight = holdTransaction((tx) => tx`select pg_advisory_xact_lock(hashtextextended(${`tidesync.push_token:${token}`}, 0))`);
    await inFlight.ran;
    const starts: Promise<ApiResponse>[] = [];
    try {
      starts.push(call("/v1/auth/session", { method: "POST", token: first.token, body: { device: phone({ push_token: token, push_provider: "apns" }) } }));
      await waitersOf(await inFlight.pid, 1);
      starts.push(call("/v1/auth/session", { method: "POST", token: second.token, body: { device: secondPhone } }));
      await Promise.race([waitersOf(await inFlight.pid, 2), ...starts]);
    } finally {
      inFlight.commit();
    }
    await inFlight.done;
    const [firstStart, secondStart] = await Promise.all(starts);
    expect([firstStart.status, secondStart.status], `${firstStart.text}\n${secondStart.text}`).toEqual([201, 200]);
    // The first user's start detached it from the second user's device, then
    // the second user's start took it back: one owner, the later one.
    expect(firstStart.body.device.has_push_token).toBe(true);
    expect(secondStart.body.device.has_push_token).toBe(true);
    expect(await holdersOf(token)).toEqual([second.userId]);
  });

  it("two users exchanging their tokens at once: both answered, each holds the other's token", async () => {
    const [first, second] = [await createTestUser(), await createTestUser()];
    const [firstToken, secondToken] = [pushToken(), pushToken()];
    const firstPhone = phone({ push_token: firstToken, push_provider: "apns" });
    const secondPhone = phone({ push_token: secondToken, push_provider: "apns" });
    for (const [user, device] of [[first, firstPhone], [second, secondPhone]] as const) {
      const registered = await call("/v1/auth/session", { method: "POST", token: user.token, body: { device } });
      expect(registered.status, registered.text).toBe(201);
    }
    // Registrations of both tokens in flight: each start below queues for them.
    const inFlight = holdTransaction((tx) => tx`
      select pg_advisory_xact_lock(hashtextextended('tidesync.push_token:' || t, 0)) from unnest(${[firstToken, secondToken]}::text[]) t`);
    await inFlight.ran;
    const starts: Promise<ApiResponse>[] = [];
    try {
      starts.push(call("/v1/auth/session", { method: "POST", token: first.token, body: { device: { ...firstPhone, push_token: secondToken } } }));
      await waitersOf(await inFlight.pid, 1);
      starts.push(call("/v1/auth/session", { method: "POST", token: second.token, body: { device: { ...secondPhone, push_token: firstToken } } }));
      await Promise.race([waitersOf(await inFlight.pid, 2), ...starts]);
    } finally {
      inFlight.commit();
    }
    await inFlight.done;
    const answers = await Promise.all(starts);
    expect(answers.map((a) => a.status), answers.map((a) => a.text).join("\n")).toEqual([200, 200]);
    expect(await holdersOf(secondToken)).toEqual([first.userId]);
    expect(await holdersOf(firstToken)).toEqual([second.userId]);
  });

  it("many starts of two users with one token at once: none fails, exactly one device holds it", async () => {
    const first = await createTestUser();
    const second = await createTestUser();
    const token = pushToken();
    const devices = [first, second].map(() => phone({ push_token: token, push_provider: "apns" }));
    for (let round = 0; round < 10; round++) {
      const starts = await Promise.all([first, second, first, second].map((user, i) =>
        call("/v1/auth/session", { method: "POST", token: user.token, body: { device: devices[i % 2] } })));
      for (const start of starts) expect([200, 201], start.text).toContain(start.status);
      expect(await holdersOf(token)).toHaveLength(1);
    }
  });
});

describe("a session start with a push token racing a cancel of the account deletion", () => {
  /** A user whose account deletion is pending (POST /v1/users/me/deletion). */
  async function userLeaving(): Promise<TestUser> {
    const user = await createTestUser();
    const requested = await call("/v1/users/me/deletion", { method: "POST", token: user.token, body: CONFIRM });
    expect(requested.status, requested.text).toBe(202);
    return user;
  }

  it("the cancel first: the start waits for it, then stores the token and shows no deletion", async () => {
    const user = await userLeaving();
    // The cancel DELETE /v1/users/me/deletion makes, in, not committed.
    const cancel = holdTransaction((tx) => tx`select app_private.cancel_account_deletion()`, { as: user });
    await cancel.ran;
    const start = call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone({ push_token: pushToken(), push_provider: "apns" }) } });
    try {
      await Promise.race([waitersOf(await cancel.pid), start]);
    } finally {
      cancel.commit();
    }
    await cancel.done;
    const response = await start;
    expect(response.status, response.text).toBe(201);
    expect(response.body.account_deletion.status).toBe("none");
    expect(response.body.device.has_push_token).toBe(true);
    expect(await storedPushTokens(user)).toBe(1);
  });

  it("the start first: the cancel waits for it; the start withholds the token and says the deletion it withheld it for", async () => {
    const user = await userLeaving();
    // Holds the start at the FOR KEY SHARE of its session's row (taken
    // before any device row since 20261126002600), the user's device lock
    // held: the deletion is still pending when it goes on.
    const hold = holdTransaction((tx) => tx`select 1 from auth.sessions where id = ${user.sessionId} for update`);
    await hold.ran;
    const start = call("/v1/auth/session", { method: "POST", token: user.token, body: { device: phone({ push_token: pushToken(), push_provider: "apns" }) } });
    let cancel: Promise<ApiResponse> | undefined;
    try {
      await waitersOf(await hold.pid);
      cancel = call("/v1/users/me/deletion", { method: "DELETE", token: user.token });
      await Promise.race([waitersOf(await hold.pid, 2), cancel]);
    } finally {
      hold.commit();
    }
    const [started, cancelled] = await Promise.all([start, cancel]);
    expect(started.status, started.text).toBe(201);
    expect(cancelled?.status, cancelled?.text).toBe(204);
    // As one after the other: the start saw the deletion pending, so it stored
    // no token and answers that deletion; the app registers it at its next start.
    expect(started.body.device.has_push_token).toBe(false);
    expect(started.body.account_deletion.status).toBe("scheduled");
    const [{ requests }] = await adminSql<{ requests: number }[]>`select count(*)::int as requests from app_private.account_deletion_requests where user_id = ${user.userId}`;
    expect(requests).toBe(0);
    const again = await call("/v1/auth/session", { method: "POST", token: user.token, body: { device: { ...phone(), installation_id: started.body.device.installation_id, push_token: pushToken(), push_provider: "apns" } } });
    expect(again.status, again.text).toBe(200);
    expect(again.body.device.has_push_token).toBe(true);
  });
});

describe("two users starting a session on one installation at once (a shared phone)", () => {
  /** The users whose device on `installationId` holds a push token. */
  async function tokenHoldersOn(installationId: string): Promise<string[]> {
    const rows = await adminSql<{ user_id: string }[]>`
      select user_id from app_private.devices where installation_id = ${installationId} and push_token is not null`;
    return rows.map((row) => row.user_id);
  }

  it("with different tokens: they run in turn, and only the later one's pushes reach the phone", async () => {
    const [first, second] = [await createTestUser(), await createTestUser()];
    const installation = phone();
    // Another start on the installation is in flight: it holds the
    // installation's lock, so both starts below queue for it, in this order.
    const inFlight = holdTransaction((tx) => tx`select pg_advisory_xact_lock(hashtextextended(${`tidesync.installation:${installation.installation_id}`}, 0))`);
    await inFlight.ran;
    const starts: Promise<ApiResponse>[] = [];
    try {
      starts.push(call("/v1/auth/session", { method: "POST", token: first.token, body: { device: { ...installation, push_token: pushToken(), push_provider: "apns" } } }));
      await Promise.race([waitersOf(await inFlight.pid, 1), ...starts]);
      starts.push(call("/v1/auth/session", { method: "POST", token: second.token, body: { device: { ...installation, push_token: pushToken(), push_provider: "apns" } } }));
      await Promise.race([waitersOf(await inFlight.pid, 2), ...starts]);
    } finally {
      inFlight.commit();
    }
    await inFlight.done;
    const answers = await Promise.all(starts);
    expect(answers.map((a) => a.status), answers.map((a) => a.text).join("\n")).toEqual([201, 201]);
    expect(await tokenHoldersOn(installation.installation_id)).toEqual([second.userId]);
  });

  it("many starts of two users on one installation, with and without tokens, and one moving its session there: none fails, at most one holds a token", async () => {
    const [first, second] = [await createTestUser(), await createTestUser()];
    const installation = phone();
    const firstsOwnPhone = phone({ platform: "android" });
    for (let round = 0; round < 10; round++) {
      const starts = await Promise.all([
        [first, { ...installation, push_token: pushToken(), push_provider: "apns" as const }],
        [second, { ...installation, push_token: null, push_provider: null }],
        [second, { ...installation, push_token: pushToken(), push_provider: "apns" as const }],
        [first, installation],
        // The first user's session moving between her own phone and the shared one.
        [first, { ...firstsOwnPhone, push_token: pushToken(), push_provider: "fcm" as const }],
      ].map(([user, device]) => call("/v1/auth/session", { method: "POST", token: (user as TestUser).token, body: { device } })));
      for (const start of starts) expect([200, 201], start.text).toContain(start.status);
      expect((await tokenHoldersOn(installation.installation_id)).length).toBeLessThanOrEqual(1);
    }
  });
});

describe("two users swapping phones at once with the sessions they have (no token sent)", () => {
  it("none fails: each start moves its session off the device the other one clears, and they meet at the token locks, not in a deadlock", async () => {
    const [first, second] = [await createTestUser(), await createTestUser()];
    const [tablet, phoneOfTwo] = [phone(), phone({ platform: "android" })];
    for (let round = 0; round < 10; round++) {
      // Each signed in with a token where they were...
      const setup = await Promise.all([
        call("/v1/auth/session", { method: "POST", token: first.token, body: { device: { ...tablet, push_token: pushToken(), push_provider: "apns" } } }),
        call("/v1/auth/session", { method: "POST", token: second.token, body: { device: { ...phoneOfTwo, push_token: pushToken(), push_provider: "fcm" } } }),
      ]);
      for (const start of setup) expect([200, 201], start.text).toContain(start.status);
      // ...then both move to the other's installation at once, without a token.
      const swaps = await Promise.all([
        call("/v1/auth/session", { method: "POST", token: first.token, body: { device: { ...phoneOfTwo, push_token: null, push_provider: null } } }),
        call("/v1/auth/session", { method: "POST", token: second.token, body: { device: { ...tablet, push_token: null, push_provider: null } } }),
      ]);
      for (const start of swaps) expect([200, 201], start.text).toContain(start.status);
      expect(await storedPushTokens(first) + await storedPushTokens(second)).toBe(0);
    }
  });
});
