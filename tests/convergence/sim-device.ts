// One simulated phone: the real client (TidesyncClient + TidesyncApi, in-memory
// store) behind a faulty link, driven by a seeded script of local writes,
// syncs and offline periods. It writes wherever its user can see lists: its
// own lists and the shared ones it is a member of (tasks created, edited on
// the same and on different fields as other users' devices, moved between
// lists, deleted), also where it has just been demoted or removed (the
// server's FORBIDDEN / NOT_FOUND are part of the game). It deletes lists its
// user owns, also amid moves between two syncs (listScenario), and renames
// records back to the title they had (renameAndBack). It remembers every
// value it wrote (each unique, but for those renames back) and everything
// the client told it, for the final "nothing lost" check.
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import { TidesyncError } from "../../client/api-error.ts";
import type { OpRejectedEvent, WriteDiscardedEvent } from "../../client/events.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { type SyncReport, TidesyncClient } from "../../client/sync-client.ts";
import type { RecordData } from "../../client/storage.ts";
import type { LocalRecord } from "../../client/local-view.ts";
import { cursorPayload } from "../support/cursor-payload.ts";
import { type DeviceLink, type FaultNetwork, VIRTUAL_API_URL } from "./fault-network.ts";
import { Prng } from "./prng.ts";

/** Fields whose written values are unique per write (but for renames back), so each can be traced to the server. */
export const TRACKED_FIELDS = ["title", "notes", "position"] as const;

export interface Intention {
  device: string;
  collection: string;
  recordId: string;
  /** A tracked field, or "*delete". */
  field: string;
  value: unknown;
  /** Order of the write on its device. */
  seq: number;
}

export interface SimUser {
  index: number;
  userId: string;
  /** Every list id this user's devices created (their own lists; the personal list's id is the user id). */
  ownLists: Set<string>;
}

export class SimDevice {
  readonly name: string;
  readonly intentions: Intention[] = [];
  readonly discarded: WriteDiscardedEvent[] = [];
  readonly rejected: OpRejectedEvent[] = [];
  readonly syncErrors = new Map<string, number>();
  /** How often each multi-write step ran (listScenario, renameAndBack), for the run's report. */
  readonly steps = new Map<string, number>();
  writes = 0;
  conflictsSeen = 0;
  private seq = 0;
  /** A record renamed, to rename back to the title it had (renameAndBack). */
  private renamedFrom: { collection: string; id: string; title: string } | null = null;
  private offlineSteps = 0;
  private running: Promise<unknown> | null = null;

  private constructor(
    readonly user: SimUser,
    readonly index: number,
    readonly client: TidesyncClient,
    readonly link: DeviceLink,
    private readonly rng: Prng,
    /**
     * What happened on this device, in order: server answers and pages, and
     * local storage writes. tests/integration/convergence.test.ts prints the
     * lines of the records a failed check names.
     */
    readonly trace: string[],
  ) {
    this.name = `u${user.index}d${index}`;
    client.on((event) => {
      if (event.type === "write_discarded") this.discarded.push(event);
      if (event.type === "op_rejected") this.rejected.push(event);
      if (event.type === "conflict") this.conflictsSeen++;
    });
  }

  static async create(options: { seed: string; user: SimUser; index: number; token: string; network: FaultNetwork; installationId: string }): Promise<SimDevice> {
    const name = `u${options.user.index}d${options.index}`;
    const ids = new Prng(options.seed, `${name}/ids`);
    const jitter = new Prng(options.seed, `${name}/jitter`);
    const link = options.network.link(options.user.index, new Prng(options.seed, `${name}/network`));
    const trace: string[] = [];
    const api = new TidesyncApi({ baseUrl: VIRTUAL_API_URL, getAccessToken: () => options.token, fetch: traced(link.fetch, trace), timeoutMs: 15_000 });
    await api.startSession({ device: { installation_id: options.installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
    const storage = new MemoryStorage();
    const apply = storage.apply.bind(storage);
    storage.apply = async (change) => {
      for (const ref of change.deleteRecords ?? []) trace.push(`store: drop ${ref.collection}/${ref.id}`);
      for (const record of change.putRecords ?? []) trace.push(`store: put ${record.collection}/${record.id} v${record.version}${record.deleted ? " deleted" : ""}`);
      for (const pending of change.putOps ?? []) trace.push(`store: queue ${pending.op.op_id} ${pending.op.type} ${pending.op.collection}/${pending.op.record_id} base ${pending.op.base_version}${pending.sent ? " sent" : ""}`);
      if (change.beginReset) trace.push("store: full sync begins");
      await apply(change);
    };
    const client = await TidesyncClient.open({
      api,
      storage,
      installationId: options.installationId,
      generateId: () => ids.uuid(),
      random: () => jitter.next(),
      backoff: { baseMs: 25, maxMs: 1000, maxAttempts: 6 },
      pullLimit: 25,
    });
    return new SimDevice(options.user, options.index, client, link, new Prng(options.seed, `${name}/script`), trace);
  }

  private value(field: string): string | number {
    const n = ++this.seq;
    if (field === "position") return n * 1000 + this.index * 10 + this.user.index / 10;
    return `u${this.user.index}-d${this.index}-${field[0]}${n}`;
  }

  private track(collection: string, recordId: string, data: RecordData): void {
    for (const field of TRACKED_FIELDS) {
      if (Object.hasOwn(data, field)) this.intentions.push({ device: this.name, collection, recordId, field, value: data[field], seq: this.seq });
    }
  }

  /** Lists to put tasks in: what this device sees, and the personal list (its id is the user's). */
  private async targetLists(): Promise<string[]> {
    const ids = new Set((await this.client.list("lists")).map((r) => r.id));
    ids.add(this.user.userId);
    return [...ids];
  }

  /** One local write of a tracked field (each value unique), or of the others as given. */
  private async upsert(record: { collection: string; id: string }, patch: RecordData): Promise<void> {
    await this.client.upsert(record.collection, record.id, patch);
    this.track(record.collection, record.id, patch);
  }

  private async remove(record: { collection: string; id: string }): Promise<void> {
    await this.client.delete(record.collection, record.id);
    this.intentions.push({ device: this.name, collection: record.collection, recordId: record.id, field: "*delete", value: null, seq: ++this.seq });
  }

  private async createList(): Promise<string> {
    const data: RecordData = { title: this.value("title"), color: this.rng.chance(0.5) ? "#3a7bd5" : null, position: this.value("position"), archived: false };
    const id = await this.client.create("lists", data);
    this.user.ownLists.add(id);
    this.track("lists", id, data);
    return id;
  }

  private count(step: string): void {
    this.steps.set(step, (this.steps.get(step) ?? 0) + 1);
  }

  /** Lists this device sees that its user's devices created: the ones it may delete (the personal and shared lists stay). */
  private ownVisibleLists(lists: LocalRecord[]): LocalRecord[] {
    return lists.filter((l) => this.user.ownLists.has(l.id));
  }

  /** Some local writes (each counts against the device's `ops`); returns how many. */
  private async write(): Promise<number> {
    if (this.running === null && this.user.ownLists.size > 0 && this.rng.chance(0.05)) {
      // Right after a sync (its push empties the outbox, faults permitting), so that the steps
      // are the next push's batch alone, as an app offline between two syncs sends them (the
      // client ends a batch before a list's delete if an earlier op of it sets a task's list).
      await this.startSync();
      const own = this.ownVisibleLists(await this.client.list("lists"));
      if (own.length > 0) return await this.listScenario(await this.client.list("tasks"), own);
    }
    const tasks = (await this.client.list("tasks"));
    const lists = (await this.client.list("lists"));
    if (this.renamedFrom && this.rng.chance(0.3)) {
      // Unless it was deleted meanwhile: a write to a deleted record would create it again.
      if ((await this.client.get(this.renamedFrom.collection, this.renamedFrom.id))?.deleted === false) return await this.renameBack();
      this.renamedFrom = null;
    }
    const roll = this.rng.next();
    if (tasks.length === 0 || roll < 0.22) {
      if (this.rng.chance(0.12)) {
        await this.createList();
        return 1;
      }
      const data: RecordData = {
        list_id: this.rng.pick(await this.targetLists()),
        title: this.value("title"),
        notes: this.rng.chance(0.5) ? this.value("notes") : null,
        done: false,
        due_date: this.rng.chance(0.3) ? `2026-12-${String(this.rng.int(10, 28))}` : null,
        position: this.value("position"),
      };
      const id = await this.client.create("tasks", data);
      this.track("tasks", id, data);
      return 1;
    }
    // Mostly tasks (shared ones collide across users), sometimes a list's own fields.
    const record = lists.length > 0 && this.rng.chance(0.15) ? this.rng.pick(lists) : this.rng.pick(tasks);
    if (roll >= 0.9 && (record.collection === "tasks" || this.user.ownLists.has(record.id))) {
      // A list goes with the tasks it holds (its cascade), on the server and on every device.
      if (record.collection === "lists") this.count("list deleted");
      await this.remove(record);
      return 1;
    }
    if (roll >= 0.86) return await this.renameAndBack(record, tasks, lists);
    const fields = record.collection === "lists" ? ["title", "position", "archived", "color"] : ["title", "notes", "done", "position", "due_date", "list_id"];
    const patch: RecordData = {};
    for (let i = this.rng.int(1, 3); i > 0; i--) {
      const field = this.rng.pick(fields);
      if (field === "title" || field === "notes" || field === "position") patch[field] = this.value(field);
      else if (field === "done" || field === "archived") patch[field] = record.data?.[field] !== true;
      else if (field === "color") patch.color = this.rng.pick(["#ff0000", "#00ff00", null]);
      else if (field === "due_date") patch.due_date = this.rng.chance(0.5) ? null : `2027-01-${String(this.rng.int(10, 28))}`;
      else if (field === "list_id") patch.list_id = this.rng.pick(await this.targetLists()); // a move
    }
    await this.upsert(record, patch);
    return 1;
  }

  /**
   * Deletes one of the user's lists amid moves, back to back:
   * - tasks moved out of a list (all or some: the rest go with it), then the list deleted;
   * - a task renamed, a list deleted, a new list created and the task moved into it (a review's
   *   case, one batch: the move is written after the new list's insert, the rename kept);
   * - a new list created and tasks moved into it (from an old list, if it holds any), then the old
   *   list deleted, or the new list itself (the moved tasks go with it).
   */
  private async listScenario(tasks: LocalRecord[], own: LocalRecord[]): Promise<number> {
    let writes = 0;
    const move = async (moved: LocalRecord[], to: string) => {
      for (const task of moved) {
        await this.upsert(task, this.rng.chance(0.3) ? { list_id: to, title: this.value("title") } : { list_id: to });
        writes++;
      }
    };
    const held = (list: { id: string }) => tasks.filter((t) => t.data?.list_id === list.id);
    let doomed: { collection: string; id: string } = this.rng.pick(own);
    // The review's case twice as often as the others.
    const kind = tasks.length === 0 ? 0 : this.rng.pick([0, 1, 1, 2]);
    if (kind === 0) {
      this.count("tasks moved out, list deleted");
      const others = (await this.targetLists()).filter((id) => id !== doomed.id);
      await move(held(doomed).filter(() => this.rng.chance(0.7)), this.rng.pick(others));
    } else if (kind === 1) {
      this.count("task renamed, list deleted, list created, task moved in");
      // Mostly a task of the user's own lists (where checks.ts expects no refusal) and another list.
      const owned = new Set([this.user.userId, ...this.user.ownLists]);
      const mine = tasks.filter((t) => owned.has(String(t.data?.list_id)));
      const task = this.rng.pick(mine.length > 0 && this.rng.chance(0.8) ? mine : tasks);
      const others = own.filter((l) => l.id !== task.data?.list_id);
      if (others.length > 0 && this.rng.chance(0.8)) doomed = this.rng.pick(others);
      await this.upsert(task, { title: this.value("title") });
      await this.remove(doomed);
      const created = await this.createList();
      await move([task], created);
      return writes + 3;
    } else {
      const created = await this.createList();
      writes++;
      const from = held(doomed).length > 0 ? held(doomed) : tasks;
      await move(from.filter(() => this.rng.chance(0.6)).slice(0, 4), created);
      if (this.rng.chance(0.3)) doomed = { collection: "lists", id: created };
      this.count(doomed.id === created ? "list created, tasks moved in, it deleted" : "list created, tasks moved in, theirs deleted");
    }
    await this.remove(doomed);
    return writes + 1;
  }

  /**
   * A rename, then back to the title before it: at once (the client folds both into one op that
   * changes nothing), after a write of another record (two ops of the record in one batch, the
   * row left as it was), or in a later step (renameBack), maybe after a sync.
   */
  private async renameAndBack(record: LocalRecord, tasks: LocalRecord[], lists: LocalRecord[]): Promise<number> {
    const before = record.data?.title;
    await this.upsert(record, { title: this.value("title") });
    if (typeof before !== "string") return 1;
    this.renamedFrom = { collection: record.collection, id: record.id, title: before };
    const how = this.rng.int(0, 2);
    this.count(["renamed and back at once", "renamed, another written, back", "renamed, back later"][how]);
    if (how === 2) return 1;
    let writes = 1;
    const others = [...tasks, ...lists].filter((r) => r.id !== record.id);
    if (how === 1 && others.length > 0) {
      await this.upsert(this.rng.pick(others), { position: this.value("position") });
      writes++;
    }
    return writes + (await this.renameBack());
  }

  private async renameBack(): Promise<number> {
    const { title, ...record } = this.renamedFrom!;
    this.renamedFrom = null;
    this.seq++;
    await this.upsert(record, { title });
    return 1;
  }

  /** Starts a sync in the background (the app keeps writing meanwhile). */
  private startSync(): Promise<unknown> {
    this.running ??= this.client.sync().catch((error: unknown) => this.noteSyncError(error)).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private noteSyncError(error: unknown): void {
    if (!(error instanceof TidesyncError)) throw error;
    this.syncErrors.set(error.code, (this.syncErrors.get(error.code) ?? 0) + 1);
  }

  /** The device's script: `ops` local writes with syncs, pauses and offline periods in between. */
  async run(ops: number, goOffline: number, network: FaultNetwork, onWrite: () => void): Promise<void> {
    this.link.faultsEnabled = true;
    while (this.writes < ops) {
      if (this.offlineSteps > 0) {
        if (--this.offlineSteps === 0) this.link.offline = false;
      } else if (this.rng.chance(goOffline)) {
        this.link.offline = true;
        this.offlineSteps = this.rng.int(8, 30);
        network.faults.offlinePeriods++;
      }
      const roll = this.rng.next();
      if (roll < 0.62) {
        const writes = await this.write();
        this.writes += writes;
        for (let i = 0; i < writes; i++) onWrite();
      } else if (roll < 0.9) {
        // An app knows when it is offline and rarely tries then.
        if (!this.link.offline || this.rng.chance(0.1)) {
          const sync = this.startSync();
          if (this.rng.chance(0.4)) await sync;
        }
      } else {
        await new Promise((r) => setTimeout(r, this.rng.int(1, 20)));
      }
      await new Promise((r) => setTimeout(r, this.rng.int(0, 3)));
    }
    this.link.offline = false;
    await this.running;
  }

  /** Faults off, online, and one complete sync. */
  async finalSync(): Promise<SyncReport> {
    this.link.faultsEnabled = false;
    this.link.offline = false;
    await this.running;
    return await this.client.sync();
  }
}

/** `fetch`, noting every sync answer (ops' results and pages' records) in `trace`. */
function traced(fetch: FetchFunction, trace: string[]): FetchFunction {
  return async (input, init) => {
    const path = input.slice(VIRTUAL_API_URL.length);
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      trace.push(`${path.split("?")[0]}: ${(error as Error).message}`);
      throw error;
    }
    if (!path.startsWith("/v1/sync/")) return response;
    const body = await response.clone().json().catch(() => null) as
      | { results?: { op_id: string; status: string; original_status?: string; record?: { collection: string; id: string; version: number; deleted: boolean } }[] }
      | { changes?: { collection: string; id: string; version: number; deleted: boolean }[]; reset?: boolean; has_more?: boolean }
      | null;
    if (body && "results" in body && body.results) {
      for (const r of body.results) trace.push(`push answer: ${r.op_id} ${r.status}${r.original_status ? `/${r.original_status}` : ""} ${r.record ? `${r.record.collection}/${r.record.id} v${r.record.version}${r.record.deleted ? " deleted" : ""}` : "no record"}`);
    } else if (body && "changes" in body && body.changes) {
      const position = (cursor: string | null | undefined) => {
        try {
          return cursor ? JSON.stringify(cursorPayload(cursor).after) : "none";
        } catch {
          return "?";
        }
      };
      const page = `pull page${body.reset ? " (reset)" : ""}${new URL(input).searchParams.has("cursor") ? "" : " (no cursor)"}`;
      trace.push(`${new Date().toISOString()} pull: after ${position(new URL(input).searchParams.get("cursor"))} → ${body.changes.length} changes, has_more ${body.has_more}, next ${position((body as { cursor?: string }).cursor)}`);
      for (const c of body.changes) trace.push(`${page}: ${c.collection}/${c.id} v${c.version}${c.deleted ? " deleted" : ""}`);
    } else {
      trace.push(`${path.split("?")[0]}: ${response.status}`);
    }
    return response;
  };
}
