// One scenario for every local-database adapter (client/adapters/*), each
// adapter bringing a driver (AdapterDevice). Three devices of two users, the
// real function and Postgres, a network that goes offline and loses answers
// on cue. The script covers what made hand-written adapters diverge:
//   offline spells, a same-field edit (conflict, rebased) and a cross-field one
//   (merge), a lost answer and an app restart whose retry must resend the same
//   op_id (and not overwrite a later edit of another device), a delete vs an
//   update both ways, a plain delete, a cursor past the retention window (410:
//   a full sync that drops what it does not list), a viewer's edit (FORBIDDEN,
//   reverted, refused once), a member removed from a shared list while offline
//   with queued writes (NOT_FOUND, the list leaves the device), and no pull
//   without a cursor after the first sync but the 410's.
// At the end every device must hold exactly what its user may see on the
// server (read through RLS), field for field and version for version.
// runMidPullResyncScenario: a cursor given up on a later page of one pull.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { encodeCursor } from "../../functions/api/sync/cursor.ts";
import type { SyncEvent } from "../../client/events.ts";
import { jsonEqual } from "../../client/rebase.ts";
import type { RecordData } from "../../client/storage.ts";
import { cursorPayload } from "../support/cursor-payload.ts";
import { adminSql, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { visibleTo } from "../support/rls-view.ts";
import { asUser, pushOk, removeMember, settled, share, upsert } from "../support/shared-lists.ts";
import { FaultNetwork, VIRTUAL_API_URL } from "../convergence/fault-network.ts";
import { Prng } from "../convergence/prng.ts";

/** A record as a device holds it, in the server's field names. */
export interface DeviceRecord {
  version: number;
  data: RecordData;
}

/** One phone running an adapter on its local database. */
export interface AdapterDevice {
  /** A complete sync (push and pull); rejects when the server stays unreachable. */
  sync(): Promise<void>;
  /** Sets the fields (creates the record when it does not exist here). */
  write(collection: string, id: string, data: RecordData): Promise<void>;
  remove(collection: string, id: string): Promise<void>;
  /** The app restarts: the adapter's objects are made anew over the same local database. */
  restart(): Promise<void>;
  /** The live records, by "collection/id". */
  records(): Promise<Map<string, DeviceRecord>>;
  close(): Promise<void>;
}

export interface DeviceSetup {
  name: string;
  api: TidesyncApi;
  installationId: string;
  /** Where the adapter reports events (conflicts, rejections, resyncs). */
  onEvent: (event: SyncEvent) => void;
  /** Changes per pulled page (the adapter's own default when absent). */
  pullLimit?: number;
  /** The synced collections, parents first. Default lists and tasks (list_members may be added). */
  tables?: readonly string[];
  /** Caps the ops per pushed batch below the server's limit. */
  maxOpsPerBatch?: number;
}

export type DeviceFactory = (setup: DeviceSetup) => Promise<AdapterDevice>;

const NO_FAULTS = { dropRequest: 0, loseResponse: 0, duplicate: 0, replayLater: 0, reorder: 0 };

class Phone {
  readonly events: SyncEvent[] = [];
  device!: AdapterDevice;
  constructor(readonly name: string, readonly user: TestUser, readonly link: ReturnType<FaultNetwork["link"]>) {}

  rejections(code: string): SyncEvent[] {
    return this.events.filter((e) => e.type === "op_rejected" && e.error.code === code);
  }
}

async function phone(network: FaultNetwork, userIndex: number, name: string, user: TestUser, token: string, factory: DeviceFactory, pullLimit?: number): Promise<Phone> {
  const result = new Phone(name, user, network.link(userIndex, new Prng("adapters", name)));
  const api = new TidesyncApi({ baseUrl: VIRTUAL_API_URL, getAccessToken: () => token, fetch: result.link.fetch, timeoutMs: 15_000 });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  result.device = await factory({ name, api, installationId, onEvent: (event) => result.events.push(event), pullLimit });
  return result;
}

/** Syncs after every transaction open now has ended, so the pull sees everything committed so far. */
async function syncSeeingAll(...phones: Phone[]): Promise<void> {
  await settled();
  for (const p of phones) await p.device.sync();
}

/** The same cursor as if issued beyond the retention window (docs/sync.md): the server answers 410 RESYNC_REQUIRED. */
function pastRetention(userId: string) {
  return async (cursor: string) => {
    const payload = cursorPayload(cursor);
    return await encodeCursor(stack.functionsEnv.TIDESYNC_CURSOR_SECRET, userId, { ...payload, iat: payload.iat - 400 * 86_400 });
  };
}

/** The same cursor with its MAC altered (as after the cursor secret rotated): the server answers 400 INVALID_CURSOR. */
async function tampered(cursor: string): Promise<string> {
  const [payload, mac] = cursor.split(".");
  return `${payload}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
}

/** The tables the adapter devices sync (they pull only those; list_members is read through the Data API). */
const ADAPTER_TABLES = ["lists", "tasks"];

/** Where a device differs from what its user may see on the server (field for field, version for version). */
async function differencesFromServer(p: Phone): Promise<string[]> {
  const visible = await visibleTo(p.user, ADAPTER_TABLES);
  const local = await p.device.records();
  const differences: string[] = [];
  for (const [key, row] of visible) {
    const mine = local.get(key);
    if (!mine || mine.version !== row.version || !jsonEqual(pick(mine.data, Object.keys(row.data)), row.data)) {
      differences.push(`${key}: device ${JSON.stringify(mine ?? null)} vs server v${row.version} ${JSON.stringify(row.data)}`);
    }
  }
  for (const key of local.keys()) if (!visible.has(key)) differences.push(`${key}: on the device, not visible to its user on the server`);
  return differences;
}

async function serverRecord(user: TestUser, collection: string, id: string) {
  return (await visibleTo(user)).get(`${collection}/${id}`);
}

export async function runAdapterScenario(factory: DeviceFactory): Promise<void> {
  const network = new FaultNetwork(stack.apiUrl, NO_FAULTS);
  const alice = await createTestUser();
  const bob = await createTestUser();
  const a1 = await phone(network, 0, "alice-1", alice, alice.token, factory);
  const a2 = await phone(network, 0, "alice-2", alice, (await alice.newSession()).token, factory);
  const b1 = await phone(network, 1, "bob-1", bob, bob.token, factory);
  const phones = [a1, a2, b1];
  try {
    await syncSeeingAll(...phones);
    // From here on a device pulls from its cursor, even where every pull so far was empty (no
    // tasks yet); only the 410 below starts full syncs again.
    const fullPullsBefore = new Map(phones.map((p) => [p, p.link.fullPulls]));

    // Alice's shared list (Bob: editor), a list Bob only views, Bob's own task.
    const groceries = randomUUID();
    const viewed = randomUUID();
    const t = Array.from({ length: 7 }, () => randomUUID());
    const v1 = randomUUID();
    const bobsOwn = randomUUID();
    const gone = randomUUID();
    await a1.device.write("lists", groceries, { title: "Groceries", color: null, position: 1, archived: false });
    await a1.device.write("lists", viewed, { title: "Read only", color: "#3a7bd5", position: 2, archived: false });
    for (const [i, id] of t.slice(0, 6).entries()) {
      await a1.device.write("tasks", id, { list_id: groceries, title: `task ${i + 1}`, notes: null, done: false, due_date: null, position: i + 1 });
    }
    await a1.device.write("tasks", gone, { list_id: groceries, title: "deleted while alice-2 was away", notes: null, done: false, due_date: null, position: 9 });
    await a1.device.write("tasks", v1, { list_id: viewed, title: "viewed task", notes: "n", done: false, due_date: "2026-12-24", position: 1 });
    await b1.device.write("tasks", bobsOwn, { list_id: bob.userId, title: "Bob's own", notes: null, done: false, due_date: null, position: 1 });
    await a1.device.sync();
    await b1.device.sync();
    await share(alice, groceries, bob, "editor");
    await share(alice, viewed, bob, "viewer");
    await syncSeeingAll(a2, b1);
    expect((await b1.device.records()).get(`tasks/${t[0]}`)?.data.title).toBe("task 1");
    expect((await a2.device.records()).has(`tasks/${bobsOwn}`)).toBe(false);

    // Offline spell: a same-field edit (conflict: Bob's came first) and a cross-field one (both survive).
    a2.link.offline = true;
    await a2.device.write("tasks", t[0], { title: "alice-2 title", notes: "alice-2 notes on task 1" });
    await a2.device.write("tasks", t[1], { notes: "alice-2 notes" });
    await b1.device.write("tasks", t[0], { title: "bob title" });
    await b1.device.write("tasks", t[1], { done: true });
    await b1.device.sync();
    a2.link.offline = false;
    await syncSeeingAll(a2);
    expect(a2.events.some((e) => e.type === "conflict" && e.op.record_id === t[0])).toBe(true);
    // The conflict is rebased: the field that clashed keeps Bob's value, the other one of the same edit goes up.
    expect((await serverRecord(alice, "tasks", t[0]))?.data).toMatchObject({ title: "bob title", notes: "alice-2 notes on task 1" });
    expect((await serverRecord(alice, "tasks", t[1]))?.data).toMatchObject({ notes: "alice-2 notes", done: true });

    // A lost answer: the server applied Alice's edit, her device never heard (and the app restarts).
    // Bob edits the same field later; Alice's retry (the same op_id) must not bring her older value back.
    a1.link.loseBatchAnswers = 100;
    await a1.device.write("tasks", t[2], { title: "alice-1 title" });
    await expect(a1.device.sync()).rejects.toThrow();
    a1.link.loseBatchAnswers = 0;
    await a1.device.restart();
    await syncSeeingAll(b1);
    expect((await b1.device.records()).get(`tasks/${t[2]}`)?.data.title).toBe("alice-1 title");
    await b1.device.write("tasks", t[2], { title: "bob later title" });
    await b1.device.sync();
    await syncSeeingAll(a1);
    expect((await serverRecord(alice, "tasks", t[2]))?.data.title).toBe("bob later title");
    expect(network.duplicatesSuppressed).toBeGreaterThan(0);
    // Alice's ops on it: the create and, across the failed sync and the restart, the edit as ONE op (its op_id resent, never a new one).
    const aliceOps = await adminSql<{ status: string }[]>`
      select status from app_private.sync_ops where user_id = ${alice.userId} and record_id = ${t[2]} order by created_at`;
    expect(aliceOps.map((r) => r.status)).toEqual(["applied", "applied"]);

    // Delete vs update, both ways, and a plain delete.
    a2.link.offline = true;
    await a2.device.remove("tasks", t[3]);
    await b1.device.write("tasks", t[3], { title: "bob keeps it" });
    await b1.device.remove("tasks", t[4]);
    await b1.device.sync();
    a1.link.offline = true;
    await a1.device.write("tasks", t[4], { notes: "alice-1 notes on a deleted task" });
    await a1.device.remove("tasks", t[5]);
    a1.link.offline = false;
    a2.link.offline = false;
    await syncSeeingAll(a2, a1);
    expect((await serverRecord(alice, "tasks", t[3]))?.data.title).toBe("bob keeps it");
    expect(await serverRecord(alice, "tasks", t[4])).toBeUndefined();
    expect(await serverRecord(alice, "tasks", t[5])).toBeUndefined();

    // Away past the retention window: 410, a full sync that drops what the server no longer
    // lists and keeps (and pushes) the device's unpushed edit.
    a2.link.offline = true;
    await a1.device.remove("tasks", gone);
    await a1.device.sync();
    await a2.device.write("tasks", t[1], { position: 42 });
    a2.link.agedCursors = { age: pastRetention(alice.userId), done: new Set() };
    a2.link.offline = false;
    await syncSeeingAll(a2);
    a2.link.agedCursors = null;
    expect(a2.events.some((e) => e.type === "resync" && e.reason === "RESYNC_REQUIRED")).toBe(true);
    expect((await a2.device.records()).has(`tasks/${gone}`)).toBe(false);
    expect((await serverRecord(alice, "tasks", t[1]))?.data.position).toBe(42);

    // A viewer's edit: FORBIDDEN, surfaced, and the device shows the server's value again.
    await b1.device.write("tasks", v1, { title: "viewer edit" });
    await b1.device.sync();
    expect(b1.rejections("FORBIDDEN").length).toBeGreaterThan(0);
    expect((await b1.device.records()).get(`tasks/${v1}`)?.data.title).toBe("viewed task");
    // Refused once, not pushed again and again (as a rejection handed back to the library as a conflict is).
    await syncSeeingAll(b1);
    const [{ refusals }] = await adminSql<{ refusals: number }[]>`
      select count(*)::int as refusals from app_private.sync_ops where user_id = ${bob.userId} and record_id = ${v1} and status = 'rejected'`;
    expect(refusals).toBe(1);

    // Bob, offline, edits the shared list and adds to it; Alice removes him meanwhile.
    b1.link.offline = true;
    await b1.device.write("tasks", t[1], { title: "bob offline title" });
    await b1.device.write("tasks", t[6], { list_id: groceries, title: "bob's offline task", notes: null, done: false, due_date: null, position: 7 });
    await removeMember(alice, groceries, bob);
    b1.link.offline = false;
    await syncSeeingAll(b1);
    expect(b1.rejections("NOT_FOUND").length).toBeGreaterThan(0);
    const bobNow = await b1.device.records();
    expect([...bobNow.keys()].filter((k) => k === `lists/${groceries}` || t.some((id) => k === `tasks/${id}`))).toEqual([]);

    // Faults off: everyone syncs until nothing moves, then compare with the server.
    for (let round = 0; round < 2; round++) await syncSeeingAll(...phones);
    for (const p of phones) expect(await differencesFromServer(p), p.name).toEqual([]);
    const fullPulls = phones.map((p) => p.link.fullPulls - fullPullsBefore.get(p)!);
    expect({ alice1: fullPulls[0], alice2Resynced: fullPulls[1] > 0, bob1: fullPulls[2] }, "pulls without a cursor after setup").toEqual({ alice1: 0, alice2Resynced: true, bob1: 0 });
    for (const user of [0, 1]) expect([...network.wireOf(user).mutatedOps], "op_ids resent with other content").toEqual([]);
  } finally {
    for (const p of phones) await p.device.close();
  }
}

/**
 * A pull whose cursor is given up on a page after its first: 410 RESYNC_REQUIRED (the retention
 * job purged between the device's pages, or the cursor aged past the window meanwhile) and 400
 * INVALID_CURSOR (the cursor secret rotated). The adapter starts a full sync in the middle of the
 * pull, and that full sync must still drop what it does not list (it lists no removals): a task
 * deleted while the device was away must leave it, not stay on it for ever.
 */
export async function runMidPullResyncScenario(factory: DeviceFactory): Promise<void> {
  const pageSize = 2;
  const network = new FaultNetwork(stack.apiUrl, NO_FAULTS);
  const alice = await createTestUser();
  const p = await phone(network, 0, "alice-paged", alice, alice.token, factory, pageSize);
  try {
    const list = randomUUID();
    const deleted = [randomUUID(), randomUUID()];
    const edited = Array.from({ length: 4 }, () => randomUUID());
    await pushOk(alice, { ops: [upsert("lists", list, { title: "Paged" }), ...[...deleted, ...edited].map((id, i) => upsert("tasks", id, { list_id: list, title: `task ${i + 1}` }))] });
    await syncSeeingAll(p);
    for (const id of deleted) expect((await p.device.records()).has(`tasks/${id}`)).toBe(true);

    const rounds = [["RESYNC_REQUIRED", pastRetention(alice.userId)], ["INVALID_CURSOR", tampered]] as const;
    for (const [round, [reason, age]] of rounds.entries()) {
      // Away: more changes than a page holds (so the pull has a second page), then a delete.
      await asUser(alice, (tx) => tx`update public.tasks set done = not done where id = any(${edited})`);
      await asUser(alice, (tx) => tx`delete from public.tasks where id = ${deleted[round]}`);
      // The cursor of the pull's second page is the one refused: its first page went through.
      const aged = { age, done: new Set<string>(), after: 1 };
      p.link.agedCursors = aged;
      await syncSeeingAll(p);
      p.link.agedCursors = null;
      expect([...aged.done].filter((filter) => filter.split(",").includes("tasks")), "a second page of tasks was asked for with a refused cursor").toHaveLength(1);
      expect(p.events.filter((e) => e.type === "resync").map((e) => e.type === "resync" && e.reason)).toContain(reason);
      expect((await p.device.records()).has(`tasks/${deleted[round]}`), `${reason}: the task deleted while the device was away`).toBe(false);
      expect(await differencesFromServer(p), reason).toEqual([]);
    }
  } finally {
    await p.device.close();
  }
}

/** The device's values of `fields` (a local database may keep more columns than the server lists). */
function pick(data: RecordData, fields: string[]): RecordData {
  return Object.fromEntries(fields.map((f) => [f, data[f]]));
}
