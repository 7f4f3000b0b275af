// An export cut off mid-stream (its answer is already 200, so the client sees
// only a document that ends short) is logged with what cut it off and whose
// export it was: the cause's name, SQLSTATE and message, as an unexpected
// error's are, and the user id.
import http from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { adminSql, createTestUser, stack } from "../support/harness.ts";
import { seedListOfTasks } from "../support/big-list.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { logLine } from "../support/request-log.ts";

let server: FunctionsServer;
beforeAll(async () => {
  server = await startFunctionsServer(stack.functionsEnv, { name: `${stack.database}-export-cut-off` });
});
afterAll(async () => {
  await server?.stop();
});

/** Reads the first chunk, then nothing for `pauseMs` (the export waits mid-stream), then the rest. */
function readWithPause(token: string, pauseMs: number): Promise<{ status: number; aborted: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.apiUrl}/v1/users/me/export`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      let paused = false;
      let aborted = false;
      res.on("data", () => {
        if (paused) return;
        paused = true;
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      });
      res.on("aborted", () => (aborted = true));
      res.on("error", () => (aborted = true));
      res.on("close", () => resolve({ status: res.statusCode!, aborted }));
    });
    req.on("error", reject);
  });
}

it("an export whose database connection is terminated mid-stream logs the cause (the connection lost) and the user", async () => {
  const user = await createTestUser();
  // Far more than the stream's queue and the sockets' buffers hold: the export's cursor is still open while the reader pauses.
  await seedListOfTasks(user.userId, 40_000);
  const reading = readWithPause(user.token, 2500);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // This export's backend alone (other files' requests share the database): the one reading its tasks.
  const killed = await adminSql`
    select pg_terminate_backend(pid) from pg_stat_activity
    where datname = ${stack.database} and application_name = 'tidesync-api' and state <> 'idle'
      and query ilike '%to_jsonb(t)::text as json from%tasks%'`;
  expect(killed.length).toBe(1);
  expect(await reading).toEqual({ status: 200, aborted: true });

  const line = await logLine(server.logFile, (l) => l.msg === "export cut off", "export cut off line");
  // The line said only "the database is unavailable or too slow right now" (the 503 it would have answered), and not whose.
  // Its cause: the backend's 57P01, or postgres.js's CONNECTION_CLOSED when the export was waiting for the reader.
  expect(line).toMatchObject({
    level: "error",
    user_id: user.userId,
    error: { name: expect.any(String), code: expect.stringMatching(/^(57P01|CONNECTION_CLOSED)$/), message: expect.any(String) },
  });
}, 60_000);
