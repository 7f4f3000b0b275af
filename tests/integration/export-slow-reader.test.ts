// An export to a reader slower than the database gets the whole document: the
// cursor waits for the reader (docs/account-export.md), for longer than the
// pool's statement timeout and idle-in-transaction timeout (twice it), up to the
// export's own time limit. A server with a 1 s statement timeout stands in for
// the 8 s default, so a few seconds' pause of the reader shows it.
import http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestUser, stack } from "../support/harness.ts";
import { seedListOfTasks } from "../support/big-list.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";

const STATEMENT_TIMEOUT_MS = 1000;

let server: FunctionsServer;
beforeAll(async () => {
  server = await startFunctionsServer(
    { ...stack.functionsEnv, TIDESYNC_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) },
    { name: `${stack.database}-export-slow-reader` },
  );
});
afterAll(async () => {
  await server?.stop();
});

/** Reads the first chunk, then nothing for `pauseMs`, then the rest. */
function readWithPause(token: string, pauseMs: number): Promise<{ status: number; text: string; aborted: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.apiUrl}/v1/users/me/export`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      let paused = false;
      let aborted = false;
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        if (paused) return;
        paused = true;
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      });
      res.on("aborted", () => (aborted = true));
      res.on("error", () => (aborted = true));
      res.on("close", () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString("utf8"), aborted }));
    });
    req.on("error", reject);
  });
}

it("a reader that pauses longer than the statement and idle-in-transaction timeouts still gets the complete document", async () => {
  const user = await createTestUser();
  // 80 cursor batches, ~10 MB: far more than the stream's queue (16 batches)
  // and the sockets' buffers hold, so the cursor statement is still open
  // while the reader pauses.
  const tasks = 40_000;
  await seedListOfTasks(user.userId, tasks);

  const result = await readWithPause(user.token, STATEMENT_TIMEOUT_MS * 3);
  expect(result.status).toBe(200);
  expect(result.aborted, `cut off after ${result.text.length} characters`).toBe(false);
  const document = JSON.parse(result.text) as { complete: boolean; synced: { tasks: unknown[] } };
  expect(document.complete).toBe(true);
  expect(document.synced.tasks).toHaveLength(tasks);
}, 60_000);
