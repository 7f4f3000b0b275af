// Drives a fuzz run: fixed cases for every operation, then FUZZ_RUNS generated
// ones (deterministic for a seed), sent a few at a time; collects counts and
// every failing input in a replayable form.
import fc from "fast-check";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { type FuzzContext, isAccountWide } from "./fuzz-context.ts";
import { AUTH_PLACEHOLDER, type FuzzCase, fixedCases, operationCases } from "./fuzz-cases.ts";
import { judgeResponse, type Verdict } from "./judge-response.ts";
import { type Outcome, sendRaw, sendRequest } from "./send-request.ts";

export interface FuzzOptions {
  runs: number;
  seed: number;
  concurrency: number;
  timeoutMs: number;
  /** Where failing inputs are written in full (JSON). */
  failuresFile?: string;
  log?: (line: string) => void;
}

export interface FuzzFailure {
  operation: string;
  category: string;
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  auth: string;
  bodyPreview?: string;
  bodyBase64?: string;
  bodyBytes?: number;
  chunked?: boolean;
  raw?: string;
  status?: number;
  responsePreview?: string;
  problems: string[];
}

export interface FuzzReport {
  requests: number;
  counts: Record<Verdict["bucket"], number>;
  seed: number;
  runs: number;
  operations: string[];
  /** The first MAX_KEPT_FAILURES failing inputs in full. */
  failures: FuzzFailure[];
  failureCount: number;
  /** Requests sent with the caller's good token, and how many of those were refused as 401. */
  validAuth: { sent: number; unauthenticated: number };
  byCategory: Record<string, number>;
  summary: string;
}

export function fuzzOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<FuzzOptions, "runs" | "seed"> {
  const runs = Number(env.FUZZ_RUNS ?? 3000);
  const seed = Number(env.FUZZ_SEED ?? 20261122);
  if (!Number.isSafeInteger(runs) || runs < 0) throw new Error(`FUZZ_RUNS must be a non-negative integer, got ${env.FUZZ_RUNS}`);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${env.FUZZ_SEED}`);
  return { runs, seed };
}

const CHUNK = 200;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/** Failing inputs kept in full; a bug hit by every request must not exhaust memory on a big run. */
const MAX_KEPT_FAILURES = 1000;

function preview(bytes: Buffer | undefined, max = 400): string | undefined {
  if (!bytes) return undefined;
  const text = bytes.toString("utf8");
  return text.length > max ? `${text.slice(0, max)}… (${bytes.length} bytes)` : text;
}

function shortHeaders(headers: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v !== undefined && v.length > 200 ? `${v.slice(0, 200)}… (${v.length} chars)` : v]));
}

async function send(ctx: FuzzContext, fuzzCase: FuzzCase, options: FuzzOptions): Promise<{ outcome: Outcome; authLabel: string }> {
  // A request that may change state gets a session of its own: a DELETE may
  // sign its session out, and a POST may bind it to a device that a later
  // DELETE /v1/devices/{id} signs out. Only safe methods share the run's token.
  const ownToken = async () =>
    SAFE_METHODS.has(fuzzCase.method.toUpperCase())
      ? ctx.token
      : isAccountWide({ method: fuzzCase.method, template: fuzzCase.op.template })
      ? await ctx.throwawayUserToken()
      : await ctx.throwawayToken();
  if (fuzzCase.raw) {
    const bytes = Buffer.from(fuzzCase.raw.bytes.toString("latin1").replace(AUTH_PLACEHOLDER, await ownToken()), "latin1");
    return { outcome: await sendRaw(ctx.origin, bytes, options.timeoutMs, fuzzCase.raw.halfCloseAfterMs), authLabel: "own (raw)" };
  }
  let authorization: string | undefined;
  let authLabel: string;
  if (fuzzCase.auth.kind === "variant") {
    const variant = (isAccountWide({ method: fuzzCase.method, template: fuzzCase.op.template }) ? ctx.accountWideAuthVariants : ctx.authVariants)[fuzzCase.auth.index];
    authorization = variant.value;
    authLabel = variant.label;
  } else {
    authorization = `Bearer ${await ownToken()}`;
    authLabel = "own";
  }
  const outcome = await sendRequest({
    origin: ctx.origin,
    method: fuzzCase.method,
    path: fuzzCase.path,
    headers: {
      ...fuzzCase.headers,
      authorization,
      // CI's operations: the good credential is a signature over exactly the bytes sent.
      ...(fuzzCase.op.signed && fuzzCase.auth.kind === "own" ? ctx.signWebhook(fuzzCase.method, fuzzCase.path, fuzzCase.body) : {}),
    },
    body: fuzzCase.body,
    chunked: fuzzCase.chunked,
    timeoutMs: options.timeoutMs,
  });
  return { outcome, authLabel };
}

export async function runFuzz(ctx: FuzzContext, options: FuzzOptions): Promise<FuzzReport> {
  const log = options.log ?? (() => {});
  const report: FuzzReport = {
    requests: 0,
    counts: { "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0, dropped: 0 },
    seed: options.seed,
    runs: options.runs,
    operations: ctx.operations.map((op) => op.name),
    failures: [],
    failureCount: 0,
    validAuth: { sent: 0, unauthenticated: 0 },
    byCategory: {},
    summary: "",
  };

  const generated = fc.oneof(...ctx.operations.map((op) => operationCases(ctx, op)));
  const fixed = ctx.operations.flatMap((op) => fixedCases(ctx, op, options.seed));

  async function runOne(fuzzCase: FuzzCase): Promise<void> {
    const { outcome, authLabel } = await send(ctx, fuzzCase, options);
    const verdict = judgeResponse(fuzzCase, outcome);
    report.requests++;
    report.counts[verdict.bucket]++;
    const group = fuzzCase.category.split(":")[0];
    report.byCategory[group] = (report.byCategory[group] ?? 0) + 1;
    if (authLabel === "own" && fuzzCase.op.secured && !fuzzCase.raw) {
      report.validAuth.sent++;
      if (verdict.status === 401) report.validAuth.unauthenticated++;
    }
    if (!verdict.ok) report.failureCount++;
    if (!verdict.ok && report.failures.length < MAX_KEPT_FAILURES) {
      report.failures.push({
        operation: fuzzCase.op.name,
        category: fuzzCase.category,
        method: fuzzCase.method,
        path: fuzzCase.path.length > 300 ? `${fuzzCase.path.slice(0, 300)}… (${fuzzCase.path.length} chars)` : fuzzCase.path,
        headers: shortHeaders(fuzzCase.headers),
        auth: authLabel,
        bodyPreview: preview(fuzzCase.body),
        bodyBase64: fuzzCase.body && fuzzCase.body.length <= 64 * 1024 ? fuzzCase.body.toString("base64") : undefined,
        bodyBytes: fuzzCase.body?.length,
        chunked: fuzzCase.chunked,
        raw: fuzzCase.raw ? preview(fuzzCase.raw.bytes, 600) : undefined,
        status: verdict.status,
        responsePreview: outcome.kind === "response" ? preview(outcome.body) : outcome.reason,
        problems: verdict.problems,
      });
    }
  }

  async function runAll(cases: FuzzCase[]): Promise<void> {
    let next = 0;
    const workers = Array.from({ length: options.concurrency }, async () => {
      while (next < cases.length) await runOne(cases[next++]);
    });
    await Promise.all(workers);
  }

  const started = Date.now();
  await runAll(fixed);
  for (let done = 0, chunk = 0; done < options.runs; done += CHUNK, chunk++) {
    const numRuns = Math.min(CHUNK, options.runs - done);
    await runAll(fc.sample(generated, { seed: options.seed + chunk, numRuns }));
    if (options.runs > 5 * CHUNK && chunk % 10 === 9) log(`fuzz: ${done + numRuns}/${options.runs} generated cases, ${report.failureCount} failing, ${Math.round((Date.now() - started) / 1000)} s`);
  }

  const { counts } = report;
  report.summary = `fuzz: requests=${report.requests} 2xx=${counts["2xx"]} 4xx=${counts["4xx"]} 5xx=${counts["5xx"]} seed=${options.seed}` +
    ` runs=${options.runs} operations=${ctx.operations.length} dropped=${counts.dropped} failures=${report.failureCount}`;

  if (options.failuresFile) {
    await mkdir(path.dirname(options.failuresFile), { recursive: true });
    await writeFile(options.failuresFile, JSON.stringify({ seed: options.seed, runs: options.runs, failureCount: report.failureCount, failures: report.failures }, null, 2));
  }
  return report;
}

/** A readable digest of the failures: one line per distinct problem, with one example input each. */
export function describeFailures(failures: FuzzFailure[], max = 15): string {
  const groups = new Map<string, FuzzFailure[]>();
  for (const failure of failures) {
    const key = `${failure.operation} | ${failure.category} | ${failure.problems.map((p) => p.replace(/\d{3}/, "NNN")).join("; ").slice(0, 120)}`;
    groups.set(key, [...(groups.get(key) ?? []), failure]);
  }
  const lines: string[] = [];
  for (const [key, list] of [...groups].slice(0, max)) {
    const example = list[0];
    lines.push(`- ${key} (${list.length}×)`,
      `    ${example.method} ${example.path} auth=${example.auth} status=${example.status ?? "-"}`,
      `    headers=${JSON.stringify(example.headers)}`,
      ...(example.raw ? [`    raw=${JSON.stringify(example.raw)}`] : []),
      ...(example.bodyPreview !== undefined ? [`    body=${JSON.stringify(example.bodyPreview)}${example.chunked ? " (chunked)" : ""}`] : []),
      `    response=${JSON.stringify(example.responsePreview)}`,
      `    problems=${example.problems.join("; ")}`);
  }
  if (groups.size > max) lines.push(`… and ${groups.size - max} more kinds`);
  return lines.join("\n");
}
