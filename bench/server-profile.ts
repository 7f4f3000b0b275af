// What the function server itself reports: its peak resident memory (VmHWM of
// the deno process) and, from its one-JSON-line-per-request log, how long it
// spent on each request — the gap to the client's wall time is HTTP, the
// runtime's networking and the client.
import { readdir, readFile } from "node:fs/promises";
import { percentile } from "./measure.ts";

export interface MemoryStatus {
  peakRssMb: number;
  currentRssMb: number;
}

export async function readMemory(pid: number): Promise<MemoryStatus> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { peakRssMb: kb("VmHWM") / 1024, currentRssMb: kb("VmRSS") / 1024 };
}

export interface ServerTimes {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

/** Server-side durations (duration_ms of the request log) of the lines from `fromLine` on, for one route. */
export async function serverTimes(logFile: string, route: string, fromLine: number, toLine?: number): Promise<ServerTimes> {
  const lines = (await readFile(logFile, "utf8")).split("\n").slice(fromLine, toLine);
  const durations: number[] = [];
  for (const line of lines) {
    if (!line.startsWith("{")) continue;
    try {
      const entry = JSON.parse(line) as { msg?: string; route?: string; duration_ms?: number; status?: number };
      if (entry.msg === "request" && entry.route === route && entry.status === 200 && typeof entry.duration_ms === "number") durations.push(entry.duration_ms);
    } catch {
      // not a log line of ours
    }
  }
  durations.sort((a, b) => a - b);
  return {
    requests: durations.length,
    p50Ms: percentile(durations, 50),
    p99Ms: percentile(durations, 99),
    meanMs: durations.reduce((s, d) => s + d, 0) / Math.max(1, durations.length),
  };
}

export async function logLineCount(logFile: string): Promise<number> {
  return (await readFile(logFile, "utf8")).split("\n").length - 1;
}

/** CPU time used so far by the deno server, by each of the function's Postgres backends, and by this (client) process. */
export interface CpuSnapshot {
  denoMs: number;
  /** Of denoMs: V8's worker threads (concurrent and parallel garbage collection, background compilation). */
  v8WorkersMs: number;
  backendMs: Map<number, number>;
  clientMs: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of a `/proc/.../stat` line, in ms. */
function statCpuMs(stat: string): number {
  // Fields after the command name (which may contain spaces): utime is the 14th field, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

async function processCpuMs(pid: number): Promise<number | undefined> {
  try {
    return statCpuMs(await readFile(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined; // the backend ended
  }
}

/** CPU of the process's threads V8 names "V8 DefaultWorker" (its platform's worker pool). */
async function v8WorkerThreadsMs(pid: number): Promise<number> {
  let ms = 0;
  for (const thread of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const stat = await readFile(`/proc/${pid}/task/${thread}/stat`, "utf8").catch(() => "");
    if (stat.slice(stat.indexOf("(") + 1).startsWith("V8 ")) ms += statCpuMs(stat);
  }
  return ms;
}

/** `backendPids`: the function's connections (pg_stat_activity, application_name tidesync-api). */
export async function cpuSnapshot(denoPid: number, backendPids: number[]): Promise<CpuSnapshot> {
  const usage = process.cpuUsage();
  const backendMs = new Map<number, number>();
  for (const pid of backendPids) {
    const ms = await processCpuMs(pid);
    if (ms !== undefined) backendMs.set(pid, ms);
  }
  return { denoMs: (await processCpuMs(denoPid)) ?? 0, v8WorkersMs: await v8WorkerThreadsMs(denoPid), backendMs, clientMs: (usage.user + usage.system) / 1000 };
}

export interface CpuPerRequest {
  requests: number;
  denoMs: number;
  /** Of denoMs: V8's worker threads, mostly garbage collection (docs/performance-history.md). */
  v8WorkersMs: number;
  postgresMs: number;
  clientMs: number;
}

export function cpuPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): CpuPerRequest {
  let postgres = 0;
  // A backend opened during the phase counts from zero; one closed during it is lost (the pool keeps them for 60 s).
  for (const [pid, ms] of after.backendMs) postgres += ms - (before.backendMs.get(pid) ?? 0);
  return {
    requests,
    denoMs: (after.denoMs - before.denoMs) / requests,
    v8WorkersMs: (after.v8WorkersMs - before.v8WorkersMs) / requests,
    postgresMs: postgres / requests,
    clientMs: (after.clientMs - before.clientMs) / requests,
  };
}

/** CPU summed over several windows of one phase (each a pair of snapshots), per request at the end. */
export function cpuTally() {
  const total = { denoMs: 0, v8WorkersMs: 0, postgresMs: 0, clientMs: 0 };
  return {
    add(before: CpuSnapshot, after: CpuSnapshot): void {
      const window = cpuPerRequest(before, after, 1);
      for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += window[key];
    },
    perRequest(requests: number): CpuPerRequest {
      return {
        requests,
        denoMs: total.denoMs / requests,
        v8WorkersMs: total.v8WorkersMs / requests,
        postgresMs: total.postgresMs / requests,
        clientMs: total.clientMs / requests,
      };
    },
  };
}
