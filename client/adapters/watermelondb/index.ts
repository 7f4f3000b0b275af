// WatermelonDB ↔ tidesync: `pullChanges` and `pushChanges` for Watermelon's
// `synchronize()`, with what the obvious mapping gets wrong done right
// (client/README.md shows the setup; docs/sync.md is the protocol):
// - Watermelon's push is all-or-nothing and forgets what it sent. Here the
//   ops go into a durable outbox (Watermelon's local storage) before they
//   leave, a retry re-sends the same op_ids, and every op gets its own answer:
//   a conflict is rebased, a rejected op is surfaced (event) and its record
//   put back to the server's state, a record the user cannot see leaves.
//   The local database is corrected by a second `synchronize()` whose pull
//   carries those records, so Watermelon applies them like any remote change.
//   A push cut short after some batches were answered leaves every record
//   dirty: the answered ops stand for those changes (not sent, nor told,
//   again), and their corrections come with the push that completes it.
// - The base of an edit is the record's server version column as it was when
//   the edit began: a remote change pulled into a record with unpushed
//   changes keeps the old version (conflictResolver below), so a same-field
//   edit of another device meanwhile is a conflict, not silently overwritten.
// - Watermelon pulls before it pushes, and its pull destroys a record it is
//   told is gone (a removal, or one a `replacement` pull does not list) with
//   any unpushed change of it. A record with local changes is kept out of
//   that: the push after the pull sends them, and the server's answer (a
//   conflict with the tombstone, or NOT_FOUND) reports what is lost, as the
//   core client's push-then-pull does; its correction removes the record.
// - Watermelon pulls before it pushes and keeps no push answer, so a row's
//   version is that of the last pull that found it clean: none yet for a
//   record created here, and for one edited here while a pull brought another
//   device's change, the version before that change (the edit's base, above),
//   even after the edit is applied on top of it. The version an upsert of
//   this device got is kept (in Watermelon's local storage) until the row's
//   version reaches it, when the answer's record is what the row showed as it
//   was pushed (in every field a change may send): a later edit or delete is
//   based on the newer of the two, the version of what the row shows (else it
//   answers conflict with the change the user saw), and a delete is sent, not
//   taken for that of a record never sent. A record holding more than the row
//   shows (another device's change that landed between the pull and the
//   push, a field a conflict left to the server) is a correction instead: a
//   base covering that change would let the next edit overwrite it unseen.
//   So is one answered with the version already kept, nothing written since:
//   an app killed before Watermelon marked the push synced sends the change
//   again, and no pull lists the record again for the row's version.
// - Watermelon hands over each table's changes, not the order they were made
//   in: upserts go parents first, then deletes children first (core/op-order.ts).
// - `410 RESYNC_REQUIRED` / `400 INVALID_CURSOR`: a full sync with
//   Watermelon's `replacement` strategy, which drops the synced local records
//   the server no longer lists (records with local changes: see above).
// - The database belongs to the user whose token its first sync went out with:
//   a request under another user's token is refused unsent
//   (TidesyncStoreOwnerError, core/owner-guard.ts), so a sync still running
//   when the user switches stops with their unsent writes still queued, and
//   never pulls the next user's data into it. close() stops a sync on sign-out.
// The pull cursor is ours (Watermelon's numeric lastPulledAt only says
// whether the database has synced before).
import { type Database, Q } from "@nozbe/watermelondb";
import { synchronize } from "@nozbe/watermelondb/sync";
import type { DirtyRaw } from "@nozbe/watermelondb/RawRecord";
import type { SyncPullResult, SyncPushArgs, SyncTableChangeSet } from "@nozbe/watermelondb/sync";
import type { SyncRecord } from "../../../functions/_shared/schemas/sync.ts";
import type { TidesyncApi } from "../../api-client.ts";
import { TidesyncAbortedError } from "../../api-error.ts";
import { pullLimitOf } from "../../batching.ts";
import type { RecordData } from "../../storage.ts";
import type { KeyValueStore } from "../core/key-value.ts";
import { type AdapterOptions, opIds } from "../core/options.ts";
import { orderOps } from "../core/op-order.ts";
import { type LocalChange, planOps, unsendableId } from "../core/plan-ops.ts";
import { pullPage } from "../core/pull-page.ts";
import { callListener } from "../../listeners.ts";
import { jsonEqual } from "../../rebase.ts";
import { type AppliedUpsert, type Correction, pushedOps, pushOps, unansweredOps } from "../core/push-ops.ts";
import type { RetryOptions } from "../../retry.ts";
import { ownerGuarded } from "../core/owner-guard.ts";
import { loadServerMeta, type ServerMeta } from "../core/server-meta.ts";

const CURSOR_KEY = "tidesync.cursor";
const CORRECTIONS_KEY = "tidesync.corrections";
/**
 * The versions the server gave this device's upserts whose records the rows showed, by "table/id",
 * until the row holds one as new (the key is from when it held creates' only: a database's stored
 * versions stay in use).
 */
const APPLIED_KEY = "tidesync.created_versions";
/** Watermelon's own columns, never sent. */
const LOCAL_COLUMNS = new Set(["id", "_status", "_changed"]);
/** A full sync replaces only the records without local changes (the others' changes go up first). */
const SYNCED_ONLY = () => [Q.where("_status", "synced")];

/** Watermelon's pull strategy (its types do not declare it yet). */
interface ReplacementStrategy {
  default: "replacement";
  override: Record<string, never>;
  experimentalQueryRecordsForReplacement: Record<string, () => Q.Where[]>;
}

export interface WatermelonSyncOptions extends AdapterOptions {
  database: Database;
  /**
   * Synced tables, named as the server's collections, parents first (a
   * membership table such as list_members right after its lists): upserts are
   * sent in this order, then deletes in the reverse one (core/op-order.ts).
   */
  tables: readonly string[];
  /** The number column each synced table keeps the record's server version in. Default `server_version`. */
  versionColumn?: string;
  /**
   * Server fields stored under another column name, per table, e.g.
   * `{ tasks: { created_at: "server_created_at" } }` (Watermelon reserves
   * `created_at`/`updated_at` for its own number timestamps).
   */
  columns?: Record<string, Record<string, string>>;
  /** Changes per pulled page (default: the server's default), at most the server's max_pull_limit. */
  pullLimit?: number;
}

export interface WatermelonSyncReport {
  pulled: number;
  applied: number;
  duplicates: number;
  conflicts: number;
  rejected: number;
  /** A cursor was given up (410 / INVALID_CURSOR) and a full sync with `replacement` ran. */
  resynced: boolean;
}

/** Watermelon's local storage as the adapters' key-value store. */
function localStore(database: Database): KeyValueStore {
  return {
    get: async <T>(key: string) => (await database.localStorage.get(key)) as T | undefined,
    set: (key, value) => database.localStorage.set(key, value as never),
  };
}

export class WatermelonTidesync {
  private readonly store: KeyValueStore;
  /** Aborted by close(): no request of this adapter is sent after it. */
  private readonly closing = new AbortController();
  /** The app's API, guarded: each request checks the database's owner first, and close() cancels them. */
  private readonly api: TidesyncApi;
  private readonly retry: RetryOptions;
  private readonly versionColumn: string;
  private readonly newId: () => string;
  private meta: ServerMeta | null = null;
  /** The cursor of the changes Watermelon applied in this synchronize(), saved once they are. */
  private appliedCursor: string | null = null;
  private report!: WatermelonSyncReport;
  /** The rows as this push found them (Watermelon hands a raw out once: see localRaw). */
  private raws = new Map<string, DirtyRaw | null>();
  /** This push's applied upserts whose answers hold more than the row showed, by "table/id". */
  private unshown = new Map<string, Correction>();
  private running: Promise<WatermelonSyncReport> | null = null;

  constructor(private readonly options: WatermelonSyncOptions) {
    this.store = localStore(options.database);
    ({ api: this.api, retry: this.retry } = ownerGuarded(options, this.store, this.closing.signal));
    this.versionColumn = options.versionColumn ?? "server_version";
    this.newId = opIds(options);
  }

  /** One complete sync: pull, push, and (when answers overrule local records) a second pull that applies them. */
  sync(): Promise<WatermelonSyncReport> {
    if (this.closing.signal.aborted) return Promise.reject(new TidesyncAbortedError());
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * On sign-out, before the token goes: cancels a running sync (no request is sent after this; one
   * under way is abandoned, its ops stay queued and go out again unchanged, and pages a pull had
   * not yet handed to Watermelon are dropped) and resolves once it has ended: the database is then
   * left alone, to keep or delete. Later syncs are refused (TidesyncAbortedError).
   */
  async close(): Promise<void> {
    this.closing.abort();
    await this.running?.catch(() => {});
  }

  private async run(): Promise<WatermelonSyncReport> {
    this.report = { pulled: 0, applied: 0, duplicates: 0, conflicts: 0, rejected: 0, resynced: false };
    this.meta ??= await loadServerMeta(this.api, this.retry, this.options);
    // The second round pulls the records the push's answers overrule (and whatever changed meanwhile).
    for (let round = 0; round < 3; round++) {
      await this.synchronizeOnce();
      if (((await this.store.get<Correction[]>(CORRECTIONS_KEY)) ?? []).length === 0) break;
    }
    return this.report;
  }

  private async synchronizeOnce(): Promise<void> {
    this.appliedCursor = null;
    const corrections = (await this.store.get<Correction[]>(CORRECTIONS_KEY)) ?? [];
    let correctionsApplied = false;
    try {
      await synchronize({
        database: this.options.database,
        sendCreatedAsUpdated: true,
        pullChanges: async ({ lastPulledAt }) => await this.pullChanges(lastPulledAt ?? null, corrections),
        pushChanges: async (args) => await this.pushChanges(args),
        onDidPullChanges: async (rest) => {
          this.appliedCursor = (rest as { cursor?: string }).cursor ?? null;
          correctionsApplied = true;
        },
        conflictResolver: (_table, local, _remote, resolved) => {
          // An unpushed edit keeps the version it began from (its base_version).
          if (local._status !== "synced") resolved[this.versionColumn] = local[this.versionColumn];
          return resolved;
        },
      });
    } finally {
      // Applied: the corrections this pull carried (a push appends after them), dropped before the
      // cursor moves on: a crash in between re-pulls the page (harmless), whereas a cursor saved
      // first would leave them to overrule, at the next pull, a newer version this one applied.
      if (correctionsApplied && corrections.length > 0) {
        const now = (await this.store.get<Correction[]>(CORRECTIONS_KEY)) ?? [];
        await this.store.set(CORRECTIONS_KEY, now.slice(corrections.length));
      }
      // Saved only once Watermelon applied the page: a crash before re-pulls it (harmless).
      if (this.appliedCursor !== null) await this.store.set(CURSOR_KEY, this.appliedCursor);
    }
  }

  // ------------------------------------------------------------------ pull
  private async pullChanges(lastPulledAt: number | null, corrections: readonly Correction[]): Promise<SyncPullResult & { cursor: string; experimentalStrategy?: ReplacementStrategy }> {
    // A database that never synced (or was reset) starts from scratch, whatever cursor is stored.
    let cursor = lastPulledAt === null ? null : ((await this.store.get<string>(CURSOR_KEY)) ?? null);
    const latest = new Map<string, SyncRecord>();
    let full = false;
    const limit = pullLimitOf(this.options.pullLimit, this.meta!.maxPullLimit);
    for (;;) {
      const pulled = await pullPage(this.api, { cursor, collections: this.options.tables, limit }, this.retry);
      // A full sync may start on any page of this pull: the first, or a later one whose cursor was
      // refused (410 / INVALID_CURSOR: purged, aged or rotated between pages). What it lists
      // replaces what the pages before it brought, and it is applied with `replacement` (it lists
      // no removals), else a delete the device missed stays on it for ever.
      if (pulled.full) {
        full = true;
        latest.clear();
      }
      if (pulled.resync) {
        this.report.resynced = true;
        callListener(this.options.onEvent, { type: "resync", reason: pulled.resync });
      }
      this.report.pulled += pulled.page.changes.length;
      for (const change of pulled.page.changes) latest.set(`${change.collection}/${change.id}`, change);
      cursor = pulled.page.cursor;
      if (!pulled.page.has_more) break;
    }
    // Push answers that overrule local records, unless the pull brought something newer (a removal always is).
    for (const correction of corrections) {
      const key = `${correction.collection}/${correction.id}`;
      const pulled = latest.get(key);
      if (pulled && (pulled.deleted || !correction.record || pulled.version > correction.record.version)) continue;
      latest.set(key, correction.record ?? { collection: correction.collection, id: correction.id, version: 0, deleted: true, data: null, updated_at: new Date(0).toISOString() });
    }
    const changes: Record<string, SyncTableChangeSet> = {};
    for (const table of this.options.tables) changes[table] = { created: [], updated: [], deleted: [] };
    for (const record of latest.values()) {
      const set = changes[record.collection];
      if (!set) continue;
      if (record.deleted || record.data === null) {
        if (!full) set.deleted.push(record.id);
      } else {
        set.updated.push(this.toRaw(record));
      }
    }
    // Removals spare records with local changes (the push answers for them); a full sync, through its query.
    for (const [table, set] of Object.entries(changes)) {
      if (set.deleted.length === 0) continue;
      const changed = await this.withLocalChanges(table, set.deleted);
      set.deleted = set.deleted.filter((id) => !changed.has(id));
    }
    return {
      changes,
      // Watermelon wants a growing number; the position that matters is the cursor.
      timestamp: Math.max(Date.now(), (lastPulledAt ?? 0) + 1),
      cursor: cursor!,
      ...(full
        ? {
          experimentalStrategy: {
            default: "replacement" as const,
            override: {},
            experimentalQueryRecordsForReplacement: Object.fromEntries(this.options.tables.map((table) => [table, SYNCED_ONLY])),
          },
        }
        : {}),
    };
  }

  /** Which of these records hold local changes not yet pushed (created, updated or deleted here). */
  private async withLocalChanges(table: string, ids: readonly string[]): Promise<Set<string>> {
    const [changed, deleted] = await Promise.all([
      this.options.database.get(table).query(Q.where("id", Q.oneOf([...ids])), Q.where("_status", Q.notEq("synced"))).fetchIds(),
      this.options.database.adapter.getDeletedRecords(table),
    ]);
    const asked = new Set(ids);
    return new Set([...changed, ...deleted.filter((id) => asked.has(id))]);
  }

  // ------------------------------------------------------------------ push
  private async pushChanges(args: SyncPushArgs): Promise<{ experimentalRejectedIds: Record<string, string[]> }> {
    const changes = args.changes as Record<string, SyncTableChangeSet>;
    this.raws.clear();
    this.unshown.clear();
    const applied = await this.appliedVersions();
    const local: LocalChange[] = [];
    /** Created here, with no version from the server nor from an applied answer (pushOps: no look-up). */
    const neverStored = new Set<string>();
    const unsendable: Record<string, string[]> = {};
    /** Records with an op sent and not yet answered (read once, when a delete first asks). */
    let sent: Set<string> | undefined;
    const wasSent = async (table: string, id: string) =>
      (sent ??= new Set((await unansweredOps(this.store)).map((op) => `${op.collection}/${op.record_id}`))).has(`${table}/${id}`);
    for (const table of this.options.tables) {
      const set = changes[table];
      if (!set) continue;
      for (const raw of [...set.created, ...set.updated]) {
        this.raws.set(`${table}/${raw.id}`, raw);
        if (!this.sendableId({ collection: table, id: raw.id, type: "upsert" }, unsendable)) continue;
        // A create sent again (its row changed while its push was under way: still "created") stays a create.
        const baseVersion = raw._status === "created" ? ((raw[this.versionColumn] as number | null) ?? null) : this.baseVersion(table, raw, applied);
        const creating = raw._status === "created" || baseVersion === null;
        if (raw._status === "created" && baseVersion === null && applied[`${table}/${raw.id}`] === undefined) neverStored.add(`${table}/${raw.id}`);
        const fields = creating
          ? Object.keys(raw).filter((f) => !LOCAL_COLUMNS.has(f) && f !== this.versionColumn)
          : String(raw._changed ?? "").split(",").filter((f) => f !== "" && f !== this.versionColumn);
        const data: RecordData = Object.fromEntries(fields.map((f) => [this.fieldOf(table, f), raw[f]]));
        local.push({ collection: table, id: raw.id, type: "upsert", data: this.meta!.writable.pick(table, data, creating), baseVersion });
      }
      for (const id of set.deleted) {
        if (!this.sendableId({ collection: table, id, type: "delete" }, unsendable)) continue;
        const raw = await this.localRaw(table, id);
        const baseVersion = raw ? this.baseVersion(table, raw, applied) : null;
        // Created and deleted here before it ever reached the server: nothing to tell it.
        if (baseVersion === null && raw?._status === "deleted" && !(await wasSent(table, id))) continue;
        local.push({ collection: table, id, type: "delete", baseVersion });
      }
    }
    // Against the ops already pushed: a push cut short left Watermelon's changes dirty, its answered ones included.
    const newOps = orderOps(planOps(await pushedOps(this.store), local, this.newId), this.options.tables);
    const result = await pushOps({
      api: this.api,
      installationId: this.options.installationId,
      store: this.store,
      retry: this.retry,
      newId: this.newId,
      emit: (event) => this.options.onEvent?.(event),
      bounds: this.meta!.bounds,
      neverStored,
      pullLimit: pullLimitOf(this.options.pullLimit, this.meta!.maxPullLimit),
      onConflict: this.options.onConflict,
      onApplied: async (acknowledged) => await this.keepAppliedVersions(acknowledged),
      keepCorrections: async (pushed) => await this.keepCorrections(pushed),
    }, newOps);
    this.report.applied += result.applied;
    this.report.duplicates += result.duplicates;
    this.report.conflicts += result.conflicts;
    this.report.rejected += result.rejected;
    return { experimentalRejectedIds: unsendable };
  }

  /** Stores what the next pull puts in the rows (pushOps: before the push's answered ops are dropped). */
  private async keepCorrections(pushed: readonly Correction[]): Promise<void> {
    // A record the push corrects itself (conflict, rejection, duplicate) gets that correction: its last answer's record.
    const corrections = new Map(this.unshown);
    for (const correction of pushed) corrections.set(`${correction.collection}/${correction.id}`, correction);
    if (corrections.size === 0) return;
    const stored = (await this.store.get<Correction[]>(CORRECTIONS_KEY)) ?? [];
    await this.store.set(CORRECTIONS_KEY, [...stored, ...corrections.values()]);
    await this.forgetOverruledVersions(pushed);
  }

  /** A server record as Watermelon's raw columns. */
  private toRaw(record: SyncRecord): DirtyRaw {
    const renamed = this.options.columns?.[record.collection] ?? {};
    const raw: DirtyRaw = { id: record.id, [this.versionColumn]: record.version };
    for (const [field, value] of Object.entries(record.data ?? {})) raw[renamed[field] ?? field] = value;
    return raw;
  }

  /** The server field a Watermelon column holds. */
  private fieldOf(table: string, column: string): string {
    const renamed = this.options.columns?.[table] ?? {};
    return Object.entries(renamed).find(([, local]) => local === column)?.[0] ?? column;
  }

  /** A record under an id the server would not return as is stays unsent (and dirty: Watermelon keeps it for later). */
  private sendableId(change: Pick<LocalChange, "collection" | "id" | "type">, unsendable: Record<string, string[]>): boolean {
    const refused = unsendableId(change, this.newId());
    if (!refused) return true;
    (unsendable[change.collection] ??= []).push(change.id);
    callListener(this.options.onEvent, refused);
    return false;
  }

  /** The server version a local change of the record is based on: its row's, or the one this device's last upsert of it wrote, if newer. */
  private baseVersion(table: string, raw: DirtyRaw, applied: Readonly<Record<string, number>>): number | null {
    const row = (raw[this.versionColumn] as number | null | undefined) ?? null;
    const written = applied[`${table}/${raw.id}`] ?? null;
    return row === null || written === null ? (row ?? written) : Math.max(row, written);
  }

  /** The versions this device's upserts got, without those a record's row has reached (or whose record is gone). */
  private async appliedVersions(): Promise<Record<string, number>> {
    const stored = (await this.store.get<Record<string, number>>(APPLIED_KEY)) ?? {};
    const kept: Record<string, number> = {};
    for (const [key, version] of Object.entries(stored)) {
      const [table, id] = key.split("/");
      const raw = await this.localRaw(table, id);
      const row = raw?.[this.versionColumn] as number | null | undefined;
      if (raw && (row == null || row < version)) kept[key] = version;
    }
    if (Object.keys(kept).length !== Object.keys(stored).length) await this.store.set(APPLIED_KEY, kept);
    return kept;
  }

  /**
   * A correction puts the server's record in the row at the next pull: one gone, or at a version
   * below the one this device's upsert got (a restore undid that write), overrules the kept
   * version, which would base every later change on a version the server no longer has
   * (refused ahead_of_server, again and again).
   */
  private async forgetOverruledVersions(corrections: readonly Correction[]): Promise<void> {
    const stored = (await this.store.get<Record<string, number>>(APPLIED_KEY)) ?? {};
    let changed = false;
    for (const { collection, id, record } of corrections) {
      const key = `${collection}/${id}`;
      if (stored[key] !== undefined && (record === null || record.version < stored[key])) {
        delete stored[key];
        changed = true;
      }
    }
    if (changed) await this.store.set(APPLIED_KEY, stored);
  }

  /**
   * Keeps the version of each applied upsert whose record the row showed as this push found it; the
   * others' records go in the row at the next pull (corrections), and until then the row's version,
   * or one kept before, stays the base.
   */
  private async keepAppliedVersions(applied: readonly AppliedUpsert[]): Promise<void> {
    const stored = (await this.store.get<Record<string, number>>(APPLIED_KEY)) ?? {};
    for (const { collection, id, record } of applied) {
      const key = `${collection}/${id}`;
      const raw = await this.localRaw(collection, id);
      // Gone here, or there since (a duplicate's answer): nothing to base a change on.
      if (!raw || record.deleted) continue;
      const row = (raw[this.versionColumn] as number | null | undefined) ?? null;
      if (this.shows(collection, raw, record) && !(stored[key] === record.version && (row === null || row < record.version))) {
        stored[key] = Math.max(stored[key] ?? 0, record.version);
        this.unshown.delete(key);
      } else {
        // (Or answered with the version kept and not yet in the row: no pull lists the record again.)
        this.unshown.set(key, { collection, id, record });
      }
    }
    await this.store.set(APPLIED_KEY, stored);
  }

  /** Whether the row holds the record's value in every field a change of it may send (what its base vouches for). */
  private shows(table: string, raw: DirtyRaw, record: SyncRecord): boolean {
    const renamed = this.options.columns?.[table] ?? {};
    return Object.entries(this.meta!.writable.pick(table, record.data ?? {}, false)).every(([field, value]) => {
      const column = renamed[field] ?? field;
      // A field the app's schema leaves out is never sent.
      return !Object.hasOwn(raw, column) || jsonEqual(raw[column], value);
    });
  }

  /**
   * A record's raw, also a locally deleted one's (Watermelon hands over only its id). Read once a
   * push: the adapter answers a record it handed out before with its id only, and the collection's
   * cache no longer holds a deleted one.
   */
  private async localRaw(table: string, id: string): Promise<DirtyRaw | null> {
    const key = `${table}/${id}`;
    if (!this.raws.has(key)) this.raws.set(key, await this.readRaw(table, id));
    return this.raws.get(key)!;
  }

  private async readRaw(table: string, id: string): Promise<DirtyRaw | null> {
    const found = (await this.options.database.adapter.find(table, id)) as DirtyRaw | string | null;
    if (found !== null && typeof found === "object") return found;
    // Already cached in memory: the adapter answers with the id only.
    const cache = (this.options.database.get(table) as unknown as { _cache: { get(id: string): { _raw: DirtyRaw } | undefined } })._cache;
    // A copy: the record's own raw changes with the app's writes made while the push runs.
    const raw = cache.get(id)?._raw;
    return raw ? { ...raw } : null;
  }
}
