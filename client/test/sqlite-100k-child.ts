// Child process of storage-sqlite.unit.test.ts (run with --expose-gc): a new
// device pulls 100,000 records (a full sync, pages of 1,000) into a SQLite
// file through TidesyncClient, then a fresh client opens the file and reads
// them page by page. Prints one JSON line of memory figures: the live heap
// (after a full GC) above the baseline, sampled after every page the client
// stores, after the sync, after reopening, and after paging through all.
// Usage: node --expose-gc --import tsx client/test/sqlite-100k-child.ts <db file> <count>
import { statSync } from "node:fs";
import type { ServerRecord } from "../../functions/_shared/merge.ts";
import { SqliteStorage } from "../storage-sqlite.ts";
import type { StorageChange, SyncStorage } from "../storage.ts";
import { betterSqliteDriver } from "./better-sqlite3-driver.ts";
import { FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const [file, countText] = process.argv.slice(2);
const count = Number(countText);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const liveHeap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};
const MB = 1024 * 1024;

const server = new FakeServer();
const now = "2026-11-22T10:00:00.000000Z";
let jsonBytes = 0;
for (let i = 1; i <= count; i++) {
  const id = `00000000-0000-4000-a000-${String(i).padStart(12, "0")}`;
  const record: ServerRecord = {
    collection: "tasks", id, version: i, deleted: false,
    data: { list_id: LIST_ID, title: `task ${i}`, notes: "two litres, the organic one if they have it", done: i % 3 === 0 },
    field_versions: {}, created_at: now, updated_at: now, deleted_at: null,
  };
  server.records.set(`tasks/${id}`, record);
  jsonBytes += JSON.stringify(record).length;
}
server.seq = count;

const base = liveHeap();
let peak = 0;
const sqlite = new SqliteStorage(betterSqliteDriver(file));
// Samples the live heap after each change the client stores (every page of the pull).
const measured: SyncStorage = Object.assign(Object.create(sqlite) as SyncStorage, {
  async apply(change: StorageChange) {
    await sqlite.apply(change);
    peak = Math.max(peak, liveHeap() - base);
  },
});
const first = await openClient(server, { storage: measured, pullLimit: 1000, validate: false });
const report = await first.client.sync();
const afterSync = liveHeap() - base;

const reopened = await openClient(server, { storage: new SqliteStorage(betterSqliteDriver(file)), idPrefix: 2 });
const afterReopen = liveHeap() - base;
let listed = 0;
await reopened.client.list("tasks", (page) => {
  listed += page.length;
}, 1000);
const afterList = liveHeap() - base;

console.log(JSON.stringify({
  records: count,
  pulled: report.pulled,
  listed,
  records_json_mb: +(jsonBytes / MB).toFixed(1),
  db_file_mb: +(statSync(file).size / MB).toFixed(1),
  heap_above_baseline_mb: {
    peak_during_sync: +(peak / MB).toFixed(1),
    after_sync: +(afterSync / MB).toFixed(1),
    after_reopen: +(afterReopen / MB).toFixed(1),
    after_paging_through_all: +(afterList / MB).toFixed(1),
  },
}));
