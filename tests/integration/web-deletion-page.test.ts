// The web deletion page (web/account-deletion/) in headless Chromium against
// `npm start`: a user signs in through supabase-js, sees the grace period
// /v1/meta publishes, is refused without the exact confirmation, schedules the
// deletion, and cancels it, each step checked through the API too.
//
// Supabase Auth cannot run here, so the browser's calls to /auth/v1/* are
// answered at the network boundary, the way GoTrue answers them: the password
// grant returns a session whose access token is the one `npm start` minted for
// the sample user (signed by the dev key the function trusts). What differs
// from a real sign-in: the password is not checked and the refresh token is
// not a real one (docs/account-deletion.md).
import { existsSync } from "node:fs";
import { type Browser, chromium, type Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deletionStateResponseSchema } from "../../functions/_shared/schemas/account-deletion.ts";
import { type NpmStart, type SampleUserLine, startNpmStart } from "../support/npm-start.ts";
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

async function apiState(user: SampleUserLine) {
  const response = await fetch(`${stack!.supabaseUrl}/functions/v1/api/v1/users/me/deletion`, { headers: { authorization: `Bearer ${user.token}` } });
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
});
