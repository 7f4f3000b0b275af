// Session start (POST /v1/auth/session) racing what changes the same user's
// devices: a sign-out of its session, other starts with the same session.
// One side's transaction is held open
// while the other runs (tests/support/held-transactions.ts), so each
// interleaving happens every time rather than now and then.
import { describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, expectEnvelope } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { deviceRow, phone } from "../support/device-sessions.ts";

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
