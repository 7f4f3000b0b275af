// Each streaming export holds a pool connection for its whole download, so a
// server streams only a few at once (TIDESYNC_CONCURRENT_EXPORTS, by default a
// quarter of TIDESYNC_DB_POOL_MAX): one more answers 429 with Retry-After in the
// error envelope and spends none of the caller's export budget, and the other
// routes keep their connections (docs/account-export.md).
import http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { seedListOfTasks } from "../support/big-list.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";

let server: FunctionsServer;
beforeAll(async () => {
  server = await startFunctionsServer({
    ...stack.functionsEnv,
    TIDESYNC_DB_POOL_MAX: "4", // so one export at a time
    TIDESYNC_RATE_LIMITS: JSON.stringify({ "account.export": { limit: 2, window_seconds: 3600 } }),
  }, { name: `${stack.database}-export-concurrency` });
});
afterAll(async () => {
  await server?.stop();
});

interface Download {
  status: number;
  /** Reads the rest of the body, to its end. */
  rest(): Promise<string>;
}

/** Starts an export and reads nothing past its headers until `rest()`. */
function startExport(token: string): Promise<Download> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.apiUrl}/v1/users/me/export`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.pause();
      const chunks: Buffer[] = [];
      const ended = new Promise<string>((done, failed) => {
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => done(Buffer.concat(chunks).toString("utf8")));
        res.on("error", failed);
      });
      ended.catch(() => {});
      resolve({ status: res.statusCode!, rest: () => (res.resume(), ended) });
    });
    req.on("error", reject);
  });
}

it("one export more than the server streams at once is 429 with Retry-After, spends no budget, and starves nobody", async () => {
  const user = await createTestUser();
  const bystander = await createTestUser();
  // More than the stream's queue and the sockets' buffers hold: the first
  // export is still streaming (and holding its connection) while its reader waits.
  const tasks = 40_000;
  await seedListOfTasks(user.userId, tasks);

  const first = await startExport(user.token);
  expect(first.status).toBe(200);

  const second = await call("/v1/users/me/export", { token: user.token, baseUrl: server.apiUrl });
  expect(second.status, second.text.slice(0, 200)).toBe(429);
  expect(expectEnvelope(second, 429, "RATE_LIMITED").retryable).toBe(true);
  expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);

  const devices = await call("/v1/devices", { token: bystander.token, baseUrl: server.apiUrl });
  expect(devices.status, devices.text).toBe(200);

  const document = JSON.parse(await first.rest()) as { complete: boolean; synced: { tasks: unknown[] } };
  expect(document.complete).toBe(true);
  expect(document.synced.tasks).toHaveLength(tasks);

  // The slot is free again, and the refused export spent none of the budget of 2.
  const third = await startExport(user.token);
  expect(third.status).toBe(200);
  expect(JSON.parse(await third.rest())).toMatchObject({ complete: true });
}, 90_000);

it("an export refused after its slot was taken (400 for a parameter it does not declare) gives the slot back", async () => {
  const user = await createTestUser();
  const refused = await call("/v1/users/me/export?format=csv", { token: user.token, baseUrl: server.apiUrl });
  expectEnvelope(refused, 400, "VALIDATION_FAILED");
  // The server streams one export at a time: had the refusal kept its slot, this would be 429 until a restart.
  const download = await startExport(user.token);
  expect(download.status).toBe(200);
  expect(JSON.parse(await download.rest())).toMatchObject({ complete: true });
});
