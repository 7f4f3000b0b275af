// The storage adapters: the same contract for memory and file, plus what
// only the file adapter promises (durable across a restart, atomic writes).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FileStorage } from "../storage-file.ts";
import { SqliteStorage } from "../storage-sqlite.ts";
import { TidesyncStoreWrittenElsewhereError } from "../api-error.ts";
import { MemoryStorage, type PendingOp, type RecordRef, StaleStoreError, type StateMaps, type StorageChange, type StoredState, type SyncStorage, WholeStateStorage } from "../storage.ts";
import { type BetterSqliteDriver, betterSqliteDriver } from "./better-sqlite3-driver.ts";
import { FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "tidesync-client-"));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function op(id: string, title: string): PendingOp {
  return { op: { op_id: id, collection: "tasks", record_id: "00000000-0000-4000-8000-000000000001", type: "upsert", base_version: null, data: { title } }, sent: false, base_data: null };
}
const RECORD = { collection: "tasks", id: "00000000-0000-4000-8000-000000000001", version: 4, deleted: false, data: { title: "x" }, updated_at: "2026-11-22T00:00:00.000Z" };
const SCHEMA = { collections: ["tasks"], collection_schemas: {} };
const OP_A = "00000000-0000-4000-8000-0000000000a0";
const OP_B = "00000000-0000-4000-8000-0000000000b0";
const OP_C = "00000000-0000-4000-8000-0000000000c0";

const drivers: BetterSqliteDriver[] = [];
afterEach(() => {
  for (const driver of drivers.splice(0)) driver.close();
});

const adapters: [string, () => Promise<SyncStorage>][] = [
  ["MemoryStorage", async () => new MemoryStorage()],
  ["FileStorage", async () => new FileStorage(path.join(await tempDir(), "store.json"))],
  ["SqliteStorage (better-sqlite3)", async () => {
    const driver = betterSqliteDriver(path.join(await tempDir(), "store.db"));
    drivers.push(driver);
    return new SqliteStorage(driver);
  }],
];

/** Everything a storage holds, read through the interface the client uses. */
async function everything(storage: SyncStorage) {
  const records = [];
  for (let after: RecordRef | null = null; ;) {
    const page = await storage.listRecords(null, after, 2);
    if (page.length === 0) break;
    records.push(...page);
    after = page.at(-1)!;
  }
  const { revision: _revision, ...state } = await storage.loadState();
  return { ...state, records };
}

const ref = (collection: string, n: number): RecordRef => ({ collection, id: `00000000-0000-4000-8000-00000000000${n}` });
const rec = (r: RecordRef, version = 1) => ({ ...r, version, deleted: false, data: { title: r.id.slice(-1) }, updated_at: "2026-11-22T00:00:00.000Z" });

describe.each(adapters)("%s", (_name, make) => {
  it("starts empty", async () => {
    expect(await everything(await make())).toEqual({ records: [], outbox: [], cursor: null, schema: null });
  });

  it("applies changes: records by key, outbox in order (a replaced op keeps its place), cursor, schema", async () => {
    const storage = await make();
    await storage.apply({ putOps: [op(OP_A, "a"), op(OP_B, "b"), op(OP_C, "c")], putRecords: [RECORD], cursor: "c1" });
    await storage.apply({ putOps: [op(OP_A, "a2")], deleteOps: [OP_B], putRecords: [{ ...RECORD, version: 5 }] });
    const state = await everything(storage);
    expect(state.outbox.map((p) => [p.op.op_id, p.op.data?.title])).toEqual([[OP_A, "a2"], [OP_C, "c"]]);
    expect(state.records).toEqual([{ ...RECORD, version: 5 }]);
    expect(state.cursor).toBe("c1");
    await storage.apply({ cursor: null });
    expect((await storage.loadState()).cursor).toBeNull();
    await storage.apply({ deleteRecords: [{ collection: "tasks", id: RECORD.id }], schema: SCHEMA });
    expect(await everything(storage)).toMatchObject({ records: [], schema: SCHEMA });
  });

  it("reads records by key and pages through them in (collection, id) order, per collection or all", async () => {
    const storage = await make();
    const refs = [ref("tasks", 3), ref("lists", 2), ref("tasks", 1), ref("lists", 4), ref("tasks", 5)];
    await storage.apply({ putRecords: refs.map((r) => rec(r)) });
    const byKey = await storage.getRecords([ref("tasks", 1), ref("lists", 4), ref("tasks", 9), ref("tasks", 1)]);
    expect(byKey.map((r) => `${r.collection}/${r.id.slice(-1)}`).sort()).toEqual(["lists/4", "tasks/1"]);
    expect((await storage.listRecords("tasks", null, 2)).map((r) => r.id.slice(-1))).toEqual(["1", "3"]);
    expect((await storage.listRecords("tasks", ref("tasks", 3), 2)).map((r) => r.id.slice(-1))).toEqual(["5"]);
    expect((await everything(storage)).records.map((r) => `${r.collection}/${r.id.slice(-1)}`)).toEqual(["lists/2", "lists/4", "tasks/1", "tasks/3", "tasks/5"]);
  });

  it("tells which records a full sync did not list: marks since beginReset, per collection scope", async () => {
    const storage = await make();
    await storage.apply({ putRecords: [rec(ref("tasks", 1)), rec(ref("tasks", 2)), rec(ref("lists", 3))] });
    // Page 1 of a full sync: lists task 1 and brings a new task 4.
    await storage.apply({ beginReset: true, putRecords: [rec(ref("tasks", 4))], markListed: [ref("tasks", 1), ref("tasks", 4)] });
    const unlisted = async (collections: string[] | null) => (await storage.unlistedRecords(collections, 10)).map((r) => `${r.collection}/${r.id.slice(-1)}`).sort();
    expect(await unlisted(null)).toEqual(["lists/3", "tasks/2"]);
    expect(await unlisted(["tasks"])).toEqual(["tasks/2"]);
    expect(await storage.unlistedRecords(null, 1)).toHaveLength(1);
    // A new full sync forgets the marks of the last one.
    await storage.apply({ beginReset: true, markListed: [ref("tasks", 2)] });
    expect(await unlisted(null)).toEqual(["lists/3", "tasks/1", "tasks/4"]);
  });

  it("applies a pull's change only where the pull still stands (ifPull: the cursor, or the running full sync and its cursor)", async () => {
    const storage = await make();
    await storage.apply({ cursor: "c1" });
    // A page requested with an older cursor: refused whole, the cursor does not move back.
    await expect(storage.apply({ ifPull: { cursor: "c0", reset: null }, cursor: "c0b", putRecords: [RECORD] })).rejects.toBeInstanceOf(StaleStoreError);
    expect(await everything(storage)).toMatchObject({ cursor: "c1", records: [] });
    // A full sync begins from c1 and keeps its id and next cursor beside its marks.
    await storage.apply({ ifPull: { cursor: "c1", reset: null }, beginReset: true, reset: { id: "r1", cursor: "p1" }, markListed: [] });
    expect((await storage.loadState()).reset).toEqual({ id: "r1", cursor: "p1" });
    // Another full sync began since (r2): r1's marks and its end are refused.
    await storage.apply({ beginReset: true, reset: { id: "r2", cursor: "q1" } });
    await expect(storage.apply({ ifPull: { cursor: "p1", reset: "r1" }, reset: null, cursor: "p1" })).rejects.toBeInstanceOf(StaleStoreError);
    await storage.apply({ ifPull: { cursor: "q1", reset: "r2" }, reset: null, cursor: "q1" });
    const { reset, cursor } = await storage.loadState();
    expect({ reset, cursor }).toEqual({ reset: undefined, cursor: "q1" });
  });

  it("keeps the collections filter of the pull's cursors: absent until set, then a list or null (none), also across a reopen", async () => {
    const storage = await make();
    expect("pullCollections" in (await storage.loadState())).toBe(false);
    await storage.apply({ cursor: "c1", pullCollections: ["tasks"] });
    expect((await storage.loadState()).pullCollections).toEqual(["tasks"]);
    await storage.apply({ cursor: null });
    expect((await storage.loadState()).pullCollections).toEqual(["tasks"]);
    await storage.apply({ pullCollections: null });
    expect((await storage.loadState()).pullCollections).toBeNull();
  });

  it("keeps the owner and its account: absent until set", async () => {
    const storage = await make();
    expect(await storage.loadState()).not.toHaveProperty("ownerAccount");
    await storage.apply({ owner: "00000000-0000-4000-8000-0000000a11ce", ownerAccount: "2026-11-28T00:00:00.123456Z" });
    expect(await storage.loadState()).toMatchObject({ owner: "00000000-0000-4000-8000-0000000a11ce", ownerAccount: "2026-11-28T00:00:00.123456Z" });
  });

  it("hands out copies: mutating what a read returned changes nothing stored", async () => {
    const storage = await make();
    await storage.apply({ putRecords: [RECORD] });
    const [record] = await storage.getRecords([RECORD]);
    (record.data as Record<string, unknown>).title = "mutated";
    expect((await storage.getRecords([RECORD]))[0].data).toEqual({ title: "x" });
  });
});

/** Each store, and how the app opens it again (a restart: a new instance on the same data). */
const reopenable: [string, () => Promise<() => SyncStorage>][] = [
  ["MemoryStorage", async () => {
    const storage = new MemoryStorage();
    return () => storage;
  }],
  ["FileStorage", async () => {
    const file = path.join(await tempDir(), "store.json");
    return () => new FileStorage(file);
  }],
  ["SqliteStorage (better-sqlite3)", async () => {
    const driver = betterSqliteDriver(path.join(await tempDir(), "store.db"));
    drivers.push(driver);
    return () => new SqliteStorage(driver, { tablePrefix: "app_" });
  }],
];

describe.each(reopenable)("%s destroy()", (_name, place) => {
  it("deletes the store: opened again it is empty, bound to no user, and binds to the next one", async () => {
    const open = await place();
    const storage = open();
    await storage.apply({ owner: "00000000-0000-4000-8000-0000000a11ce", ownerAccount: "2026-01-01T00:00:00.000000Z", putOps: [op(OP_A, "a")], putRecords: [RECORD], cursor: "c1", schema: SCHEMA });
    await storage.destroy!();
    const again = open();
    expect(await everything(again)).toEqual({ records: [], outbox: [], cursor: null, schema: null });
    await again.apply({ owner: "00000000-0000-4000-8000-0000000a11ce", ownerAccount: "2026-02-01T00:00:00.000000Z" });
    expect(await again.loadState()).toMatchObject({ owner: "00000000-0000-4000-8000-0000000a11ce", ownerAccount: "2026-02-01T00:00:00.000000Z", outbox: [] });
  });
});

describe("FileStorage", () => {
  it("survives a restart: a new instance on the same file sees everything", async () => {
    const file = path.join(await tempDir(), "store.json");
    const before = new FileStorage(file);
    await before.apply({ putOps: [op(OP_A, "a")], putRecords: [RECORD], cursor: "c9" });
    await before.close();
    expect(await new FileStorage(file).load()).toEqual({ records: [RECORD], outbox: [op(OP_A, "a")], cursor: "c9", schema: null });
  });

  it("keeps the owner's account across a restart", async () => {
    const file = path.join(await tempDir(), "store.json");
    const before = new FileStorage(file);
    await before.apply({ owner: "00000000-0000-4000-8000-0000000a11ce", ownerAccount: "2026-11-28T00:00:00.123456Z" });
    await before.close();
    const after = new FileStorage(file);
    expect((await after.loadState()).ownerAccount).toBe("2026-11-28T00:00:00.123456Z");
    await after.close();
  });

  it("keeps the pull's collections filter across a restart", async () => {
    const file = path.join(await tempDir(), "store.json");
    const before = new FileStorage(file);
    await before.apply({ cursor: "c9", pullCollections: ["lists", "tasks"] });
    await before.close();
    expect((await new FileStorage(file).loadState()).pullCollections).toEqual(["lists", "tasks"]);
  });

  it("writes through a temp file and rename, leaving no temp file behind", async () => {
    const dir = await tempDir();
    const storage = new FileStorage(path.join(dir, "store.json"));
    await Promise.all([storage.apply({ putOps: [op(OP_A, "a")] }), storage.apply({ putOps: [op(OP_B, "b")] })]);
    await storage.close();
    expect(await readdir(dir)).toEqual(["store.json"]);
    expect(JSON.parse(await readFile(path.join(dir, "store.json"), "utf8")).outbox).toHaveLength(2);
  });

  it("ignores a torn temp file from a crash before its rename", async () => {
    const dir = await tempDir();
    const file = path.join(dir, "store.json");
    const before = new FileStorage(file);
    await before.apply({ cursor: "good" });
    await before.close();
    await writeFile(path.join(dir, ".store.json.tmp"), '{"format":1,"records":[{"trunc');
    const after = new FileStorage(file);
    expect((await after.load()).cursor).toBe("good");
    await after.close();
    expect(await readdir(dir)).toEqual(["store.json"]);
  });

  it("keeps a sent op across an app restart and resends it with the same op_id", async () => {
    const file = path.join(await tempDir(), "store.json");
    const server = new FakeServer();
    // The connection drops during the push (after the first sync learned the collections).
    server.script = (request) => {
      if (request.path === "/v1/sync/batch") throw new TypeError("offline");
      return undefined;
    };
    const firstStorage = new FileStorage(file);
    const first = await openClient(server, { storage: firstStorage, backoff: { baseMs: 1, maxMs: 1, maxAttempts: 1 } });
    const id = await first.client.create("tasks", { title: "survives" });
    await expect(first.client.sync()).rejects.toMatchObject({ code: "NETWORK" });
    const sentOpId = server.batches()[0].ops[0].op_id;
    await firstStorage.close(); // the app quits

    server.script = null;
    const secondStorage = new FileStorage(file);
    const second = await openClient(server, { storage: secondStorage, idPrefix: 2 });
    expect(second.client.status.pending).toBe(1);
    expect((await second.client.get("tasks", id))?.data).toEqual({ title: "survives" });
    await second.client.sync();
    expect(server.batches().at(-1)?.ops[0].op_id).toBe(sentOpId);
    expect(server.records.get(`tasks/${id}`)?.data).toEqual({ title: "survives" });
    await secondStorage.close();
    expect((await new FileStorage(file).load()).outbox).toEqual([]);
  });

  it("destroy() is refused, nothing deleted, while another instance holds the file; once that one is closed it deletes it", async () => {
    const file = path.join(await tempDir(), "store.json");
    const first = new FileStorage(file);
    await first.apply({ putRecords: [RECORD] });
    const second = new FileStorage(file);
    await expect(second.destroy()).rejects.toThrow(/in use by another FileStorage of this process/);
    expect((await first.getRecords([RECORD]))).toHaveLength(1);
    await first.close();
    await second.destroy();
    expect(await readdir(path.dirname(file))).toEqual([]);
  });

  it("refuses a second instance on the file while the first is open, which would overwrite its writes", async () => {
    const file = path.join(await tempDir(), "store.json");
    const server = new FakeServer();
    const storage = new FileStorage(file);
    const app = await openClient(server, { storage });
    await expect(openClient(server, { storage: new FileStorage(file), idPrefix: 2 })).rejects.toThrow(/in use by another FileStorage of this process.*close\(\) the other first/);
    // Another process's lock: refused while it lives, taken over once it is gone.
    const other = new FileStorage(path.join(path.dirname(file), "other.json"));
    await writeFile(`${other.filePath}.lock`, String(process.ppid));
    await expect(other.load()).rejects.toThrow(`in use by process ${process.ppid}`);
    const gone = new FileStorage(path.join(path.dirname(file), "gone.json"));
    await writeFile(`${gone.filePath}.lock`, "2147483646");
    expect((await gone.load()).outbox).toEqual([]);
    await gone.close();

    await app.client.create("tasks", { title: "written by the app" });
    await storage.close();
    const reopened = await openClient(server, { storage: new FileStorage(file), idPrefix: 2 });
    expect(reopened.client.pendingOps().map((p) => p.op.data?.title)).toEqual(["written by the app"]);
  });

  it("a lock naming this process's pid that this process did not take was left by an earlier process with that pid: taken over", async () => {
    // A container's entrypoint has the same pid at every start: the previous run, SIGKILLed or
    // OOM-killed while it held the store, left a lock naming the pid this process now has.
    const file = path.join(await tempDir(), "store.json");
    await writeFile(`${file}.lock`, String(process.pid));
    const storage = new FileStorage(file);
    expect((await storage.loadState()).outbox).toEqual([]);
    await expect(new FileStorage(file).loadState()).rejects.toThrow(/in use by another FileStorage of this process/);
    await storage.close();
  });

  it("another process's lock holds while that process runs, not once it is killed, nor when its pid is another process's (Linux)", async () => {
    const file = path.join(await tempDir(), "store.json");
    const child = spawn(process.execPath, ["--import", "tsx", path.join(path.dirname(new URL(import.meta.url).pathname), "file-lock-child.ts"), file], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const [line] = await once(child.stdout!, "data");
      expect(String(line)).toBe("opened\n");
      await expect(new FileStorage(file).loadState()).rejects.toThrow(`in use by process ${child.pid}`);
      const written = (await readFile(`${file}.lock`, "utf8")).split(" ");
      expect(written[0]).toBe(String(child.pid));
      if (process.platform === "linux") {
        // The same pid with another start time: a process that reuses the pid of the one that wrote the lock.
        await writeFile(`${file}.lock`, `${child.pid} ${Number(written[1]) + 1}`);
        const storage = new FileStorage(file);
        await storage.loadState();
        await storage.close();
        await writeFile(`${file}.lock`, written.join(" "));
        await expect(new FileStorage(file).loadState()).rejects.toThrow(`in use by process ${child.pid}`);
      }
    } finally {
      child.kill("SIGKILL");
    }
    await once(child, "exit");
    const storage = new FileStorage(file);
    expect((await storage.loadState()).outbox).toEqual([]);
    await storage.close();
  }, 30_000);
});

/** An app's own whole-state store, as client/README.md suggests (IndexedDB, AsyncStorage): here one key of a Map that every instance shares. */
class SharedMapStorage extends WholeStateStorage {
  constructor(private readonly shared: Map<string, string>) {
    super();
  }

  protected async read(): Promise<StoredState> {
    const text = this.shared.get("tidesync");
    return text ? (JSON.parse(text) as StoredState) : { records: [], outbox: [], cursor: null, schema: null };
  }

  protected async persist(next: StateMaps): Promise<void> {
    this.shared.set("tidesync", JSON.stringify(next.toState()));
  }
}

/**
 * An app's own store that saves only the parts a change touched (one key each, as an IndexedDB store
 * of several object stores would), `change.stamp` included, unless told not to (a store that forgets it).
 */
class ChangedPartsStorage extends WholeStateStorage {
  constructor(private readonly shared: Map<string, string>, private readonly options = { saveStamp: true }) {
    super();
  }

  protected async read(): Promise<StoredState> {
    const part = <T>(key: string, empty: T): T => (this.shared.has(key) ? (JSON.parse(this.shared.get(key)!) as T) : empty);
    const stamp = part<string | undefined>("stamp", undefined);
    return { records: part("records", []), outbox: part("outbox", []), cursor: part("cursor", null), schema: part("schema", null), owner: part("owner", null), ...(stamp ? { stamp } : {}) };
  }

  protected async persist(next: StateMaps, change: StorageChange): Promise<void> {
    const state = next.toState();
    if (change.putRecords || change.deleteRecords) this.shared.set("records", JSON.stringify(state.records));
    if (change.putOps || change.deleteOps) this.shared.set("outbox", JSON.stringify(state.outbox));
    if (change.cursor !== undefined) this.shared.set("cursor", JSON.stringify(state.cursor));
    if (change.schema !== undefined) this.shared.set("schema", JSON.stringify(state.schema));
    if (change.owner !== undefined) this.shared.set("owner", JSON.stringify(state.owner));
    if (this.options.saveStamp && change.stamp !== undefined) this.shared.set("stamp", JSON.stringify(change.stamp));
  }
}

describe("a WholeStateStorage opened twice (two browser tabs on one IndexedDB)", () => {
  it("the instance that did not read the other's write refuses to overwrite it, and says so; opened again, it goes on", async () => {
    const shared = new Map<string, string>();
    const server = new FakeServer();
    const tabA = await openClient(server, { storage: new SharedMapStorage(shared), idPrefix: 1 });
    const tabB = await openClient(server, { storage: new SharedMapStorage(shared), idPrefix: 2 });
    await tabA.client.create("tasks", { title: "from A" });
    // B's state predates A's write: writing it whole would drop A's queued task.
    await expect(tabB.client.create("tasks", { title: "from B" })).rejects.toBeInstanceOf(TidesyncStoreWrittenElsewhereError);
    await expect(tabB.client.sync()).rejects.toMatchObject({ code: "STORE_WRITTEN_ELSEWHERE" });
    expect(tabB.client.status).toMatchObject({ state: "error", lastErrorCode: "STORE_WRITTEN_ELSEWHERE" });
    expect(server.batches()).toEqual([]);
    await tabA.client.create("tasks", { title: "from A, again" });
    const stored = () => (JSON.parse(shared.get("tidesync")!) as StoredState).outbox.map((p) => p.op.data?.title);
    expect(stored()).toEqual(["from A", "from A, again"]);
    // B opened again reads A's writes; from then on A is the one refused.
    const reopened = await openClient(server, { storage: new SharedMapStorage(shared), idPrefix: 3 });
    await reopened.client.create("tasks", { title: "from B" });
    expect(stored()).toEqual(["from A", "from A, again", "from B"]);
    await expect(tabA.client.create("tasks", { title: "lost?" })).rejects.toMatchObject({ code: "STORE_WRITTEN_ELSEWHERE" });
    await reopened.client.sync();
    expect([...server.records.values()].map((record) => record.data?.title).sort()).toEqual(["from A", "from A, again", "from B"]);
  });

  it("a store that saves only what changed (persist's `change`) saves the stamp the change carries: its writes go on, another instance's are refused", async () => {
    const shared = new Map<string, string>();
    const server = new FakeServer();
    const app = await openClient(server, { storage: new ChangedPartsStorage(shared), idPrefix: 1 });
    await app.client.create("tasks", { list_id: LIST_ID, title: "one" });
    await app.client.create("tasks", { list_id: LIST_ID, title: "two" });
    await app.client.sync();
    await app.client.create("tasks", { list_id: LIST_ID, title: "three" });
    expect([...server.records.values()].map((record) => record.data?.title).sort()).toEqual(["one", "two"]);
    expect(JSON.parse(shared.get("outbox")!).map((p: PendingOp) => p.op.data?.title)).toEqual(["three"]);
    const other = await openClient(server, { storage: new ChangedPartsStorage(shared), idPrefix: 2 });
    await app.client.create("tasks", { list_id: LIST_ID, title: "four" });
    await expect(other.client.create("tasks", { list_id: LIST_ID, title: "from the other" })).rejects.toBeInstanceOf(TidesyncStoreWrittenElsewhereError);
  });

  it("a store whose persist never saves the stamp is refused at its second write with an error that says so", async () => {
    const storage = new ChangedPartsStorage(new Map(), { saveStamp: false });
    await storage.apply({ cursor: "c1" });
    const refused = storage.apply({ cursor: "c2" });
    await expect(refused).rejects.toBeInstanceOf(TidesyncStoreWrittenElsewhereError);
    await expect(refused).rejects.toThrow(/stamp/);
  });

  it("stores with one writer by construction write no stamp (MemoryStorage; FileStorage, which locks its file)", async () => {
    const fileStorage = new FileStorage(path.join(await tempDir(), "store.json"));
    for (const storage of [new MemoryStorage(), fileStorage]) {
      await storage.apply({ cursor: "c1" });
      await storage.apply({ cursor: "c2" });
      expect(await storage.load()).toEqual({ records: [], outbox: [], cursor: "c2", schema: null });
    }
    await fileStorage.close();
  });
});
