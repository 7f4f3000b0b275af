// A user who turned MFA on (a verified factor in auth.mfa_factors) is not
// reached by the password alone. Supabase Auth answers the password step with
// an aal1 session and upgrades that session to aal2 (auth.sessions.aal) when
// the second factor is verified; until then the session opens nothing of
// tidesync's: the api function answers 403 FORBIDDEN, and the Data API, which
// runs as role authenticated with the token's claims, sees nothing
// (app_private.session_standing, migration 20261128003350). One thing such a
// session does: sign itself out (DELETE /v1/auth/session), as Supabase Auth's
// own logout does at aal1; signing any other device out stays refused. A user
// without a verified factor is reached at aal1, as before.
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { adminSql, call, createSession, createTestUser, expectEnvelope, type TestUser } from "../support/harness.ts";
import { addRefreshToken, deviceRow, phone, pushToken, sessionState, startSession } from "../support/device-sessions.ts";
import { push, pushOk, upsert } from "../support/shared-lists.ts";
import { signEs256, supabaseClaims } from "../support/tokens.ts";
import { stack } from "../support/harness.ts";

const now = () => Math.floor(Date.now() / 1000);
const PASSWORD = () => ({ aal: "aal1", amr: [{ method: "password", timestamp: now() }] });
const PASSWORD_AND_TOTP = () => ({ aal: "aal2", amr: [{ method: "totp", timestamp: now() }, { method: "password", timestamp: now() - 30 }] });

async function addFactor(userId: string, status: "verified" | "unverified"): Promise<void> {
  await adminSql`
    insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
    values (${randomUUID()}, ${userId}, ${"authenticator " + status}, 'totp', ${status}, now(), now(), 'TOTP-SECRET')`;
}

/** Supabase Auth's verify of the second factor: the session row becomes aal2, and so does the token it then issues. */
async function completeMfa(user: TestUser, sessionId: string): Promise<string> {
  await adminSql`update auth.sessions set aal = 'aal2', updated_at = now() where id = ${sessionId}`;
  return await signEs256(stack.keys.privateJwk, supabaseClaims({ userId: user.userId, sessionId, email: user.email, claims: PASSWORD_AND_TOTP() }));
}

/** A new session after the password step only (aal1), as Supabase Auth issues it before the TOTP step. */
async function passwordOnlySession(user: TestUser): Promise<{ sessionId: string; token: string }> {
  const sessionId = await createSession(user.userId);
  return { sessionId, token: await signEs256(stack.keys.privateJwk, supabaseClaims({ userId: user.userId, sessionId, email: user.email, claims: PASSWORD() })) };
}

/** Runs SQL as PostgREST does for a token it verified: role authenticated, the token's payload as request.jwt.claims. */
async function viaDataApi<T>(token: string, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  const claims = Buffer.from(token.split(".")[1], "base64url").toString("utf8");
  return await adminSql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
    return await work(tx);
  }) as T;
}

const listsOf = (token: string) =>
  viaDataApi(token, async (tx) => (await tx<{ title: string }[]>`select title from public.lists order by title`).map((l) => l.title));

/** Alice: a list, a verified TOTP factor and her phone's session, which completed MFA (aal2). */
async function aliceWithMfa() {
  const alice = await createTestUser();
  const phoneToken = await completeMfa(alice, alice.sessionId);
  await startSession(phoneToken, phone());
  await pushOk(phoneToken, { ops: [upsert("lists", randomUUID(), { title: "Alice's private list" })] });
  await addFactor(alice.userId, "verified");
  return { alice, phoneToken };
}

describe("a user with a verified MFA factor", () => {
  it("a password-only (aal1) session reads nothing through the Data API and gets 403 from every route; the aal2 phone is untouched", async () => {
    const { alice, phoneToken } = await aliceWithMfa();
    const intruder = await passwordOnlySession(alice);

    expect(await listsOf(intruder.token)).toEqual([]);
    expect(await listsOf(phoneToken)).toContain("Alice's private list");

    const refusals = {
      export: await call("/v1/users/me/export", { token: intruder.token }),
      deletion: await call("/v1/users/me/deletion", { method: "POST", token: intruder.token, body: { confirm: "delete my account" } }),
      push: await push(intruder.token, { ops: [upsert("lists", randomUUID(), { title: "written with the password alone" })] }),
      pull: await call("/v1/sync/changes", { token: intruder.token }),
      session: await call("/v1/auth/session", { method: "POST", token: intruder.token, body: { device: phone() } }),
      whoami: await call("/v1/whoami", { token: intruder.token }),
      devices: await call("/v1/devices", { token: intruder.token }),
    };
    for (const [route, response] of Object.entries(refusals)) {
      expect(expectEnvelope(response, 403, "FORBIDDEN").message, route).toMatch(/multi-factor sign-in \(aal2\)/);
    }

    // Nothing of it happened: no deletion scheduled, no list written, the phone still signed in and reading.
    const [{ deletions }] = await adminSql`select count(*)::int as deletions from app_private.account_deletion_requests where user_id = ${alice.userId}`;
    expect(deletions).toBe(0);
    const [{ lists }] = await adminSql`select count(*)::int as lists from public.lists where title = 'written with the password alone'`;
    expect(lists).toBe(0);
    const pulled = await call("/v1/sync/changes", { token: phoneToken });
    expect(pulled.status, pulled.text).toBe(200);
    expect((await call("/v1/users/me/export", { token: phoneToken })).status).toBe(200);
  });

  it("the same session, once Supabase Auth upgraded it to aal2, is reached, also with the aal1 token it held before", async () => {
    const { alice } = await aliceWithMfa();
    const signingIn = await passwordOnlySession(alice);
    expect((await call("/v1/sync/changes", { token: signingIn.token })).status).toBe(403);

    const upgraded = await completeMfa(alice, signingIn.sessionId);
    expect(await listsOf(upgraded)).toContain("Alice's private list");
    expect((await call("/v1/sync/changes", { token: upgraded })).status).toBe(200);
    // The session row is the authority, as for Supabase Auth's own aal2 checks (session.IsAAL2()).
    expect(await listsOf(signingIn.token)).toContain("Alice's private list");
    const whoami = await call("/v1/whoami", { token: signingIn.token });
    expect(whoami.status, whoami.text).toBe(200);
  });
});

describe("the aal answered is the session row's, not the token's claim", () => {
  it("POST /v1/auth/session and GET /v1/whoami answer aal2 once MFA raised the row, and aal1 once Auth lowered it", async () => {
    // Raised: the app still holds the aal1 token of the password step, which the row lets through.
    const { alice } = await aliceWithMfa();
    const signingIn = await passwordOnlySession(alice);
    await completeMfa(alice, signingIn.sessionId);
    expect((await startSession(signingIn.token, phone())).body.session.aal).toBe("aal2");
    expect((await call("/v1/whoami", { token: signingIn.token })).body.aal).toBe("aal2");

    // Lowered: the factor unenrolled, the row back at aal1, the token still saying aal2 until it expires.
    const bob = await createTestUser();
    const bobToken = await completeMfa(bob, bob.sessionId);
    await adminSql`update auth.sessions set aal = 'aal1', updated_at = now() where id = ${bob.sessionId}`;
    expect((await startSession(bobToken, phone())).body.session.aal).toBe("aal1");
    expect((await call("/v1/whoami", { token: bobToken })).body.aal).toBe("aal1");
  });
});

describe("an aal1 session of a user with a verified MFA factor signs itself out, and nothing else", () => {
  it("the password step of a sign-in not finished: 204, its session and refresh token gone, its token 401 from then on", async () => {
    const { alice, phoneToken } = await aliceWithMfa();
    const signingIn = await passwordOnlySession(alice);
    await addRefreshToken(alice.userId, signingIn.sessionId);

    const response = await call("/v1/auth/session", { method: "DELETE", token: signingIn.token });
    expect(response.status, response.text).toBe(204);
    expect(response.text).toBe("");

    expect(await sessionState(signingIn.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    expectEnvelope(await call("/v1/auth/session", { method: "DELETE", token: signingIn.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await call("/v1/whoami", { token: signingIn.token }), 401, "UNAUTHENTICATED");
    // The aal2 phone is untouched.
    expect(await sessionState(alice.sessionId)).toEqual({ sessions: 1, refreshTokens: 0 });
    expect((await call("/v1/sync/changes", { token: phoneToken })).status).toBe(200);
  });

  it("a device's session back at aal1 (Supabase Auth lowers it when the factor that raised it is unenrolled): 204, the device signed out and its push token cleared", async () => {
    const { alice } = await aliceWithMfa();
    const tablet = await passwordOnlySession(alice);
    const tabletToken = await completeMfa(alice, tablet.sessionId);
    const { body } = await startSession(tabletToken, phone({ push_token: pushToken(), push_provider: "apns" }));
    await adminSql`update auth.sessions set aal = 'aal1', updated_at = now() where id = ${tablet.sessionId}`;
    expectEnvelope(await call("/v1/devices", { token: tabletToken }), 403, "FORBIDDEN");

    const response = await call("/v1/auth/session", { method: "DELETE", token: tabletToken });
    expect(response.status, response.text).toBe(204);

    expect(await sessionState(tablet.sessionId)).toEqual({ sessions: 0, refreshTokens: 0 });
    const device = await deviceRow(body.device.id);
    expect(device).toMatchObject({ push_token: null, push_provider: null, session_id: null });
    expect(device.revoked_at).not.toBeNull();
    expectEnvelope(await call("/v1/auth/session", { method: "DELETE", token: tabletToken }), 401, "UNAUTHENTICATED");
  });

  it("signing another device out (DELETE /v1/devices/{id}) stays 403, and that device stays signed in", async () => {
    const { alice, phoneToken } = await aliceWithMfa();
    const phoneDevice = (await startSession(phoneToken, phone({ push_token: pushToken(), push_provider: "apns" }))).body.device;
    const signingIn = await passwordOnlySession(alice);

    const response = await call(`/v1/devices/${phoneDevice.id}`, { method: "DELETE", token: signingIn.token });
    expect(expectEnvelope(response, 403, "FORBIDDEN").message).toMatch(/multi-factor sign-in \(aal2\)/);

    expect(await sessionState(alice.sessionId)).toEqual({ sessions: 1, refreshTokens: 0 });
    expect(await deviceRow(phoneDevice.id)).toMatchObject({ session_id: alice.sessionId, revoked_at: null, push_token: expect.any(String) });
    // The aal1 session itself is still there: only its own sign-out ends it.
    expect(await sessionState(signingIn.sessionId)).toEqual({ sessions: 1, refreshTokens: 0 });
  });
});

describe("a user without a verified factor is reached at aal1", () => {
  for (const factor of ["none", "unverified"] as const) {
    it(`factor: ${factor}`, async () => {
      const bob = await createTestUser();
      if (factor === "unverified") await addFactor(bob.userId, "unverified");
      await startSession(bob.token, phone());
      await pushOk(bob, { ops: [upsert("lists", randomUUID(), { title: "Bob's list" })] });
      expect(await listsOf(bob.token)).toContain("Bob's list");
      expect((await call("/v1/sync/changes", { token: bob.token })).status).toBe(200);
      expect((await call("/v1/users/me/export", { token: bob.token })).status).toBe(200);
      const deletion = await call("/v1/users/me/deletion", { method: "POST", token: bob.token, body: { confirm: "delete my account" } });
      expect(deletion.status, deletion.text).toBe(202);
    });
  }
});
