// The end-of-run checks of the convergence suite, against what Postgres holds
// (the app's tables read AS EACH USER, through their RLS policies; the sync
// state in app_private.sync_records; the app_private.sync_ops ledger), what
// went over the wire and what each device's client reported. Each returns
// readable failures instead of throwing, so one run shows every problem at once.
import type postgres from "postgres";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";
import { jsonEqual } from "../../client/rebase.ts";
import { localView } from "../../client/local-view.ts";
import type { TestUser } from "../support/harness.ts";
import { visibleTo, type VisibleRow } from "../support/rls-view.ts";
import { SYNC_COLLECTIONS } from "../../functions/_shared/sync-collections.generated.ts";
import type { OpRejectedEvent } from "../../client/events.ts";
import type { FaultNetwork } from "./fault-network.ts";
import type { MembershipChurn } from "./membership-churn.ts";
import { type SimDevice, type SimUser, TRACKED_FIELDS } from "./sim-device.ts";

interface ServerRow {
  collection: string;
  id: string;
  version: number;
  deleted: boolean;
  data: Record<string, unknown> | null;
}

interface LedgerRow {
  user_id: string;
  op_id: string;
  status: "applied" | "conflict" | "rejected";
  version: number | null;
  collection: string | null;
  record_id: string;
  type: "upsert" | "delete";
  device_id: string | null;
}

export interface CheckTotals {
  ledgerOps: number;
  applied: number;
  conflicts: number;
  rejected: number;
  records: number;
  discardedWrites: number;
}

/** The scope row (a list) a record lies in: the record itself for a scope collection. */
function scopeOf(collection: string, id: string, data: Record<string, unknown> | null | undefined): { collection: string; id: string } | undefined {
  const definition = SYNC_COLLECTIONS.find((c) => c.name === collection);
  if (!definition) return undefined;
  if (definition.scope_collection === collection) return { collection, id };
  const scopeId = data?.[definition.scope_column];
  return typeof scopeId === "string" ? { collection: definition.scope_collection, id: scopeId } : undefined;
}

/**
 * Whether the run explains a refusal: FORBIDDEN where the user's role or membership changed under
 * the device, NOT_FOUND where a record or list was deleted (or left the user's view) meanwhile.
 * Not a FORBIDDEN of writes wholly within lists the user owns for the whole run (`owned`: its
 * personal list and its devices' lists, never shared), judged over all the refused ops of the
 * record (`ofRecord`: a record is written once, in its final state, so a later op's move into a
 * list the user may only view rejects the earlier ones too); nor a NOT_FOUND for a foreign key the
 * database refused ("refers to a record that does not exist": the push locks the lists it writes
 * into once it has read them). Either means the push wrote a row before a row it needs (a task
 * moved into a list the batch creates, written before the list's insert).
 */
function expectedRejection(event: OpRejectedEvent, ofRecord: readonly OpRejectedEvent[], owned: ReadonlySet<string>): boolean {
  const { code, message } = event.error;
  if (code === "NOT_FOUND") return !message.startsWith("refers to a record that does not exist");
  if (code !== "FORBIDDEN") return false;
  return ofRecord.some(({ op, record }) => {
    // The list the record is in as the answer has it, or the op creates it in (unknown when the
    // answer holds no live record: deleted since, or a duplicate's answer the user cannot see),
    // and the one the op moves it to.
    const current = scopeOf(op.collection, op.record_id, record ? record.data : op.base_version === null ? op.data : null);
    const target = scopeOf(op.collection, op.record_id, op.data);
    return current === undefined || !owned.has(current.id) || (target !== undefined && !owned.has(target.id));
  });
}

const key = (collection: string, id: string) => `${collection}/${id}`;
/** A value written to a record's field (recordKey: key()). */
const fieldValue = (recordKey: string, field: string, value: unknown) => `${recordKey}|${field}|${JSON.stringify(value)}`;
const MAX_REPORTED = 8;

export async function checkConvergence(
  sql: postgres.Sql,
  users: SimUser[],
  testUsers: Map<SimUser, TestUser>,
  devices: SimDevice[],
  network: FaultNetwork,
  installationIds: Map<SimDevice, string>,
  churn: MembershipChurn,
): Promise<{ failures: string[]; totals: CheckTotals }> {
  const failures: string[] = [];
  const fail = (message: string) => {
    if (failures.length < 200) failures.push(message);
  };
  const totals: CheckTotals = { ledgerOps: 0, applied: 0, conflicts: 0, rejected: 0, records: 0, discardedWrites: 0 };

  // Every op any device sent (op_id → op, first-send order), and the whole ledger of the run's users.
  const sentOps = new Map<string, SyncOp>();
  const sendOrder = new Map<string, number>();
  for (const user of users) {
    const wire = network.wireOf(user.index);
    for (const [id, text] of wire.ops) {
      sentOps.set(id, JSON.parse(text) as SyncOp);
      sendOrder.set(id, wire.order.get(id) ?? 0);
    }
  }
  const ledger = (await sql<LedgerRow[]>`
    select user_id::text, op_id::text, status, version::float8 as version, collection, record_id::text, type, device_id::text
      from app_private.sync_ops where user_id = any(${users.map((u) => u.userId)}::uuid[])`).map((r) => ({ ...r, version: r.version === null ? null : Number(r.version) }));
  // The sync state of every record the run touched or any of its users can see (live or tombstone).
  const visibleByUser = new Map<SimUser, Map<string, VisibleRow>>();
  for (const user of users) visibleByUser.set(user, await visibleTo(testUsers.get(user)!));
  const ids = new Set([...sentOps.values()].map((op) => op.record_id));
  for (const visible of visibleByUser.values()) for (const row of visible.values()) ids.add(row.id);
  const server = new Map<string, ServerRow>();
  for (const { name, table } of SYNC_COLLECTIONS) {
    for (const r of await sql<ServerRow[]>`
      select s.collection, s.id::text, s.version::float8 as version, s.deleted,
             case when s.deleted then null else to_jsonb(t) - 'id' end as data
        from app_private.sync_records s
        left join ${sql.unsafe(table)} t on t.id = s.id
       where s.collection = ${name} and s.id = any(${[...ids]}::uuid[])`) server.set(key(r.collection, r.id), { ...r, version: Number(r.version) });
  }
  totals.ledgerOps = ledger.length;
  totals.records = [...server.values()].filter((r) => !r.deleted).length;
  const appliedLedger = ledger.filter((r) => r.status === "applied");
  for (const row of ledger) {
    if (row.status === "applied") totals.applied++;
    if (row.status === "conflict") totals.conflicts++;
    if (row.status === "rejected") totals.rejected++;
  }

  // Ops a device's client dropped and told the app about (rejections, conflicts, access lost, deleted meanwhile).
  const toldOps = new Set(devices.flatMap((d) => d.discarded.map((e) => e.op.op_id)));

  for (const user of users) {
    const userDevices = devices.filter((d) => d.user === user);
    const visible = visibleByUser.get(user)!;

    // 1. Every device holds exactly what RLS lets its user see, field for field, and nothing is pending.
    const owned = new Set([user.userId, ...user.ownLists]);
    for (const device of userDevices) {
      const pending = device.client.pendingOps();
      if (pending.length > 0) fail(`${device.name}: ${pending.length} ops still pending after the final syncs`);
      const local = new Map((await device.client.serverRecords()).filter((r) => !r.deleted).map((r) => [key(r.collection, r.id), r]));
      let differences = 0;
      for (const [k, row] of visible) {
        const mine = local.get(k);
        if (!mine || mine.version !== row.version || !jsonEqual(mine.data, row.data)) {
          if (differences++ < MAX_REPORTED) fail(`${device.name}: ${k} differs: device ${JSON.stringify(mine ?? null)} vs server v${row.version} ${JSON.stringify(row.data)}`);
        }
      }
      for (const k of local.keys()) {
        if (!visible.has(k) && differences++ < MAX_REPORTED) {
          const state = server.get(k);
          const where = state === undefined ? "never had" : state.deleted ? `has deleted (v${state.version})` : `cannot see (v${state.version})`;
          fail(`${device.name}: holds ${k} v${local.get(k)!.version}, which its user ${where} on the server`);
        }
      }
      // Refusals are expected only where the user's role or membership changed under the device,
      // or a record or list was deleted under it (and for later ops of a record whose earlier op
      // was refused).
      const refused = new Set<string>();
      const rejectedOf = (k: string) => device.rejected.filter((e) => key(e.op.collection, e.op.record_id) === k);
      for (const event of device.rejected) {
        const k = key(event.op.collection, event.op.record_id);
        if (!refused.has(k) && !expectedRejection(event, rejectedOf(k), owned)) {
          fail(`${device.name}: op rejected with ${event.error.code}, which nothing in the run explains (the script writes only valid data): ${JSON.stringify(event)}`);
        }
        refused.add(k);
      }
      totals.discardedWrites += device.discarded.length;
    }

    // 2. Exactly once: the ledger holds each op_id that went over the wire once, and nothing else.
    const wire = network.wireOf(user.index);
    const mine = ledger.filter((r) => r.user_id === user.userId);
    if (wire.mutatedOps.size > 0) fail(`u${user.index}: ${wire.mutatedOps.size} op_ids were resent with different content, e.g. ${[...wire.mutatedOps][0]}`);
    const ledgerIds = new Set(mine.map((r) => r.op_id));
    if (ledgerIds.size !== mine.length) fail(`u${user.index}: an op_id appears more than once in the ledger`);
    for (const row of mine) {
      const op = wire.ops.has(row.op_id) ? sentOps.get(row.op_id) : undefined;
      if (!op) fail(`u${user.index}: ledger op ${row.op_id} was never sent by this user's devices`);
      else if (op.record_id !== row.record_id || op.type !== row.type || (row.collection !== null && op.collection !== row.collection)) {
        fail(`u${user.index}: ledger op ${row.op_id} does not match what was sent`);
      }
    }
    let unprocessed = 0;
    for (const opId of wire.ops.keys()) {
      if (ledgerIds.has(opId) || toldOps.has(opId)) continue;
      // A delete dropped because the record was deleted meanwhile loses nothing.
      const op = sentOps.get(opId)!;
      if (op.type === "delete" && server.get(key(op.collection, op.record_id))?.deleted !== false) continue;
      if (unprocessed++ < MAX_REPORTED) fail(`u${user.index}: op ${opId} was sent but is not in the ledger: the server never processed it, yet the client dropped it without telling`);
    }

    // 5. Never another user's data: every record this user's devices received belongs to a list the
    //    user had at some point (their own, or one they were a member of).
    const theirs = new Set([user.userId, ...user.ownLists, ...churn.everMember.get(user.index)!]);
    let foreign = 0;
    for (const record of wire.received) {
      if (record.deleted || record.data === null) continue;
      const scope = scopeOf(record.collection, record.id, record.data)?.id ?? "(none)";
      if (!theirs.has(scope) && foreign++ < MAX_REPORTED) fail(`u${user.index}: received ${key(record.collection, record.id)} of list ${scope}, which was never theirs`);
    }
  }

  // 3. Every applied op's effect is present, and nothing else: replaying every user's applied ops of
  //    a record in version order (ops of one batch in the order they were sent) gives its state.
  const appliedByRecord = new Map<string, LedgerRow[]>();
  for (const row of appliedLedger) {
    const op = sentOps.get(row.op_id);
    if (!op) continue;
    const k = key(op.collection, op.record_id);
    appliedByRecord.set(k, [...(appliedByRecord.get(k) ?? []), row]);
  }
  const madeOutsideOps = new Set([...users.map((u) => key("lists", u.userId)), ...churn.lists.map((l) => key("lists", l.id))]);
  for (const [k, row] of server) {
    const applied = (appliedByRecord.get(k) ?? []).sort((a, b) => (a.version ?? 0) - (b.version ?? 0) || sendOrder.get(a.op_id)! - sendOrder.get(b.op_id)!);
    if (applied.length === 0) {
      // Memberships are made outside ops (list creation, the churn's invites): checks 1 and 5 cover them.
      if (!madeOutsideOps.has(k) && row.collection !== "list_members") fail(`${k} exists on the server but no applied op made it`);
      continue;
    }
    // Replayed the way a device shows pending ops; records made outside ops (personal and shared lists) start live.
    const start = madeOutsideOps.has(k) ? { collection: row.collection, id: row.id, version: 0, deleted: false, data: {}, updated_at: "" } : undefined;
    const replayed = localView(row.collection, row.id, start, applied.map((entry) => sentOps.get(entry.op_id)!));
    const deleted = replayed?.deleted ?? true;
    const data = deleted ? null : replayed!.data;
    const lastVersion = Math.max(...applied.map((a) => a.version ?? 0));
    const fieldsDiffer = data !== null && Object.entries(data).some(([field, value]) => !jsonEqual(row.data?.[field], value));
    // Or its list went after its last applied op, and it with the list (the cascade of the list's
    // delete: a later version no op of its own made); a list never stored has no row here.
    const scope = data === null ? undefined : scopeOf(row.collection, row.id, data);
    const cascaded = row.deleted && scope !== undefined && scope.collection !== row.collection && row.version >= lastVersion &&
      server.get(key(scope.collection, scope.id))?.deleted !== false;
    if (cascaded) continue;
    if (row.deleted !== deleted || fieldsDiffer || row.version !== lastVersion) {
      fail(`${k} is v${row.version} ${JSON.stringify(row.data)} but replaying its ${applied.length} applied ops gives v${lastVersion} ${JSON.stringify(data)}`);
    }
  }

  // 4. Nothing a device wrote is lost unless the device was told (a conflict rule discarded it, the
  //    server refused it, or the user lost the record). Each written value is unique (but for
  //    renames back to an earlier title), so it may be applied at most once: a client that resent
  //    a write under a new op_id would show up here.
  const appliedValues = new Set<string>();
  const appliedDeletes = new Set<string>();
  // A value written twice (a rename back to the title before: sim-device.ts renameAndBack) may be applied twice.
  const writtenOnce = new Set<string>();
  const writtenAgain = new Set<string>();
  for (const intention of devices.flatMap((d) => d.intentions)) {
    const value = fieldValue(key(intention.collection, intention.recordId), intention.field, intention.value);
    if (writtenOnce.has(value)) writtenAgain.add(value);
    writtenOnce.add(value);
  }
  let twice = 0;
  for (const row of appliedLedger) {
    const op = sentOps.get(row.op_id);
    if (!op) continue;
    if (op.type === "delete") appliedDeletes.add(`${row.device_id}|${key(op.collection, op.record_id)}`);
    for (const field of TRACKED_FIELDS) {
      if (!op.data || !Object.hasOwn(op.data, field)) continue;
      const value = fieldValue(key(op.collection, op.record_id), field, op.data[field]);
      // Nor is null (e.g. notes cleared).
      if (op.data[field] !== null && !writtenAgain.has(value) && appliedValues.has(value) && twice++ < MAX_REPORTED) fail(`${value} was applied by two different ops`);
      appliedValues.add(value);
    }
  }
  for (const device of devices) {
    const told = new Set<string>();
    const toldDeletes = new Set<string>();
    for (const event of device.discarded) {
      const k = key(event.collection, event.record_id);
      if (event.op.type === "delete") toldDeletes.add(k);
      for (const field of event.fields ?? Object.keys(event.op.data ?? {})) told.add(fieldValue(k, field, event.op.data?.[field]));
    }
    let lost = 0;
    for (const intention of device.intentions) {
      const k = key(intention.collection, intention.recordId);
      const superseded = device.intentions.some((later) =>
        later.seq > intention.seq && later.collection === intention.collection && later.recordId === intention.recordId &&
        (later.field === intention.field || later.field === "*delete"));
      let kept: boolean;
      if (intention.field === "*delete") {
        // Or the record left the user's view for good (moved to a list they cannot see): nothing
        // the user sees is lost. (A device that drops a queued delete on a pull's removal reports
        // it, since a moved record may come back: seed 23 of the 10x run once caught it silent.)
        kept = appliedDeletes.has(`${installationIds.get(device)}|${k}`) || toldDeletes.has(k) || server.get(k)?.deleted !== false ||
          !visibleByUser.get(device.user)!.has(k);
      } else {
        const value = fieldValue(k, intention.field, intention.value);
        kept = appliedValues.has(value) || told.has(value) || superseded;
      }
      if (!kept && lost++ < MAX_REPORTED) fail(`${device.name}: write ${intention.field}=${JSON.stringify(intention.value)} of ${k} was lost without the device being told`);
    }
  }
  return { failures, totals };
}
