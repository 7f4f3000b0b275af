// A sustained mixed load: `devices` devices (each its own user) for
// `seconds`, each pushing a batch of new tasks and then pulling what changed
// since its cursor, back to back. Reported per window of `windowSeconds`:
// throughput, p50/p99 of pushes and pulls, and the function server's resident
// memory, which must stay flat (no growth with the requests served).
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { now, percentile, pool } from "./measure.ts";
import { batchBody, taskRows } from "./push-throughput.ts";
import { readMemory } from "./server-profile.ts";

export interface SustainedWindow {
  /** Seconds since the load started, at the window's start. */
  fromSeconds: number;
  pushes: number;
  pulls: number;
  opsPerSecond: number;
  requestsPerSecond: number;
  pushP50Ms: number;
  pushP99Ms: number;
  pullP50Ms: number;
  pullP99Ms: number;
  /** VmRSS of the deno function server at the window's end. */
  rssMb: number;
}

export interface SustainedResult {
  devices: number;
  seconds: number;
  batchOps: number;
  requests: number;
  /** Answers other than 200 (each counted, none retried). */
  failures: number;
  opsPerSecond: number;
  pushP50Ms: number;
  pushP99Ms: number;
  pullP50Ms: number;
  pullP99Ms: number;
  windows: SustainedWindow[];
  rss: { startMb: number; endMb: number; maxMb: number; peakMb: number };
}

interface Sample { at: number; kind: "push" | "pull"; ms: number; ops: number }

async function request(stack: BenchStack, user: BenchUser, path: string, body?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${user.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body,
  });
  return { status: response.status, text: await response.text() };
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);

export async function measureSustainedLoad(stack: BenchStack, serverPid: number, config: { seconds: number; devices: number; windowSeconds: number; batchOps: number }, log: (line: string) => void): Promise<SustainedResult> {
  const users: BenchUser[] = [];
  for (let i = 0; i < config.devices; i++) users.push(await stack.createUser("sustained"));
  // Each device starts from a finished full sync (its cursor).
  const cursors = new Map<string, string>();
  await pool(users.length, 8, async (i) => {
    const { status, text } = await request(stack, users[i], "/v1/sync/changes?limit=1000");
    if (status !== 200) throw new Error(`sustained load: the initial pull answered ${status}: ${text.slice(0, 200)}`);
    cursors.set(users[i].userId, (JSON.parse(text) as { cursor: string }).cursor);
  });

  const samples: Sample[] = [];
  let failures = 0;
  const memory: { at: number; rssMb: number; peakMb: number }[] = [];
  const started = now();
  const deadline = started + config.seconds * 1000;
  const sampleMemory = async () => {
    const m = await readMemory(serverPid);
    memory.push({ at: now() - started, rssMb: m.currentRssMb, peakMb: m.peakRssMb });
  };
  await sampleMemory();
  const sampler = setInterval(() => void sampleMemory().catch(() => {}), config.windowSeconds * 1000);
  const reporter = setInterval(() => log(`  sustained load: ${Math.round((now() - started) / 1000)} s of ${config.seconds}, ${samples.length} requests`), 30_000);
  try {
    await pool(users.length, users.length, async (i) => {
      const user = users[i];
      while (now() < deadline) {
        let t0 = now();
        const push = await request(stack, user, "/v1/sync/batch", batchBody(taskRows(user.listId, config.batchOps), user.deviceId));
        if (push.status === 200) samples.push({ at: t0 - started, kind: "push", ms: now() - t0, ops: config.batchOps });
        else failures++;
        t0 = now();
        const pull = await request(stack, user, `/v1/sync/changes?limit=1000&cursor=${encodeURIComponent(cursors.get(user.userId)!)}`);
        if (pull.status === 200) {
          const page = JSON.parse(pull.text) as { changes: unknown[]; cursor: string };
          cursors.set(user.userId, page.cursor);
          samples.push({ at: t0 - started, kind: "pull", ms: now() - t0, ops: page.changes.length });
        } else failures++;
      }
    });
  } finally {
    clearInterval(sampler);
    clearInterval(reporter);
  }
  const elapsed = (now() - started) / 1000;
  await sampleMemory();

  const windows: SustainedWindow[] = [];
  for (let from = 0; from < elapsed - config.windowSeconds / 2; from += config.windowSeconds) {
    const inWindow = samples.filter((s) => s.at >= from * 1000 && s.at < (from + config.windowSeconds) * 1000);
    const pushes = sorted(inWindow.filter((s) => s.kind === "push").map((s) => s.ms));
    const pulls = sorted(inWindow.filter((s) => s.kind === "pull").map((s) => s.ms));
    const end = (from + config.windowSeconds) * 1000;
    const rss = memory.filter((m) => m.at <= end + 500).at(-1) ?? memory[0];
    windows.push({
      fromSeconds: from,
      pushes: pushes.length,
      pulls: pulls.length,
      opsPerSecond: (pushes.length * config.batchOps) / config.windowSeconds,
      requestsPerSecond: inWindow.length / config.windowSeconds,
      pushP50Ms: percentile(pushes, 50),
      pushP99Ms: percentile(pushes, 99),
      pullP50Ms: percentile(pulls, 50),
      pullP99Ms: percentile(pulls, 99),
      rssMb: rss.rssMb,
    });
  }
  const pushes = sorted(samples.filter((s) => s.kind === "push").map((s) => s.ms));
  const pulls = sorted(samples.filter((s) => s.kind === "pull").map((s) => s.ms));
  return {
    devices: config.devices,
    seconds: elapsed,
    batchOps: config.batchOps,
    requests: samples.length,
    failures,
    opsPerSecond: (pushes.length * config.batchOps) / elapsed,
    pushP50Ms: percentile(pushes, 50),
    pushP99Ms: percentile(pushes, 99),
    pullP50Ms: percentile(pulls, 50),
    pullP99Ms: percentile(pulls, 99),
    windows,
    rss: {
      startMb: memory[0].rssMb,
      endMb: memory[memory.length - 1].rssMb,
      maxMb: Math.max(...memory.map((m) => m.rssMb)),
      peakMb: memory[memory.length - 1].peakMb,
    },
  };
}
