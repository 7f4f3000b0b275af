// The deprecation mechanism (functions/api/lib/deprecations.ts), on a server
// started with a TEST configuration that deprecates GET /v1/whoami and
// DELETE /v1/devices/{id}: the headers of RFC 9745 / RFC 8594, GET /v1/meta's
// `deprecations`, and `deprecated: true` in the OpenAPI document.
// Production declares no deprecation today (checked on the suite's stack).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";

const WHOAMI = { route: "GET /v1/whoami", since: "2026-11-01T00:00:00Z", sunset: "2027-06-01T00:00:00Z", link: "https://docs.example.test/migrations/whoami" };
const DELETE_DEVICE = { route: "DELETE /v1/devices/{id}", since: "2026-11-15T12:00:00Z", sunset: "2027-05-15T12:00:00Z", link: "https://docs.example.test/migrations/devices" };

let deprecating: FunctionsServer;
beforeAll(async () => {
  deprecating = await startFunctionsServer(
    { ...stack.functionsEnv, TIDESYNC_DEPRECATIONS: JSON.stringify([WHOAMI, DELETE_DEVICE]) },
    { name: `${stack.database}-deprecations` },
  );
});
afterAll(async () => {
  await deprecating?.stop();
});

describe("a deprecated route", () => {
  it("answers with Deprecation (@epoch), Sunset (HTTP-date) and Link rel=deprecation, on success and on error", async () => {
    const user = await createTestUser();
    const ok = await call("/v1/whoami", { token: user.token, baseUrl: deprecating.apiUrl });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("deprecation")).toBe("@1793491200");
    expect(ok.headers.get("sunset")).toBe("Tue, 01 Jun 2027 00:00:00 GMT");
    expect(ok.headers.get("link")).toBe('<https://docs.example.test/migrations/whoami>; rel="deprecation"');

    const refused = await call("/v1/whoami", { baseUrl: deprecating.apiUrl });
    expectEnvelope(refused, 401, "UNAUTHENTICATED");
    expect(refused.headers.get("deprecation")).toBe("@1793491200");

    const removed = await call(`/v1/devices/${crypto.randomUUID()}`, { method: "DELETE", token: user.token, baseUrl: deprecating.apiUrl });
    expectEnvelope(removed, 404, "NOT_FOUND");
    expect(removed.headers.get("deprecation")).toBe(`@${Date.parse(DELETE_DEVICE.since) / 1000}`);
    expect(removed.headers.get("sunset")).toBe("Sat, 15 May 2027 12:00:00 GMT");
  });

  it("other routes, and other methods of the same path, carry no deprecation headers", async () => {
    const user = await createTestUser();
    for (const response of [
      await call("/v1/meta", { baseUrl: deprecating.apiUrl }),
      await call("/v1/devices", { token: user.token, baseUrl: deprecating.apiUrl }),
    ]) {
      expect(response.status).toBe(200);
      expect([response.headers.get("deprecation"), response.headers.get("sunset"), response.headers.get("link")]).toEqual([null, null, null]);
    }
  });

  it("is listed in GET /v1/meta with since, sunset and link", async () => {
    const meta = await call("/v1/meta", { baseUrl: deprecating.apiUrl });
    expect(meta.body.deprecations).toEqual([WHOAMI, DELETE_DEVICE]);
  });

  it("is `deprecated: true` in the OpenAPI document, and no other operation is", async () => {
    const { body } = await call("/v1/openapi.json", { baseUrl: deprecating.apiUrl });
    const deprecated = Object.entries(body.paths as Record<string, Record<string, { deprecated?: boolean }>>)
      .flatMap(([p, ops]) => Object.entries(ops).filter(([, op]) => op.deprecated === true).map(([method]) => `${method.toUpperCase()} ${p}`));
    expect(deprecated.sort()).toEqual(["DELETE /api/v1/devices/{id}", "GET /api/v1/whoami"]);
  });
});

describe("this release", () => {
  it("deprecates nothing: GET /v1/meta lists no deprecation and no response carries the headers", async () => {
    const meta = await call("/v1/meta");
    expect(meta.body.deprecations).toEqual([]);
    const user = await createTestUser();
    expect((await call("/v1/whoami", { token: user.token })).headers.get("deprecation")).toBeNull();
  });
});
