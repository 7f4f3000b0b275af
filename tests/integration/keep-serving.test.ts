// functions/api/lib/keep-serving.ts in the real Deno runtime: an uncaught
// error is logged and the process keeps serving, unless the runtime can no
// longer run setImmediate callbacks after it (Deno's queue, broken by a throw
// followed by a clear, fails on every turn from then on: postgres.js sends
// every statement from one, so the process would answer 503 for the rest of its
// life). Then it exits, to be replaced as a crashed worker is.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DENO, denoEnv, FUNCTION_CONFIG_ARGS } from "../../scripts/lib/deno.ts";
import { ROOT } from "../../scripts/lib/paths.ts";

/** Well past the probe's wait (keep-serving.ts, IMMEDIATE_PROBE_MS: 1 s); the module is Deno's only, not imported here. */
const PAST_THE_PROBE_MS = 2500;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "tidesync-keep-serving-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `body` in Deno after keepServingOnUncaughtErrors(); its exit code and output. */
async function runInDeno(name: string, body: string): Promise<{ code: number | null; output: string }> {
  const file = path.join(dir, `${name}.ts`);
  const keepServing = pathToFileURL(path.join(ROOT, "functions/api/lib/keep-serving.ts")).href;
  await writeFile(file, `import { setImmediate, clearImmediate } from "node:timers";
import { keepServingOnUncaughtErrors } from ${JSON.stringify(keepServing)};
keepServingOnUncaughtErrors();
${body}
`);
  return await new Promise((resolve) => {
    execFile(DENO, ["run", ...FUNCTION_CONFIG_ARGS, "--allow-read", file], { env: denoEnv({}), timeout: 30_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, output: stdout + stderr });
    });
  });
}

describe("keepServingOnUncaughtErrors", () => {
  it("a setImmediate callback that throws: logged with its stack, and the process keeps serving", async () => {
    const { code, output } = await runInDeno("throw", `
setImmediate(() => { throw new Error("thrown from an immediate"); });
setTimeout(() => setImmediate(() => { console.log("immediates still run"); Deno.exit(0); }), ${PAST_THE_PROBE_MS});
`);
    expect(output).toContain('"msg":"uncaught error (kept serving)"');
    expect(output).toContain("thrown from an immediate");
    expect(output).toContain("immediates still run");
    expect(code).toBe(0);
  });

  it("a throw, then the next queued setImmediate cleared before the queue runs again (no setImmediate callback runs after that in Deno): the process exits 1, saying so", async () => {
    const { code, output } = await runInDeno("stuck", `
let next: ReturnType<typeof setImmediate>;
setImmediate(() => {
  setTimeout(() => clearImmediate(next), 0);
  throw new Error("thrown from an immediate");
});
next = setImmediate(() => {});
setTimeout(() => { console.log("still serving, without immediates"); Deno.exit(0); }, ${PAST_THE_PROBE_MS * 2});
`);
    expect(output).toContain("setImmediate callbacks no longer run after an uncaught error; exiting");
    // The runtime's own error on every turn meanwhile: counted in one line, not thousands.
    expect(output).toMatch(/uncaught errors \(kept serving\): \d+ more within 1000 ms of this one/);
    expect(output.split("\n").filter((line) => line.includes('"level":"error"')).length).toBeLessThanOrEqual(3);
    expect(output).not.toContain("still serving, without immediates");
    expect(code).toBe(1);
  });
});
