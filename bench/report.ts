// The goals of issue 5 (what we aim for on a 2-core machine, not assertions)
// and the table `npm run bench` prints.
import type { LatencyResult } from "./batch-latency.ts";
import { round } from "./measure.ts";
import type { ScopeCostResult } from "./pull-scope-cost.ts";
import type { PullResult } from "./pull-throughput.ts";
import type { ThroughputResult } from "./push-throughput.ts";
import type { RlsResult } from "./rls-overhead.ts";
import type { CpuPerRequest, MemoryStatus, ServerTimes } from "./server-profile.ts";
import type { Step } from "./time-breakdown.ts";

export interface BenchResults {
  push: Record<string, { api: ThroughputResult; floor: ThroughputResult; ratio: number; server: ServerTimes }>;
  pull: { api: PullResult; floor: PullResult; ratio: number; server: ServerTimes };
  rls: RlsResult;
  latency: LatencyResult[];
  latencyServer: Record<number, ServerTimes>;
  memory: MemoryStatus;
  memoryTimeline: ({ after: string } & MemoryStatus)[];
  cpu: Record<string, CpuPerRequest>;
  scope?: ScopeCostResult;
}

export interface Goal {
  name: string;
  target: string;
  measured: string;
  met: boolean;
}

export function evaluateGoals(r: BenchResults): Goal[] {
  const goals: Goal[] = [];
  const push500 = r.push["500"];
  if (push500) {
    goals.push({ name: "push ops/s at batch 500", target: "≥ 30000", measured: String(round(push500.api.opsPerSecond, 0)), met: push500.api.opsPerSecond >= 30_000 });
    goals.push({ name: "push at batch 500, share of raw-SQL floor", target: "≥ 40%", measured: `${round(100 * push500.ratio)}%`, met: push500.ratio >= 0.4 });
  }
  goals.push({ name: "pull records/s (initial sync)", target: "≥ 80000", measured: String(round(r.pull.api.recordsPerSecond, 0)), met: r.pull.api.recordsPerSecond >= 80_000 });
  goals.push({ name: "pull, share of raw-SQL floor", target: "≥ 85%", measured: `${round(100 * r.pull.ratio)}%`, met: r.pull.ratio >= 0.85 });
  const eight = r.latency.find((l) => l.devices === 8);
  if (eight) goals.push({ name: "p99 of 50-op batches at 8 devices", target: "≤ 30 ms", measured: `${round(eight.p99Ms)} ms`, met: eight.p99Ms <= 30 });
  goals.push({ name: "RLS overhead of the pull query", target: "≤ 1.2×", measured: `${round(r.rls.ratio, 2)}×`, met: r.rls.ratio <= 1.2 });
  goals.push({ name: "peak RSS of the function server", target: "≤ 150 MB", measured: `${round(r.memory.peakRssMb)} MB`, met: r.memory.peakRssMb <= 150 });
  if (r.scope) {
    // Issue 8: a pull costs by the caller's scopes. "About the same" on a shared machine: within 1.5×
    // (a pull reading the whole database would be ~otherRows/ownRows times slower).
    const worst = Math.max(...Object.values(r.scope.ratios));
    goals.push({ name: `pull with ${r.scope.otherRows.toLocaleString("en-US")} rows of other users vs none (worst ratio)`, target: "≤ 1.5×", measured: `${round(worst, 2)}×`, met: worst <= 1.5 });
  }
  return goals;
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) => "| " + cells.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  return [line(headers), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|", ...rows.map(line)].join("\n");
}

export function formatTable(r: BenchResults, goals: Goal[]): string {
  const n = (value: number, digits = 0) => round(value, digits).toLocaleString("en-US");
  const measurements: string[][] = [];
  for (const [size, p] of Object.entries(r.push)) {
    measurements.push([`push ops/s, batch ${size} (${p.api.ops} ops)`, n(p.api.opsPerSecond), n(p.floor.opsPerSecond), `${n(100 * p.ratio, 1)}%`, `${n(p.server.p50Ms, 2)} ms/batch`]);
  }
  measurements.push([`pull records/s, initial sync of ${n(r.pull.api.records)} (${n(r.pull.api.pages)} pages)`, n(r.pull.api.recordsPerSecond), n(r.pull.floor.recordsPerSecond), `${n(100 * r.pull.ratio, 1)}%`, `${n(r.pull.server.p50Ms, 2)} ms/page`]);
  for (const l of r.latency) {
    const s = r.latencyServer[l.devices];
    measurements.push([`50-op batch latency, ${l.devices} device(s): p50 / p99`, `${n(l.p50Ms, 1)} / ${n(l.p99Ms, 1)} ms`, "", "", s ? `${n(s.p50Ms, 1)} / ${n(s.p99Ms, 1)} ms` : ""]);
  }
  measurements.push([`RLS: pull query as authenticated vs owner (${r.rls.pages} pages)`, `${n(r.rls.authenticatedSeconds, 3)} s`, `${n(r.rls.ownerSeconds, 3)} s`, `${n(r.rls.ratio, 2)}×`, `EXPLAIN ${n(r.rls.explainMs.authenticated, 2)} vs ${n(r.rls.explainMs.owner, 2)} ms/page` + (r.rls.planningMs ? ` (+ planning ${n(r.rls.planningMs.authenticated, 2)} vs ${n(r.rls.planningMs.owner, 2)})` : "")]);
  measurements.push(["peak RSS of the deno function server (VmHWM)", `${n(r.memory.peakRssMb, 1)} MB`, "", "", `now ${n(r.memory.currentRssMb, 1)} MB`]);

  return [
    table(["measurement", "API / measured", "raw-SQL floor", "ratio", "server-side (function log)"], measurements),
    "",
    table(["goal", "target", "measured", "result"], goals.map((g) => [g.name, g.target, g.measured, g.met ? "met" : "MISSED"])),
  ].join("\n");
}

export function formatScope(scope: ScopeCostResult): string {
  const n = (value: number, digits = 1) => round(value, digits).toLocaleString("en-US");
  const rows: [string, keyof ScopeCostResult["ratios"]][] = [
    ["first full-sync page (limit 1000)", "firstPageMs"],
    [`whole full sync of the caller's ${n(scope.ownRows, 0)} tasks + their list`, "fullSyncMs"],
    ["incremental page of 1000 changes in the caller's list", "incrementalPageMs"],
    ["pull with an up-to-date cursor (nothing new)", "upToDateMs"],
  ];
  return `pull cost by scope: the same caller and rows, with ${n(scope.otherRows, 0)} tasks of ${n(scope.otherUsers, 0)} other users' lists present vs none ` +
    `(client wall time, median; the other rows took ${n(scope.seedSeconds.users)} s (users) + ${n(scope.seedSeconds.rows)} s (tasks, sync triggers included) + ${n(scope.seedSeconds.analyze)} s (vacuum analyze) to write)\n` +
    table(["pull", "none (ms)", `${n(scope.otherRows, 0)} other rows (ms)`, "ratio"],
      rows.map(([label, key]) => [label, n(scope.none[key], 2), n(scope.withOthers[key], 2), `${n(scope.ratios[key], 2)}×`]));
}

export function formatBreakdown(breakdown: Record<string, Step[]>): string {
  return Object.entries(breakdown)
    .map(([name, steps]) => `where the time goes: ${name}\n` + table(["step", "ms (median)"], steps.map((s) => [s.step, round(s.ms, 2).toFixed(2)])))
    .join("\n\n");
}

export function formatCpu(cpu: Record<string, CpuPerRequest>): string {
  return "CPU per request (ms; 10 ms clock ticks, averaged over the phase)\n" + table(
    ["phase", "requests", "deno server", "postgres (function's backends)", "bench client (node)"],
    Object.entries(cpu).map(([phase, c]) => [phase, String(c.requests), round(c.denoMs, 2).toFixed(2), round(c.postgresMs, 2).toFixed(2), round(c.clientMs, 2).toFixed(2)]),
  );
}
