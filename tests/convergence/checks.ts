// The end-of-run checks of the convergence suite, against what Postgres holds
// (app_private.records and the app_private.sync_ops ledger), what went over
// the wire and what each device's client reported. Each returns readable
// failures instead of throwing, so one run shows every problem at once.
import type postgres from "postgres";
import type { SyncOp } from "../../functions/_shared/schemas/sync.ts";
import { jsonEqual } from "../../client/rebase.ts";
import type { FaultNetwork } from "./fault-network.ts";
import { type SimDevice, type SimUser, TRACKED_FIELDS } from "./sim-device.ts";

interface ServerRow {
  collection: string;
  id: string;
  version: number;
  deleted: boolean;
  data: Record<string, unknown> | null;
}

interface LedgerRow {
  op_id: string;
  status: "applied" | "conflict" | "rejected";
  version: number | null;
  collection: string;
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

const key = (collection: string, id: string) => `${collection}/${id}`;
const MAX_REPORTED = 8;

export async function checkConvergence(sql: postgres.Sql, users: SimUser[], devices: SimDevice[], network: FaultNetwork, installationIds: Map<SimDevice, string>): Promise<{ failures: string[]; totals: CheckTotals }> {
  const failures: string[] = [];
  const fail = (message: string) => {
    if (failures.length < 200) failures.push(message);
  };
  const totals: CheckTotals = { ledgerOps: 0, applied: 0, conflicts: 0, rejected: 0, records: 0, discardedWrites: 0 };

  for (const user of users) {
    const userDevices = devices.filter((d) => d.user === user);
    const rows = (await sql<ServerRow[]>`
      select collection, id::text, version::float8 as version, deleted, data
        from app_private.records where user_id = ${user.userId}`).map((r) => ({ ...r, version: Number(r.version) }));
    const ledger = (await sql<LedgerRow[]>`
      select op_id::text, status, version::float8 as version, collection, record_id::text, type, device_id
        from app_private.sync_ops where user_id = ${user.userId}`).map((r) => ({ ...r, version: r.version === null ? null : Number(r.version) }));
    const server = new Map(rows.map((r) => [key(r.collection, r.id), r]));
    const live = new Map(rows.filter((r) => !r.deleted).map((r) => [key(r.collection, r.id), r]));
    const wire = network.wireOf(user.index);
    const sentOps = new Map<string, SyncOp>([...wire.ops].map(([id, text]) => [id, JSON.parse(text) as SyncOp]));
    totals.ledgerOps += ledger.length;
    totals.records += rows.length;

    // 1. Every device holds exactly the server's live records, and nothing is pending.
    for (const device of userDevices) {
      const pending = device.client.pendingOps();
      if (pending.length > 0) fail(`${device.name}: ${pending.length} ops still pending after the final syncs`);
      const local = new Map(device.client.serverRecords().filter((r) => !r.deleted).map((r) => [key(r.collection, r.id), r]));
      let differences = 0;
      for (const [k, row] of live) {
        const mine = local.get(k);
        if (!mine || mine.version !== row.version || !jsonEqual(mine.data, row.data)) {
          if (differences++ < MAX_REPORTED) fail(`${device.name}: ${k} differs: device ${JSON.stringify(mine ?? null)} vs server v${row.version} ${JSON.stringify(row.data)}`);
        }
      }
      for (const k of local.keys()) {
        if (!live.has(k) && differences++ < MAX_REPORTED) fail(`${device.name}: holds ${k} live, the server has it ${server.has(k) ? "deleted" : "not at all"}`);
      }
      if (device.rejected.length > 0) fail(`${device.name}: ${device.rejected.length} ops rejected (the script writes only valid data): ${JSON.stringify(device.rejected[0])}`);
      totals.discardedWrites += device.discarded.length;
    }

    // 2. Exactly once: the ledger holds each op_id that went over the wire once, and nothing else.
    if (wire.mutatedOps.size > 0) fail(`u${user.index}: ${wire.mutatedOps.size} op_ids were resent with different content, e.g. ${[...wire.mutatedOps][0]}`);
    const ledgerIds = new Set(ledger.map((r) => r.op_id));
    if (ledgerIds.size !== ledger.length) fail(`u${user.index}: an op_id appears more than once in the ledger`);
    for (const row of ledger) {
      const op = sentOps.get(row.op_id);
      if (!op) fail(`u${user.index}: ledger op ${row.op_id} was never sent by this user's devices`);
      else if (op.collection !== row.collection || op.record_id !== row.record_id || op.type !== row.type) fail(`u${user.index}: ledger op ${row.op_id} does not match what was sent`);
      if (row.status === "applied") totals.applied++;
      if (row.status === "conflict") totals.conflicts++;
      if (row.status === "rejected") totals.rejected++;
    }
    let unprocessed = 0;
    for (const opId of sentOps.keys()) {
      if (!ledgerIds.has(opId) && unprocessed++ < MAX_REPORTED) fail(`u${user.index}: op ${opId} was sent but is not in the ledger: the server never processed it, yet the client dropped it`);
    }

    // 3. Every applied op's effect is present, and nothing else: replaying the
    //    ledger's applied ops in version order with what was sent gives each record.
    const appliedByRecord = new Map<string, LedgerRow[]>();
    for (const row of ledger.filter((r) => r.status === "applied")) {
      const k = key(row.collection, row.record_id);
      appliedByRecord.set(k, [...(appliedByRecord.get(k) ?? []), row]);
    }
    for (const [k, row] of server) {
      const applied = (appliedByRecord.get(k) ?? []).sort((a, b) => (a.version ?? 0) - (b.version ?? 0));
      if (applied.length === 0) {
        fail(`u${user.index}: ${k} exists on the server but no applied op made it`);
        continue;
      }
      let deleted = true;
      let data: Record<string, unknown> | null = null;
      for (const entry of applied) {
        const op = sentOps.get(entry.op_id);
        if (!op) continue;
        if (op.type === "delete") {
          deleted = true;
          data = null;
        } else {
          data = { ...(deleted ? {} : data ?? {}), ...(op.data ?? {}) };
          deleted = false;
        }
      }
      const lastVersion = Math.max(...applied.map((a) => a.version ?? 0));
      if (row.deleted !== deleted || !jsonEqual(row.data, data) || row.version !== lastVersion) {
        fail(`u${user.index}: ${k} is v${row.version} ${JSON.stringify(row.data)} but replaying its ${applied.length} applied ops gives v${lastVersion} ${JSON.stringify(data)}`);
      }
    }

    // 4. Nothing a device wrote is lost unless a conflict rule discarded it and the device was told.
    //    Each written value is unique, so it may be applied at most once: a
    //    client that resent a write under a new op_id would show up here.
    const appliedValues = new Set<string>();
    const appliedDeletes = new Set<string>();
    let twice = 0;
    for (const row of ledger.filter((r) => r.status === "applied")) {
      const op = sentOps.get(row.op_id);
      if (!op) continue;
      if (op.type === "delete") appliedDeletes.add(`${row.device_id}|${key(op.collection, op.record_id)}`);
      for (const field of TRACKED_FIELDS) {
        if (!op.data || !Object.hasOwn(op.data, field)) continue;
        const value = `${key(op.collection, op.record_id)}|${field}|${JSON.stringify(op.data[field])}`;
        // null (e.g. notes cleared) is the one value that is not unique.
        if (op.data[field] !== null && appliedValues.has(value) && twice++ < MAX_REPORTED) fail(`u${user.index}: ${value} was applied by two different ops`);
        appliedValues.add(value);
      }
    }
    const recordsOnServer = new Set(server.keys());
    for (const device of userDevices) {
      const told = new Set<string>();
      const toldDeletes = new Set<string>();
      for (const event of device.discarded) {
        const k = key(event.collection, event.record_id);
        if (event.op.type === "delete") toldDeletes.add(k);
        for (const field of event.fields ?? Object.keys(event.op.data ?? {})) told.add(`${k}|${field}|${JSON.stringify(event.op.data?.[field])}`);
      }
      let lost = 0;
      for (const intention of device.intentions) {
        const k = key(intention.collection, intention.recordId);
        const superseded = device.intentions.some((later) =>
          later.seq > intention.seq && later.collection === intention.collection && later.recordId === intention.recordId &&
          (later.field === intention.field || later.field === "*delete"));
        let kept: boolean;
        if (intention.field === "*delete") {
          kept = appliedDeletes.has(`${installationIds.get(device)}|${k}`) || toldDeletes.has(k) || !recordsOnServer.has(k);
        } else {
          const value = `${k}|${intention.field}|${JSON.stringify(intention.value)}`;
          kept = appliedValues.has(value) || told.has(value) || superseded;
        }
        if (!kept && lost++ < MAX_REPORTED) fail(`${device.name}: write ${intention.field}=${JSON.stringify(intention.value)} of ${k} was lost without the device being told`);
      }
    }

    // 5. No user ever received another user's data.
    for (const record of wire.received) {
      const title = record.data?.title;
      if (!user.recordIds.has(record.id) || (typeof title === "string" && !title.startsWith(`u${user.index}-`))) {
        fail(`u${user.index}: received ${key(record.collection, record.id)} (${JSON.stringify(title)}) which is not this user's`);
      }
    }
  }
  return { failures, totals };
}
