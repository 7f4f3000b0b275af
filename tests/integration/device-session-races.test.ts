// Session start (POST /v1/auth/session) racing what changes the same user's
// devices: a sign-out of its session, other starts with the same session, an
// account deletion request. One side's transaction is held open while the
// other runs (tests/support/held-transactions.ts), so each interleaving
// happens every time rather than now and then.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, expectEnvelope, type TestUser } from "../support/harness.ts";
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
    // Holds the first start after its insert: binding the session (FOR KEY
    // SHARE of the session row) waits for this lock. The other starts then
    // run while its device is uncommitted.
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
    // Holds the start after its insert (binding the session waits for this
    // lock), its device and token not committed yet.
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
