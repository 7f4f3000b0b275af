// One JSON log line per request (conventions: request id, route, status,
// duration, error code): its level follows the status whatever a route adds,
// and every error line names its code, routing errors included.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { call, createTestUser, stack } from "../support/harness.ts";

let server: FunctionsServer;

beforeAll(async () => {
  server = await startFunctionsServer(stack.functionsEnv, { name: `${stack.database}-request-log` });
});
afterAll(async () => {
  await server?.stop();
});

/** The request line of `requestId` in the server's log (written by a stream: polled until it is there). */
async function logLine(requestId: string): Promise<Record<string, unknown>> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const text = await readFile(server.logFile, "utf8");
    for (const raw of text.split("\n")) {
      if (!raw.startsWith("{")) continue;
      const line = JSON.parse(raw) as Record<string, unknown>;
      if (line.msg === "request" && line.request_id === requestId) return line;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no request log line for ${requestId} in ${server.logFile}`);
}

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
});
