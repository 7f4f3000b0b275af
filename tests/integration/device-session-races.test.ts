// Session start (POST /v1/auth/session) racing what changes the same user's
// devices: a sign-out of its session. One side's transaction is held open
// while the other runs (tests/support/held-transactions.ts), so each
// interleaving happens every time rather than now and then.
import { describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, expectEnvelope } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { phone } from "../support/device-sessions.ts";

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
