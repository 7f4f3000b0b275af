// Faults beyond the network: the function process killed (-9) while requests
// are in flight and a new one started on another port, and the function's
// database connections terminated under it. Only OUR server's connections
// are terminated (matched by their client ports), so test files running in
// parallel on the shared stack are not disturbed.
//
// It also supervises: a function process that dies on its own (a crash) is
// recorded as a failure of the run, with the crash from its log, and replaced
// the way the edge runtime would replace a crashed worker, so the rest of the
// run still checks convergence.
import { readdir, readFile, readlink } from "node:fs/promises";
import type postgres from "postgres";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import type { FaultNetwork } from "./fault-network.ts";

export interface SurvivedError {
  /** The log message, the error's message and its first stack frame. */
  origin: string;
  count: number;
  /** The first log it was seen in. */
  logFile: string;
}

export class ServerChaos {
  private generation = 0;
  private server!: FunctionsServer;
  private replacing: Promise<void> | null = null;
  private readonly killedOnPurpose = new Set<FunctionsServer>();
  private readonly crashedLogs: string[] = [];
  private readonly logFiles: string[] = [];
  private stopped = false;

  private constructor(
    private readonly network: FaultNetwork,
    private readonly adminSql: postgres.Sql,
    private readonly database: string,
    private readonly env: Record<string, string>,
    private readonly name: string,
  ) {}

  static async start(network: FaultNetwork, adminSql: postgres.Sql, database: string, env: Record<string, string>, name: string): Promise<ServerChaos> {
    const chaos = new ServerChaos(network, adminSql, database, env, name);
    await chaos.startNext();
    return chaos;
  }

  private async startNext(): Promise<void> {
    const server = await startFunctionsServer(this.env, { name: `${this.name}-${this.generation++}` });
    this.logFiles.push(server.logFile);
    server.process.once("exit", () => {
      if (this.killedOnPurpose.has(server) || this.stopped) return;
      this.crashedLogs.push(server.logFile);
      this.replace();
    });
    this.server = server;
    this.network.apiUrl = server.apiUrl;
  }

  private replace(): Promise<void> {
    this.replacing ??= this.startNext().finally(() => {
      this.replacing = null;
    });
    return this.replacing;
  }

  private isAlive(server: FunctionsServer): boolean {
    return server.process.exitCode === null && server.process.signalCode === null;
  }

  /** kill -9 the function process while requests are in flight, then serve from a new process on a new port. */
  async restartMidBatch(): Promise<void> {
    if (this.replacing) await this.replacing;
    const deadline = Date.now() + 3000;
    while (this.network.inFlight === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    const old = this.server;
    if (this.isAlive(old)) {
      this.killedOnPurpose.add(old);
      const exited = new Promise<void>((resolve) => old.process.once("exit", () => resolve()));
      old.process.kill("SIGKILL");
      await exited;
      this.network.faults.serverRestarts++;
      await this.replace();
    } else {
      await this.replace();
    }
  }

  /** Terminates every database connection of the current function process; returns how many. */
  async killDatabaseConnections(): Promise<number> {
    if (this.replacing) await this.replacing;
    const ports = await localTcpPorts(this.server.process.pid);
    this.network.faults.dbKillRounds++;
    if (ports.length === 0) return 0;
    const killed = await this.adminSql<{ pid: number }[]>`
      select pg_terminate_backend(pid) as killed, pid
        from pg_stat_activity
       where datname = ${this.database}
         and application_name = 'tidesync-api'
         and client_port = any(${ports}::int[])`;
    return killed.length;
  }

  /** Waits until a server is up (after a crash). */
  async ready(): Promise<void> {
    while (this.replacing) await this.replacing;
  }

  /** Function processes that died without being killed, each with the error its log ends with. */
  async crashes(): Promise<string[]> {
    const reports: string[] = [];
    for (const logFile of this.crashedLogs) {
      const log = await readFile(logFile, "utf8").catch(() => "");
      const lines = log.split("\n");
      // Deno's own report of an uncaught error, or the function's fatal line (keep-serving.ts exits after one).
      const at = lines.findIndex((line) => /^error: Uncaught/.test(line) || line.includes('"level":"fatal"'));
      reports.push(`function process crashed (${logFile}): ${at >= 0 ? lines.slice(at, at + 4).join(" | ") : "no error in its log"}`);
    }
    return reports;
  }

  /**
   * Uncaught errors the function processes logged and survived (functions/api/lib/keep-serving.ts),
   * grouped by where they came from: the message and the first stack frame (the one that threw).
   */
  async survivedUncaughtErrors(): Promise<SurvivedError[]> {
    const byOrigin = new Map<string, SurvivedError>();
    for (const logFile of this.logFiles) {
      const log = await readFile(logFile, "utf8").catch(() => "");
      for (const line of log.split("\n")) {
        if (!line.includes('"msg":"uncaught error') && !line.includes('"msg":"unhandled rejection')) continue;
        const entry = JSON.parse(line) as { msg: string; error: string };
        const [message, ...frames] = entry.error.split("\n");
        const frame = frames.map((f) => f.trim()).find((f) => f.startsWith("at ")) ?? "(no stack)";
        const origin = `${entry.msg}: ${message} ${frame}`;
        const seen = byOrigin.get(origin) ?? { origin, count: 0, logFile };
        seen.count++;
        byOrigin.set(origin, seen);
      }
    }
    return [...byOrigin.values()].sort((a, b) => b.count - a.count);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.ready();
    await this.server.stop();
  }
}

/** Local ports of the TCP sockets a process holds (Linux /proc). */
async function localTcpPorts(pid: number | undefined): Promise<number[]> {
  if (pid === undefined) return [];
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1]);
  }
  const ports = new Set<number>();
  for (const table of ["tcp", "tcp6"]) {
    const text = await readFile(`/proc/${pid}/net/${table}`, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/);
      if (columns.length < 10 || !inodes.has(columns[9])) continue;
      ports.add(parseInt(columns[1].split(":")[1], 16));
    }
  }
  return [...ports];
}
