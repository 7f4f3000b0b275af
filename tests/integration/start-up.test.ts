// A setting that would break every request stops the function at start-up,
// with a fatal line naming the variable (docs/configuration.md), instead of a
// function that starts and then answers every request in error. The real
// entry point of the local stack (scripts/serve-functions.ts), as the tests
// start it; each unit's own cases are in tests/unit/config.unit.test.ts.
import { describe, expect, it } from "vitest";
import { stack } from "../support/harness.ts";
import { startFunctionsServer } from "../support/functions-server.ts";
import { logLine } from "../support/request-log.ts";

/** The `fatal` log line of a functions server started with `env`, which must exit before answering. */
async function refusedStart(name: string, env: Record<string, string>): Promise<{ msg: string; error: string }> {
  const outcome = await startFunctionsServer({ ...stack.functionsEnv, ...env }, { name: `${stack.database}-${name}`, readyTimeoutMs: 60_000 })
    .then(async (server) => {
      await server.stop();
      return new Error("the functions started");
    }, (error: Error) => error);
  expect(outcome.message).toMatch(/exited with 1 before answering/);
  const logFile = /; see (\S+)$/.exec(outcome.message)![1];
  return await logLine(logFile, (line) => line.level === "fatal", "fatal log line") as { msg: string; error: string };
}

describe("start-up refusals", () => {
  const publicKey = stack.keys.publicJwks.keys[0] as Record<string, unknown>;

  it.each<[name: string, what: string, env: Record<string, string>, error: RegExp]>([
    // These two started, and then every valid token answered 401 "the access token is invalid".
    ["jwks-cut-short", "a key's x coordinate cut short", {
      SUPABASE_JWKS: JSON.stringify({ keys: [{ ...publicKey, x: String(publicKey.x).slice(0, 20) }] }),
    }, /^SUPABASE_JWKS: key 0 \(kid ".+"\) is not an ES256 public key/],
    ["jwks-private", "the private signing key pasted", {
      SUPABASE_JWKS: JSON.stringify({ keys: [stack.keys.privateJwk] }),
    }, /^SUPABASE_JWKS: key 0 \(kid ".+"\) is a private key/],
    // Started with one export allowed on its one connection: one export to a slow reader, and every other request answered 503.
    ["pool-1", "a pool of one connection", { TIDESYNC_DB_POOL_MAX: "1" }, /^TIDESYNC_DB_POOL_MAX must be a whole number from 2 to/],
    // Stopped with "Invalid URL: 'not a url/auth/v1/.well-known/jwks.json'", naming no variable.
    ["supabase-url", "a project URL that is no URL", { SUPABASE_JWKS: "", SUPABASE_URL: "not a url" }, /^SUPABASE_URL must be the project's http\(s\) URL/],
  ])("%s: %s", async (name, _what, env, error) => {
    const fatal = await refusedStart(name, env);
    expect(fatal).toMatchObject({ msg: "the function cannot start", error: expect.stringMatching(error) });
  });
});
