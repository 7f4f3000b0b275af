// Fuzzes every route the running function documents in its OpenAPI document:
// malformed, oversized, truncated, wrongly typed and unexpected bodies, query
// strings, headers, cursors, path ids, methods and HTTP framing. Seeded and
// reproducible: FUZZ_SEED picks the inputs, FUZZ_RUNS how many
// (e.g. `FUZZ_RUNS=50000 npm run test:fuzz`). Every failing input is printed
// and written in full to .cache/fuzz-failures.json.
import path from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";
import { buildFuzzContext } from "../fuzz/fuzz-context.ts";
import { describeFailures, fuzzOptionsFromEnv, runFuzz } from "../fuzz/run-fuzz.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";

const { runs, seed } = fuzzOptionsFromEnv();
// About 15 ms per request on a busy 2-core machine, plus the fixed cases.
const timeout = 120_000 + runs * 60;

it(`every answer to ${runs} generated inputs (seed ${seed}) is a documented status in the envelope, never 5xx or a leak`, async () => {
  const ctx = await buildFuzzContext({
    apiUrl: stack.apiUrl, keys: stack.keys, adminSql, createUser: createTestUser, seed,
    webhookSecret: stack.functionsEnv.TIDESYNC_RELEASES_WEBHOOK_SECRET,
  });
  expect(ctx.operations.map((op) => op.name)).toContain("GET /api/v1/meta");
  // The sync routes, the read of one record among them (a collection from GET /v1/meta and an id in its path).
  expect(ctx.operations.map((op) => op.name)).toEqual(expect.arrayContaining([
    "GET /api/v1/sync/changes", "POST /api/v1/sync/batch", "GET /api/v1/sync/records/{collection}/{id}",
  ]));
  // The test-build routes are among them: CI's (signed) and the apps' (bearer, Expo headers).
  expect(ctx.operations.map((op) => op.name)).toEqual(expect.arrayContaining([
    "POST /api/v1/releases", "PATCH /api/v1/releases/{id}", "GET /api/v1/releases/check",
    "POST /api/v1/releases/{id}/feedback", "GET /api/v1/expo-updates/manifest",
  ]));

  const report = await runFuzz(ctx, {
    runs,
    seed,
    concurrency: 4,
    timeoutMs: 15_000,
    failuresFile: path.join(ROOT, ".cache", "fuzz-failures.json"),
    log: (line) => console.log(line),
  });
  console.log(report.summary);
  if (report.failureCount > 0) console.log(`fuzz failures (replay with FUZZ_SEED=${seed} FUZZ_RUNS=${runs}):\n${describeFailures(report.failures)}`);

  expect(report.counts["5xx"]).toBe(0);
  expect(describeFailures(report.failures)).toBe("");
  expect(report.failureCount).toBe(0);
  // Most cases carry a good token: validation must be reached, not stopped at 401.
  expect(report.validAuth.unauthenticated).toBeLessThan(report.validAuth.sent * 0.05);
  expect(report.requests).toBeGreaterThanOrEqual(runs);
}, timeout);
