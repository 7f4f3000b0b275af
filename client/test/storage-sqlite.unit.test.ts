// SqliteStorage through a real SQLite (better-sqlite3, wrapped to the
// interface expo-sqlite and op-sqlite share): an interrupted write never
// loses an op — neither a statement that fails between the outbox and the
// records, nor a process killed there — and 100,000 records sync and read
// back without the client holding them in memory (figures printed).
// The storage contract itself runs for every adapter in storage.unit.test.ts.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStorage } from "../storage-sqlite.ts";
import { type BetterSqliteDriver, betterSqliteDriver } from "./better-sqlite3-driver.ts";
import { FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const exec = promisify(execFile);
const HERE = path.dirname(new URL(import.meta.url).pathname);

const dirs: string[] = [];
const drivers: BetterSqliteDriver[] = [];
async function dbFile(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "tidesync-sqlite-"));
  dirs.push(dir);
  return path.join(dir, "device.db");
}
function open(file: string, afterRun?: (sql: string) => void): SqliteStorage {
  const driver = betterSqliteDriver(file, { afterRun });
  drivers.push(driver);
  return new SqliteStorage(driver);
}
afterEach(async () => {
  for (const driver of drivers.splice(0)) driver.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Runs a TypeScript child process with Node; resolves with how it ended. */
async function runChild(script: string, args: string[], nodeFlags: string[] = []) {
  try {
    const { stdout } = await exec(process.execPath, [...nodeFlags, "--import", "tsx", path.join(HERE, script), ...args], { maxBuffer: 1 << 20 });
    return { code: 0, signal: null, stdout };
  } catch (error) {
    const failed = error as { code?: number; signal?: string; stdout?: string; stderr?: string };
    return { code: failed.code ?? null, signal: failed.signal ?? null, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe("SqliteStorage: an interrupted write never loses an op", () => {
  it("a statement failing between the outbox and the records rolls the whole answer back; the op is resent with its op_id and applied once", async () => {
    const file = await dbFile();
    const server = new FakeServer();
    let failNext = false;
    const storage = open(file, (sql) => {
      if (failNext && sql.startsWith("delete from tidesync_outbox")) {
        failNext = false;
        throw new Error("disk I/O error (injected)");
      }
    });
    const { client } = await openClient(server, { storage });
    const id = await client.create("tasks", { list_id: LIST_ID, title: "Milk" });
    const [queued] = client.pendingOps();
    failNext = true;
    await expect(client.sync()).rejects.toThrow(/injected/);
    // The server applied the op; the device did not store the answer, and lost nothing.
    expect(server.records.get(`tasks/${id}`)?.data).toEqual({ list_id: LIST_ID, title: "Milk" });
    const reopened = open(file);
    const state = await reopened.loadState();
    expect(state.outbox).toEqual([{ ...queued, sent: true }]);
    expect(await reopened.getRecords([{ collection: "tasks", id }])).toEqual([]);

    // After a restart the op goes again with the same op_id: a duplicate, and the record arrives.
    const restarted = await openClient(server, { storage: reopened, idPrefix: 2 });
    const report = await restarted.client.sync();
    expect(report).toMatchObject({ duplicates: 1, applied: 1 });
    expect(server.batches().map((b) => b.ops.map((op) => op.op_id))).toEqual([[queued.op.op_id], [queued.op.op_id]]);
    expect(restarted.client.pendingOps()).toEqual([]);
    expect(await restarted.client.get("tasks", id)).toMatchObject({ pending: false, version: 1, data: { title: "Milk" } });
  });

  it("a process killed (SIGKILL) between the outbox and the records statements leaves the sent op in the outbox", async () => {
    const file = await dbFile();
    const child = await runChild("sqlite-crash-child.ts", [file]);
    expect(child.signal, child.stderr).toBe("SIGKILL");
    const storage = open(file);
    expect(storage).toBeDefined();
    const [integrity] = drivers.at(-1)!.raw.pragma("integrity_check") as { integrity_check: string }[];
    expect(integrity.integrity_check).toBe("ok");
    const state = await storage.loadState();
    expect(state.outbox).toHaveLength(1);
    expect(state.outbox[0]).toMatchObject({ sent: true, op: { type: "upsert", data: { title: "survives a crash" } } });
    // Neither half of the answer was kept: no record either.
    expect(await storage.listRecords(null, null, 10)).toEqual([]);
  });
});

describe("SqliteStorage: 100,000 records", () => {
  it("a full sync of 100,000 records, a reopen and a read of all of them keep the live heap far below the records' size", { timeout: 240_000 }, async () => {
    const file = await dbFile();
    const child = await runChild("sqlite-100k-child.ts", [file, "100000"], ["--expose-gc"]);
    expect(child.code, child.stderr).toBe(0);
    const figures = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as {
      records: number; pulled: number; listed: number; records_json_mb: number; db_file_mb: number;
      heap_above_baseline_mb: { peak_during_sync: number; after_sync: number; after_reopen: number; after_paging_through_all: number };
    };
    console.log(`sqlite 100k: ${JSON.stringify(figures)}`);
    expect([figures.pulled, figures.listed]).toEqual([100_000, 100_000]);
    // Holding the records would take more than their JSON size; a page at a time takes a sliver of it.
    const bound = figures.records_json_mb / 5;
    for (const [when, mb] of Object.entries(figures.heap_above_baseline_mb)) expect(mb, when).toBeLessThan(bound);
  });
});
