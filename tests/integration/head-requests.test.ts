// HEAD on the API (docs/errors.md, "HEAD"). Hono serves a HEAD through the GET route, so on a
// route a bearer token opens it would spend the caller's rate limit and read the database for a
// body nobody receives: three HEADs of /v1/users/me/export (a link checker) used the whole
// hourly budget of 3 exports. Such routes answer HEAD 405 with Allow before the token is read;
// the public ones still answer HEAD as GET.
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser, stack } from "../support/harness.ts";

async function head(path: string, token?: string): Promise<Response> {
  return await fetch(`${stack.apiUrl}${path}`, { method: "HEAD", headers: token ? { authorization: `Bearer ${token}` } : {} });
}

async function counters(userId: string) {
  return await adminSql<{ operation: string; hits: number }[]>`
    select operation, hits from app_private.rate_limit_counters where user_id = ${userId} order by operation`;
}

describe("HEAD", () => {
  it("of the export spends nothing: three HEADs, then the GET answers 200 with its budget untouched", async () => {
    const user = await createTestUser();
    for (let i = 0; i < 3; i++) {
      const response = await head("/v1/users/me/export", user.token);
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("GET");
      expect(await response.text()).toBe("");
    }
    expect(await counters(user.userId)).toEqual([]);
    const response = await fetch(`${stack.apiUrl}/v1/users/me/export`, { headers: { authorization: `Bearer ${user.token}` } });
    expect(response.status).toBe(200);
    expect(Number(response.headers.get("ratelimit-remaining"))).toBe(Number(response.headers.get("ratelimit-limit")) - 1);
    expect((await response.json()).complete).toBe(true);
  });

  it("of every route a token opens answers 405 with the path's methods, before the token (none needed, none spent)", async () => {
    const user = await createTestUser();
    const routes: [string, string][] = [
      ["/v1/whoami", "GET"],
      ["/v1/sync/changes", "GET"],
      ["/v1/devices", "GET"],
      ["/v1/users/me/notifications", "GET, PUT"],
      ["/v1/users/me/notifications/history", "GET"],
      ["/v1/users/me/deletion", "GET, POST, DELETE"],
      ["/v1/users/me/export", "GET"],
      // PATCH: /v1/releases/{id} routes "check" too (CI's change of a release).
      ["/v1/releases/check?platform=ios&channel=beta&build_number=1", "GET, PATCH"],
      ["/v1/expo-updates/manifest", "GET"],
    ];
    for (const [path, allow] of routes) {
      for (const token of [user.token, undefined]) {
        const response = await head(path, token);
        expect(response.status, `HEAD ${path}`).toBe(405);
        expect(response.headers.get("allow")?.split(", ").sort(), `HEAD ${path}`).toEqual(allow.split(", ").sort());
        expect(response.headers.get("x-request-id")).toBeTruthy();
      }
    }
    expect(await counters(user.userId)).toEqual([]);
  });

  it("of the public routes answers as GET, without a body", async () => {
    for (const path of ["/v1/meta", "/v1/openapi.json"]) {
      const response = await head(path);
      expect(response.status, `HEAD ${path}`).toBe(200);
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(await response.text()).toBe("");
    }
  });
});
