// One JSON log line per request (conventions: request id, route, path, status,
// duration, error code): its level follows the status whatever a route adds,
// every error line names its code, routing errors included, and its path
// (a request refused before routing has no route of its own), and a 401 of
// the token says why.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { call, createTestUser, stack } from "../support/harness.ts";
import { requestLogLine } from "../support/request-log.ts";
import { signHs256, supabaseClaims } from "../support/tokens.ts";

let server: FunctionsServer;

beforeAll(async () => {
  server = await startFunctionsServer(stack.functionsEnv, { name: `${stack.database}-request-log` });
});
afterAll(async () => {
  await server?.stop();
});

/** The request line of `requestId` in the server's log. */
const logLine = (requestId: string) => requestLogLine(server.logFile, requestId);

describe("the request log line", () => {
  it("keeps its level when a route logs a field of the same name (the update check's level is update_level)", async () => {
    const user = await createTestUser();
    const response = await call("/v1/releases/check?platform=ios&channel=beta&build_number=1", { token: user.token, baseUrl: server.apiUrl });
    expect(response.status, response.text).toBe(200);
    const line = await logLine(response.headers.get("x-request-id")!);
    expect(line).toMatchObject({ level: "info", status: 200, update_level: response.body.level });
  });

  it("names the error code of a 405 and a 404, as of every other error", async () => {
    const user = await createTestUser();
    const refused = await call("/v1/whoami", { method: "PATCH", token: user.token, baseUrl: server.apiUrl });
    expect(refused.status).toBe(405);
    expect(await logLine(refused.headers.get("x-request-id")!)).toMatchObject({ level: "warn", status: 405, error_code: "METHOD_NOT_ALLOWED" });

    const missing = await call("/v1/nope", { baseUrl: server.apiUrl });
    expect(missing.status).toBe(404);
    expect(await logLine(missing.headers.get("x-request-id")!)).toMatchObject({ level: "warn", status: 404, error_code: "NOT_FOUND" });
  });

  // A wrong secret (or issuer) answers every token 401 with the same message; the line said only
  // status 401 UNAUTHENTICATED, so on-call could not tell it from clients sending bad tokens.
  it("says why a token was refused (token_refusal), and nothing of the token's claims", async () => {
    const user = await createTestUser();
    const forged = await signHs256("x".repeat(40), supabaseClaims({ userId: user.userId, sessionId: user.sessionId, email: user.email }));
    const response = await call("/v1/whoami", { token: forged, baseUrl: server.apiUrl });
    expect(response.status).toBe(401);
    const line = await logLine(response.headers.get("x-request-id")!);
    expect(line).toMatchObject({ status: 401, error_code: "UNAUTHENTICATED", token_refusal: "bad_signature" });
    expect(JSON.stringify(line)).not.toContain(user.email);
    expect(JSON.stringify(line)).not.toContain(forged.split(".")[1]);
  });

  // 413, 431, 404, 405 and a preflight are answered before routing: their line's route was "/api/*".
  it("names the path of a request refused before routing, without its query string", async () => {
    const user = await createTestUser();
    const answers = [
      [await call("/v1/sync/batch", {
        method: "POST",
        token: user.token,
        rawBody: "x".repeat(1024 * 1024 + 10),
        headers: { "content-type": "application/json" },
        baseUrl: server.apiUrl,
      }), 413, "/api/v1/sync/batch"],
      [await call("/v1/sync/changes?cursor=secret-cursor", { token: user.token, headers: { "x-pad": "y".repeat(40_000) }, baseUrl: server.apiUrl }), 431, "/api/v1/sync/changes"],
      [await call("/v1/sync/chnages?cursor=secret-cursor", { token: user.token, baseUrl: server.apiUrl }), 404, "/api/v1/sync/chnages"],
      [await call("/v1/whoami", { method: "PATCH", token: user.token, baseUrl: server.apiUrl }), 405, "/api/v1/whoami"],
      [await call("/v1/sync/changes", {
        method: "OPTIONS",
        headers: { origin: "https://app.example.test", "access-control-request-method": "GET" },
        baseUrl: server.apiUrl,
      }), 204, "/api/v1/sync/changes"],
    ] as const;
    for (const [response, status, path] of answers) {
      expect(response.status).toBe(status);
      const line = await logLine(response.headers.get("x-request-id")!);
      expect({ status: line.status, path: line.path }).toEqual({ status, path });
      expect(JSON.stringify(line)).not.toContain("secret-cursor");
    }
  });
});
