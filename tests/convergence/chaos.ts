// Faults beyond the network: the function process killed (-9) while requests
// are in flight and a new one started on another port, and the function's
// database connections terminated under it. Only OUR server's connections
// are terminated (matched by their client ports), so test files running in
// parallel on the shared stack are not disturbed.
import { readdir, readFile, readlink } from "node:fs/promises";
import type postgres from "postgres";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import type { FaultNetwork } from "./fault-network.ts";

export class ServerChaos {
  private generation = 0;

  constructor(
    private server: FunctionsServer,
    private readonly network: FaultNetwork,
    private readonly adminSql: postgres.Sql,
    private readonly database: string,
    private readonly env: Record<string, string>,
    private readonly name: string,
  ) {}

  static async start(network: FaultNetwork, adminSql: postgres.Sql, database: string, env: Record<string, string>, name: string): Promise<ServerChaos> {
    const server = await startFunctionsServer(env, { name: `${name}-0` });
    network.apiUrl = server.apiUrl;
    return new ServerChaos(server, network, adminSql, database, env, name);
  }

  get apiUrl(): string {
    return this.server.apiUrl;
  }

  /** kill -9 the function process while requests are in flight, then serve from a new process on a new port. */
  async restartMidBatch(): Promise<void> {
    const deadline = Date.now() + 3000;
    while (this.network.inFlight === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    const old = this.server;
    const exited = new Promise<void>((resolve) => old.process.once("exit", () => resolve()));
    old.process.kill("SIGKILL");
    await exited;
    this.network.faults.serverRestarts++;
    this.server = await startFunctionsServer(this.env, { name: `${this.name}-${++this.generation}` });
    this.network.apiUrl = this.server.apiUrl;
  }

  /** Terminates every database connection of the current function process; returns how many. */
  async killDatabaseConnections(): Promise<number> {
    const ports = await localTcpPorts(this.server.process.pid);
    if (ports.length === 0) return 0;
    const killed = await this.adminSql<{ pid: number }[]>`
      select pg_terminate_backend(pid) as killed, pid
        from pg_stat_activity
       where datname = ${this.database}
         and application_name = 'tidesync-api'
         and client_port = any(${ports}::int[])`;
    this.network.faults.dbKillRounds++;
    return killed.length;
  }

  async stop(): Promise<void> {
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
