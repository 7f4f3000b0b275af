// The web deletion page (web/account-deletion/) in headless Chromium against
// `npm start`: a user signs in through supabase-js, sees the grace period
// /v1/meta publishes, is refused without the exact confirmation, schedules the
// deletion, and cancels it, each step checked through the API too. A user with
// a verified TOTP factor is asked for the code after the password (their
// session is aal1, which the api refuses), is told when the code is wrong, and
// with the right one (the session raised to aal2) deletes and cancels the same.
//
// Supabase Auth cannot run here, so the browser's calls to /auth/v1/* are
// answered at the network boundary, the way GoTrue answers them: the password
// grant returns a session whose access token is the one `npm start` minted for
// the sample user (signed by the dev key the function trusts); for the MFA
// user, an aal1 token of a new session row, the factor challenge, and the
// verify, which checks the code the test expects and, as GoTrue does, raises
// that session row to aal2 and answers an aal2 token (both signed with the same
// dev key, .data/dev-signing-key.json). What differs from a real sign-in: the
// password is not checked, the TOTP code is a fixed one, not derived from the
// factor's secret, and the refresh token is not a real one
// (docs/account-deletion.md).
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { type Browser, chromium, type Route } from "playwright-core";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deletionStateResponseSchema } from "../../functions/_shared/schemas/account-deletion.ts";
import { devSigningKey } from "../../scripts/lib/dev-secrets.ts";
import { type NpmStart, type SampleUserLine, startNpmStart } from "../support/npm-start.ts";
import { signEs256, supabaseClaims } from "../support/tokens.ts";
import { serveWebPage, type StaticSite } from "../support/static-site.ts";

const CHROMIUM = "/usr/bin/chromium";
const SAMPLE_PASSWORD = "sample-password-not-secret";

let stack: NpmStart | undefined;
let site: StaticSite | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    // Never a silent skip: the suite cannot claim the web path works without running it.
    const reason = `web deletion page test: ${CHROMIUM} is missing; install Debian's chromium (apt-get install chromium; .ci/run does)`;
    console.error(reason);
    throw new Error(reason);
  }
  stack = await startNpmStart();
  site = await serveWebPage("account-deletion", { supabaseUrl: stack.supabaseUrl, supabaseAnonKey: "dev-anon-key (not checked locally)" });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await site?.stop();
  await stack?.stop();
});

/** GoTrue's answer to the password grant, carrying the token `npm start` minted for `user`. */
function gotrueSession(user: SampleUserLine) {
  const now = Math.floor(Date.now() / 1000);
  return {
    access_token: user.token,
    token_type: "bearer",
    expires_in: 3600,
    expires_at: now + 3600,
    refresh_token: "dev-refresh-token",
    user: { id: user.userId, aud: "authenticated", role: "authenticated", email: user.email, app_metadata: { provider: "email" }, user_metadata: {}, created_at: new Date().toISOString() },
  };
}

function deletionState(token: string) {
  return fetch(`${stack!.supabaseUrl}/functions/v1/api/v1/users/me/deletion`, { headers: { authorization: `Bearer ${token}` } });
}

async function apiState(user: SampleUserLine | { token: string }) {
  const response = await deletionState(user.token);
  expect(response.status).toBe(200);
  return deletionStateResponseSchema.parse(await response.json());
}

describe("web/account-deletion in headless Chromium against npm start", () => {
  it("signs in with supabase-js, refuses without the confirmation, schedules and cancels the deletion", async () => {
    const alice = stack!.users[0];
    const page = await browser!.newPage();
    const signIns: { email: string; password: string }[] = [];
    const unexpected: string[] = [];
    await page.route(`${stack!.supabaseUrl}/auth/v1/**`, async (route: Route) => {
      const url = new URL(route.request().url());
      if (url.pathname === "/auth/v1/token" && url.searchParams.get("grant_type") === "password") {
        signIns.push(route.request().postDataJSON());
        await route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(gotrueSession(alice)) });
      } else if (url.pathname === "/auth/v1/logout") {
        await route.fulfill({ status: 204 });
      } else {
        unexpected.push(`${route.request().method()} ${url.pathname}`);
        await route.fulfill({ status: 404, contentType: "application/json", body: "{}" });
      }
    });

    await page.goto(site!.url);
    await page.fill("#email", alice.email);
    await page.fill("#password", SAMPLE_PASSWORD);
    await page.click("#sign-in");
    await page.waitForSelector('#state[data-status="none"]');
    expect(signIns).toEqual([{ email: alice.email, password: SAMPLE_PASSWORD, gotrue_meta_security: {} }]);
    expect(await page.textContent("#who")).toBe(alice.email);
    expect(await page.textContent("#grace")).toBe("7");

    // Without the exact words nothing happens.
    await page.fill("#confirm", "delete");
    await page.click("#delete");
    await page.waitForFunction(() => document.getElementById("error")!.textContent !== "");
    expect(await page.getAttribute("#state", "data-status")).toBe("none");
    expect((await apiState(alice)).status).toBe("none");

    // A phone's keyboard neither capitalises nor corrects the words, and a refusal names them
    // (the API takes them exactly; "1 field is invalid" alone said nothing of what was wrong).
    expect(await page.getAttribute("#confirm", "autocapitalize")).toBe("none");
    expect(await page.getAttribute("#confirm", "autocorrect")).toBe("off");
    expect(await page.getAttribute("#confirm", "spellcheck")).toBe("false");
    await page.evaluate(() => { document.getElementById("error")!.textContent = ""; });
    await page.fill("#confirm", "Delete my account");
    await page.click("#delete");
    await page.waitForFunction(() => document.getElementById("error")!.textContent!.includes("delete my account"));
    expect(await page.textContent("#error")).toBe('1 field is invalid: confirm must be one of "delete my account"');
    expect((await apiState(alice)).status).toBe("none");

    await page.fill("#confirm", "delete my account");
    await page.click("#delete");
    await page.waitForSelector('#state[data-status="scheduled"]');
    const scheduled = await apiState(alice);
    expect(scheduled.status).toBe("scheduled");
    expect(await page.textContent("#state")).toContain(new Date(scheduled.scheduled_for!).toUTCString());
    expect(await page.isVisible("#cancel")).toBe(true);

    await page.click("#cancel");
    await page.waitForSelector('#state[data-status="none"]');
    expect((await apiState(alice)).status).toBe("none");
    expect(await page.textContent("#error")).toBe("");

    await page.click("#sign-out");
    await page.waitForSelector("#sign-in", { state: "visible" });
    expect(unexpected).toEqual([]);
    await page.close();
  });

  it("asks a user with a verified TOTP factor for the code (aal1 opens nothing), shows a wrong code's error, and with the right one schedules and cancels", async () => {
    const bob = stack!.users[1];
    const sql = postgres(stack!.database.adminDbUrl, { max: 1, onnotice: () => {} });
    try {
      // Bob turned MFA on; the password grant creates a new session at aal1, as GoTrue's does.
      const factorId = randomUUID();
      const sessionId = randomUUID();
      await sql`
        insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
        values (${factorId}, ${bob.userId}, 'Authenticator', 'totp', 'verified', now(), now(), 'TOTP-SECRET')`;
      await sql`insert into auth.sessions (id, user_id, aal, created_at, updated_at) values (${sessionId}, ${bob.userId}, 'aal1', now(), now())`;

      // Tokens as `npm start` mints them (its dev key and issuer), at the session's level.
      const { value: key } = await devSigningKey();
      const { iss } = JSON.parse(Buffer.from(bob.token.split(".")[1], "base64url").toString("utf8")) as { iss: string };
      const now = Math.floor(Date.now() / 1000);
      const tokenAt = (aal: "aal1" | "aal2") => signEs256(key.private_jwk, supabaseClaims({
        userId: bob.userId, sessionId, email: bob.email, issuer: iss,
        claims: { aal, amr: aal === "aal1" ? [{ method: "password", timestamp: now }] : [{ method: "totp", timestamp: now }, { method: "password", timestamp: now }] },
      }));
      const aal1 = await tokenAt("aal1");
      const aal2 = await tokenAt("aal2");
      expect((await deletionState(aal1)).status).toBe(403); // the password alone opens nothing

      // GoTrue's user object lists the factors; its session answers carry it.
      const factor = { id: factorId, friendly_name: "Authenticator", factor_type: "totp", status: "verified", created_at: new Date().toISOString(), updated_at: new Date().toISOString() };
      const user = { ...gotrueSession(bob).user, factors: [factor] };
      const session = (token: string) => ({ ...gotrueSession(bob), access_token: token, user });
      const RIGHT_CODE = "246810";
      const challenges: string[] = [];
      const verifies: { body: unknown; token: string | undefined }[] = [];
      const unexpected: string[] = [];
      const page = await browser!.newPage();
      await page.route(`${stack!.supabaseUrl}/auth/v1/**`, async (route: Route) => {
        const request = route.request();
        const url = new URL(request.url());
        const bearer = request.headers().authorization?.replace(/^Bearer /, "");
        const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
          route.fulfill({ status, contentType: "application/json", headers, body: JSON.stringify(body) });
        if (request.method() === "POST" && url.pathname === "/auth/v1/token" && url.searchParams.get("grant_type") === "password") {
          await json(200, session(aal1));
        } else if (request.method() === "GET" && url.pathname === "/auth/v1/user" && (bearer === aal1 || bearer === aal2)) {
          await json(200, user);
        } else if (request.method() === "POST" && url.pathname === `/auth/v1/factors/${factorId}/challenge` && bearer === aal1) {
          const id = randomUUID();
          challenges.push(id);
          await json(200, { id, type: "totp", expires_at: Math.floor(Date.now() / 1000) + 300 });
        } else if (request.method() === "POST" && url.pathname === `/auth/v1/factors/${factorId}/verify`) {
          const body = request.postDataJSON() as { challenge_id: string; code: string };
          verifies.push({ body, token: bearer });
          if (bearer !== aal1 || body.challenge_id !== challenges.at(-1)) {
            await json(400, { code: "mfa_challenge_expired", message: "unexpected challenge" }, { "x-supabase-api-version": "2024-01-01" });
          } else if (body.code !== RIGHT_CODE) {
            await json(422, { code: "mfa_verification_failed", message: "Invalid TOTP code entered" }, { "x-supabase-api-version": "2024-01-01" });
          } else {
            await sql`update auth.sessions set aal = 'aal2', updated_at = now() where id = ${sessionId}`;
            await json(200, session(aal2));
          }
        } else if (url.pathname === "/auth/v1/logout") {
          await route.fulfill({ status: 204 });
        } else {
          unexpected.push(`${request.method()} ${url.pathname}`);
          await json(404, {});
        }
      });

      await page.goto(site!.url);
      await page.fill("#email", bob.email);
      await page.fill("#password", SAMPLE_PASSWORD);
      await page.click("#sign-in");
      // Before the code: the code form, nothing of the deletion (and no 403 from the api).
      await page.waitForFunction(() => document.querySelector("#mfa:not([hidden])") || document.getElementById("error")!.textContent !== "");
      expect(await page.textContent("#error")).toBe("");
      expect(await page.isVisible("#code")).toBe(true);
      expect(await page.isVisible("#signed-in")).toBe(false);
      expect(await page.isVisible("#delete")).toBe(false);
      expect(await page.getAttribute("#code", "autocomplete")).toBe("one-time-code");

      await page.fill("#code", "000000");
      await page.click("#verify");
      await page.waitForFunction(() => document.getElementById("error")!.textContent !== "");
      expect(await page.textContent("#error")).toBe("Invalid TOTP code entered");
      expect(await page.isVisible("#code")).toBe(true);
      expect(await page.isVisible("#signed-in")).toBe(false);
      expect((await sql<{ aal: string }[]>`select aal::text from auth.sessions where id = ${sessionId}`)[0].aal).toBe("aal1");

      await page.fill("#code", RIGHT_CODE);
      await page.click("#verify");
      await page.waitForSelector('#state[data-status="none"]');
      expect(verifies).toEqual([
        { body: { challenge_id: challenges[0], code: "000000" }, token: aal1 },
        { body: { challenge_id: challenges[1], code: RIGHT_CODE }, token: aal1 },
      ]);
      expect(await page.textContent("#error")).toBe("");
      expect(await page.isVisible("#mfa")).toBe(false);
      expect(await page.textContent("#who")).toBe(bob.email);
      expect(await page.textContent("#grace")).toBe("7");

      await page.fill("#confirm", "delete my account");
      await page.click("#delete");
      await page.waitForSelector('#state[data-status="scheduled"]');
      const scheduled = await apiState({ token: aal2 });
      expect(scheduled.status).toBe("scheduled");
      expect(await page.textContent("#state")).toContain(new Date(scheduled.scheduled_for!).toUTCString());

      await page.click("#cancel");
      await page.waitForSelector('#state[data-status="none"]');
      expect((await apiState({ token: aal2 })).status).toBe("none");
      expect(await page.textContent("#error")).toBe("");

      await page.click("#sign-out");
      await page.waitForSelector("#sign-in", { state: "visible" });
      expect(unexpected).toEqual([]);
      await page.close();
    } finally {
      await sql.end();
    }
  });
});
