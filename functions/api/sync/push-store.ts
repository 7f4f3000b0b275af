// The SQL of POST /v1/sync/batch. One transaction per batch, run as the
// caller (deps.db.withUser: role `authenticated` + the verified claims, so the
// tables' RLS policies decide), with a constant number of round trips
// whatever the op count:
//   0. wait for the user's other pushes to end (a transaction-level advisory lock);
//   1. lock the rows the ops name that the caller may change
//      (select … for no key update: the policies filter what they may not; first, in one
//      pass in id order, the scope rows the ops name, those of the memberships they name and
//      those they write rows into: lockStatements), and, in a
//      NEW statement pipelined behind it (so its snapshot includes whatever
//      committed while we waited for the locks), read the ledger rows of the
//      batch's op_ids, the sync state and data of the named rows and of the
//      scopes the ops point at, the caller's live-record count and device (which the
//      same statement sets for the sync triggers);
//   (the ops are decided in memory by planBatch)
//   only when the batch creates records and deletes them again: try those writes in a
//   savepoint rolled back at once, pipelined ahead of step 2 (tryNeverStored);
//   2. write every changed row in its final state (app_private.sync_apply,
//      as the caller: policies, grants and constraints decide; the sync
//      triggers keep versions, field versions and change entries; a delete of a row
//      step 1 could not lock removes only the row version read: one another writer
//      changed meanwhile stays, and the batch is planned again), and, pipelined
//      behind it, read the written rows back as they now stand;
//      only when the database refused a row: read the refused records and the scopes
//      their ops point at again (step 1's read, a later snapshot) to answer their ops,
//      and, only when the batch deleted a scope row, the records it answers unwritten
//      in that scope (its cascade may have removed them);
//   3. record every new ledger row.
// Everything commits together or not at all: a crash or timeout leaves no
// half-applied batch, and a retry with the same op_ids is safe.
import { allCollections, type CollectionDefinition, findCollection } from "../../_shared/collections.ts";
import { ApiError } from "../../_shared/errors.ts";
import type { InexactNumber } from "../../_shared/inexact-numbers.ts";
import type { Limits } from "../../_shared/limits.ts";
import type { FieldVersions, JsonObject, ServerRecord } from "../../_shared/merge.ts";
import type { SyncBatchEnvelope, SyncOpEnvelope, SyncOpResult } from "../../_shared/schemas/sync.ts";
import { isUuid } from "../../_shared/uuid.ts";
import type { Tx } from "../lib/db.ts";
import type { UserClaims } from "../lib/verify-token.ts";
import { pgArray } from "../lib/pg-array.ts";
import { type AfterRefusal, cascadedResult, NOT_READABLE_AFTER_WRITE, type Refusal, refusalError, refusedResult } from "./db-refusal.ts";
import { parseRowsJson } from "./lossless-json.ts";
import { type BatchPlan, inOneOf, keyParts, type LedgerEntry, namedRecord, notFound, planBatch, type PlannedOp, recordKey } from "./plan-batch.ts";
import { quoteIdent, quoteLiteral, RECORDS_PER_ROW, recordJsonSql, rowJsonSql } from "./row-json.ts";
import { perCollectionsInStep } from "./schema-drift.ts";
import { wireTimeSql as iso } from "./wire-time.ts";

// These texts never vary: named prepared statements, parsed once per connection
// (TIDESYNC_DB_PREPARE=false turns this off behind a transaction pooler).
const PREPARED = { prepare: true } as const;

const COLLECTIONS = allCollections();

// The collections whose rows Postgres may print with a number a double cannot hold: their JSON is
// parsed keeping such numbers' text, so that the push answers with what a pull lists
// (lossless-json.ts). None in the sample app: their rows are parsed as before, at no cost.
const KEEPS_LONG_NUMBERS = new Set(COLLECTIONS.filter((c) => c.mayHoldInexactNumbers).map((c) => c.name));

/**
 * A `from` item: the rows of `table` (as `alias`) whose ids are in the uuid[] `ids`, in id order
 * (each id once), one parameterised primary-key lookup per id (LATERAL … OFFSET 0), `lock` taking
 * each row's lock in that order. Written as `where id = any (ids)`, the cached generic plan
 * (GENERIC_PLANS_SQL) may take the index the table's policy names instead: its `using` is
 * `list_id = any (the caller's lists)` (migration 20261128007800), an equally good index condition
 * on a nearly empty table, and every later push read all of the caller's lists' rows.
 */
function rowsByIds(table: string, alias: string, ids: string, columns: string, lock = ""): string {
  return `(select distinct k.id from unnest(${ids}) as k(id) order by k.id) ${alias}_key
    cross join lateral (select ${columns} from ${table} ${alias} where ${alias}.id = ${alias}_key.id offset 0${lock}) ${alias}`;
}

// FOR NO KEY UPDATE: it serialises the writers of a row, yet lets foreign-key
// checks (FOR KEY SHARE) through: a push adding a task to a list, or an invite
// to it, never waits for a push that merely edits the list. FOR UPDATE blocked
// them, and with the row locks of two pushes made three-way deadlocks (40P01,
// seen in the 10× convergence run). The id never changes; a delete takes its
// own stronger lock when it runs.
export const LOCK_SQL = new Map(COLLECTIONS.map((c) => [
  c.name,
  `select t.id::text as id from ${rowsByIds(c.table, "t", "$1::uuid[]", "t.id", " for no key update of t")}`,
]));

// A batch that names rows of a membership table (list_members) first locks their scope rows (their
// lists), with the scope rows it names, in id order, before any other row: a membership's write
// locks its scope row (the list_members policies, app_private.lock_list_for_member_change;
// track_sync_access on a loss), and a scope's delete holds that row before its cascade takes the
// memberships and the rows in it (tasks). Taken after the batch's other locks, the two orders
// crossed: a deadlock (40P01, 503) with an owner deleting the list.
const MEMBERSHIPS = new Map(COLLECTIONS.filter((c) => c.isScope).map((scope) => [
  scope.name,
  COLLECTIONS.filter((c) => c.memberColumn !== null && c.scopeCollection === scope.name),
]));
/** The scope ids a batch names: $1's, then those of the memberships whose ids are $2, $3, … (one list per membership collection). */
const namedScopeIds = (members: readonly CollectionDefinition[], indent: string) =>
  `array(select unnest($1::uuid[])${members.map((m, i) => `
${indent}union all select m.${quoteIdent(m.scopeColumn)} from ${rowsByIds(m.table, "m", `$${i + 2}::uuid[]`, `m.${quoteIdent(m.scopeColumn)}`)}`).join("")})`;
/** The scope ids of the caller's own memberships among those whose ids are $2, $3, … (what a leave names). */
const leftScopeIds = (members: readonly CollectionDefinition[], indent: string) =>
  `array(${members.map((m, i) => `select m.${quoteIdent(m.scopeColumn)} from ${
    rowsByIds(m.table, "m", `$${i + 2}::uuid[]`, `m.${quoteIdent(m.scopeColumn)}, m.${quoteIdent(m.memberColumn!)}`)
  }
${indent}  where m.${quoteIdent(m.memberColumn!)} = (select app_private.live_uid())`).join(`
${indent}union all `)})`;

// A batch that writes rows into scopes (creates, moves: the scope ids its ops' data names) takes
// those scope rows FOR KEY SHARE first too, before any row of its own: its writes' foreign-key
// checks take that lock anyway, but only at the write, after the sync triggers took the caller's
// usage row at the batch's creates. A member's loss of the scope (a leave, a removal) locks the
// scope row FOR UPDATE, then hands the member's rows over to the owner, waiting for the owner's
// usage row: the two crossed (40P01, the leave rolled back). Locked by membership (app_private.
// lock_scopes_written_into, SECURITY DEFINER: a signed-in caller locks only scopes they are a
// member of), not through the scope table's policies, which a row lock applies twice (SELECT and
// UPDATE: 0.5–1.7 ms a push). $1 the scope ids. A scope collection without a membership collection
// gets no statement.
export const SCOPE_KEY_SHARE_SQL = new Map([...MEMBERSHIPS].filter(([, members]) => members.length > 0).map(([scope, [membership]]) => [
  scope,
  `select app_private.lock_scopes_written_into(${quoteLiteral(findCollection(scope)!.table)}::regclass, ${quoteLiteral(membership.table)}::regclass, $1::uuid[])`,
]));

// A batch that changes memberships, or changes scope rows and writes rows into scopes, takes all
// of its scope rows in ONE pass in id order (app_private.lock_scopes_in_order), each once: the
// named scope rows and the memberships' scopes FOR NO KEY UPDATE through the policies (answered),
// or, where the policies refuse one and it is the scope of one of the caller's own memberships the
// batch names (a viewer leaving), FOR UPDATE by membership, what the leave's delete policy takes
// (migrations 20261128008100, 20261128008200: a refused op on another member's row locks nothing);
// the scopes written into FOR KEY SHARE by membership. Two ordered statements, one after the
// other, crossed the purge's hand-over (the purged user's lists FOR UPDATE in id order): a push
// removing a member of L2 and adding a task to L1 (L1 < L2) held L2 while it waited for L1, which
// the hand-over held while it waited for L2; and
// a viewer's leave of L1, not locked by the pass, locked L1 at its delete, holding L2 (40P01, DBA
// reviews). $1 the named scope ids, one id list per membership collection (as namedScopeIds),
// then the scope ids written into; the left scopes come from the same membership ids.
export const SCOPE_IN_ORDER_SQL = new Map([...MEMBERSHIPS].filter(([, members]) => members.length > 0).map(([scope, members]) => [
  scope,
  `select l.id::text as id from app_private.lock_scopes_in_order(${quoteLiteral(findCollection(scope)!.table)}::regclass, ${quoteLiteral(members[0].table)}::regclass,
    ${namedScopeIds(members, "          ")},
    $${members.length + 2}::uuid[],
    ${leftScopeIds(members, "    ")}) as l(id)`,
]));

/**
 * The lock statements of a batch, in the order they are sent: per scope collection with a
 * membership collection, one statement taking its scope rows in id order (SCOPE_IN_ORDER_SQL when
 * the batch names memberships, or both changes scope rows and writes into scopes; else
 * SCOPE_KEY_SHARE_SQL when it writes into scopes: these answer only the scope rows the batch
 * names), then LOCK_SQL per other collection (the scope rows of a batch that only changes them
 * among them), in the collections' order.
 */
function lockStatements(named: Map<string, string[]>, writtenInto: Map<string, string[]>): { collection: string; text: string; parameters: string[]; only?: Set<string> }[] {
  const statements: { collection: string; text: string; parameters: string[]; only?: Set<string> }[] = [];
  const taken = new Set<string>();
  for (const [scope, members] of MEMBERSHIPS) {
    if (members.length === 0) continue;
    const namedScopes = named.get(scope)!;
    const written = writtenInto.get(scope) ?? [];
    const membersNamed = members.some((m) => named.get(m.name)!.length > 0);
    if (membersNamed || (written.length > 0 && namedScopes.length > 0)) {
      const memberIds = members.map((m) => pgArray(named.get(m.name)!));
      const only = new Set(namedScopes.map((id) => id.toLowerCase()));
      statements.push({ collection: scope, text: SCOPE_IN_ORDER_SQL.get(scope)!, parameters: [pgArray(namedScopes), ...memberIds, pgArray(written)], only });
      taken.add(scope);
    } else if (written.length > 0) {
      statements.push({ collection: scope, text: SCOPE_KEY_SHARE_SQL.get(scope)!, parameters: [pgArray(written)], only: new Set<string>() });
    }
  }
  const rest = [...named].filter(([collection, ids]) => ids.length > 0 && !taken.has(collection));
  return [...statements, ...rest.map(([collection, ids]) => ({ collection, text: LOCK_SQL.get(collection)!, parameters: [pgArray(ids)] }))];
}

// A named record's sync state as JSON text (the shape of StateRow["state"]).
const STATE_JSON = `'{"collection":"' || s.collection || '","id":"' || s.id::text || '","version":' || s.version::text ||
              ',"deleted":' || s.deleted::text || ',"field_versions":' || s.field_versions::text ||
              ',"created_at":"' || ${iso("s.created_at")} || '","updated_at":"' || ${iso("s.updated_at")} ||
              '","deleted_at":' || coalesce('"' || ${iso("s.deleted_at")} || '"', 'null') || '}'`;

// $1 op_ids, $2 and $3 the record keys (collections, ids), $4 device_id or null, $5 the
// session id, then one id list per collection in step with the database (the rows whose
// data the planner needs; schema-drift.ts: a push never needs another one).
// Ids and keys come as typed arrays, never as JSON text: see LEDGER_SQL. It reads the
// caller's device twice: its installation id (device_id: what the batch and the ledger
// name) and its row's id (device_stamp: one per user and installation, so two accounts on
// one phone are two devices to the merge), and sets the transaction's device
// (tidesync.device_id) to the row's id, with which the sync triggers stamp each changed
// field (merge.ts): none when the batch names a device that is not the caller's, and then
// nothing is written.
// The named records' state and rows come as JSON text concatenated the way the
// read-back and the pull print them (row-json.ts), each parsed once in the
// function: building them as jsonb values (jsonb_build_object, to_jsonb,
// jsonb_agg) and printing those took the backend 2.4× the CPU for a batch of
// 500 edits (docs/performance-history.md, "2026-11-26 (afternoon)").
// The caller's device: the batch's device_id ($4), else the one its session runs on ($5).
const CALLERS_DEVICE = `from app_private.devices d
   where d.user_id = (select auth.uid())
     and case when $4::uuid is null then d.session_id = $5::uuid else d.installation_id = $4::uuid end`;
const stateSql = (collections: readonly CollectionDefinition[]) => `
  select
    (select coalesce(jsonb_agg(jsonb_build_object('op_id', o.op_id, 'collection', o.collection, 'record_id', o.record_id,
                                                  'status', o.status, 'version', o.version, 'error', o.error)), '[]'::jsonb)
       from unnest($1::uuid[]) as k(op_id)
      cross join lateral (select o.* from app_private.sync_ops o
                           where o.user_id = (select auth.uid()) and o.op_id = k.op_id offset 0) o) as ledger,
    (select '[' || coalesce(string_agg(${STATE_JSON}, ','), '') || ']'
       from unnest($2::text[], $3::uuid[]) as k(collection, id)
      cross join lateral (select s.* from app_private.sync_records s
                           where s.collection = k.collection and s.id = k.id offset 0) s) as state,
    '{' || ${
  collections.map((c, i) => `
      ${quoteLiteral(`${JSON.stringify(c.name)}:[`)} || coalesce((select string_agg('{"id":"' || t.id::text || '","xmin":"' || t.xmin::text || '","data":' || ${rowJsonSql(c, "t")} || '}', ',')
                                         from ${rowsByIds(c.table, "t", `$${i + 6}::uuid[]`, "t.*, t.xmin")}), '') || ']'`).join(" || ',' ||")
} || '}' as rows,
    coalesce((select u.live_records from app_private.sync_usage u where u.user_id = (select auth.uid())), 0) as live_records,
    (select d.installation_id::text ${CALLERS_DEVICE}) as device_id,
    nullif(set_config('tidesync.device_id', coalesce((select d.id::text ${CALLERS_DEVICE}), ''), true), '') as device_stamp,
    ${iso("now()")} as now`;
export const STATE_SQL = stateSql(COLLECTIONS);
const stateStatement = perCollectionsInStep((collections) => ({ text: stateSql(collections), collections }));

// Generic plans for the push's statements: a custom plan is made again on
// every execution with the parameters as constants, and for the push's large
// jsonb parameters that cost ~15% of a 500-op batch (docs/performance-history.md).
// A generic plan is cached for the connection's life, so it must look rows up
// by key whatever the tables held when it was made: sequential scans are off
// for the push's transaction (on a small table the planner scans it instead,
// and the plan would scan it on every push as it grows), and the reads by a
// list of keys are one parameterised lookup per key (LATERAL … OFFSET 0: a
// join the planner may not turn into a hash join over the whole table).
// tests/integration/push-plans.test.ts checks the plans made on a fresh
// database.
const GENERIC_PLANS = `set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)`;
export const GENERIC_PLANS_SQL = `select ${GENERIC_PLANS}`;

// The push's first statement: its settings, then one push per user at a time
// (a transaction-level advisory lock). One statement, not two: each costs the
// function and the backend ~0.1 ms however little it does.
const SETUP_SQL = `select ${GENERIC_PLANS}, pg_advisory_xact_lock(hashtextextended('tidesync.push ' || (select auth.uid())::text, 0))`;

const APPLY_SQL = `select app_private.sync_apply($1::text::jsonb) as result`;

// The written rows as they now stand (versions from the sync triggers, columns
// the table's defaults and triggers filled), as the caller sees them: null data
// for a row the policies hide. $1: the ids. A named prepared statement, its
// generic plan made under GENERIC_PLANS_SQL like the reads above: one
// parameterised lookup per id in sync_records and in the table (LATERAL …
// OFFSET 0), whatever the tables held when it was made. (Written as a join,
// its cached plan scanned sync_records by collection alone and all of the
// table's primary key per row once made on small tables, and planning it per
// call instead cost ~1.5 ms of a 1-op push: docs/performance-history.md.)
// tests/integration/push-plans.test.ts checks its plan.
export const READ_BACK_SQL = new Map(COLLECTIONS.map((c) => [
  c.name,
  // The records' JSON as concatenated text (as the pull's entries: no JSON
  // value per record is built in Postgres), a JSON array of RECORDS_PER_ROW of
  // them per row (row-json.ts), each parsed once in the function. In no
  // particular order.
  `select '[' || string_agg(r.record, ',') || ']' as records
     from (select ${recordJsonSql({
    collection: "s.collection",
    id: "s.id",
    version: "s.version",
    deleted: "s.deleted",
    data: `case when s.deleted or t.id is null then 'null' else ${rowJsonSql(c, "t")} end`,
    updatedAt: "s.updated_at",
  })} as record,
                  (row_number() over () - 1) / ${RECORDS_PER_ROW} as chunk
             from unnest($1::uuid[]) as k(id)
            cross join lateral (select s.* from app_private.sync_records s
                                 where s.collection = ${quoteLiteral(c.name)} and s.id = k.id offset 0) s
             left join lateral (select t.* from ${c.table} t where t.id = s.id offset 0) t on true) r
    group by r.chunk`,
]));

// One typed array per column (unnest), not a JSON text of row objects: Postgres
// parses a uuid[] or text[] far faster than jsonb and builds no records from
// it (500 ledger rows: ~21% less backend CPU, docs/performance-history.md). $2: the
// batch's one device.
const LEDGER_SQL = `
  insert into app_private.sync_ops (user_id, op_id, device_id, collection, record_id, type, status, version, error)
  select (select auth.uid()), o.op_id, $2::uuid, o.collection, o.record_id, o.type, o.status, o.version, o.error
    from unnest($1::uuid[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::bigint[], $8::jsonb[])
      as o(op_id, collection, record_id, type, status, version, error)`;

interface LedgerRow {
  op_id: string;
  collection: string | null;
  record_id: string | null;
  type: string | null;
  status: string;
  version: number | null;
  error: SyncOpResult["error"] | null;
}

/** LEDGER_SQL's parameters: the rows' columns as array literals. */
function ledgerParameters(rows: LedgerRow[], deviceId: string | null): (string | null)[] {
  const column = (value: (row: LedgerRow) => string | number | null) => pgArray(rows.map(value));
  return [
    column((r) => r.op_id), deviceId, column((r) => r.collection), column((r) => r.record_id), column((r) => r.type),
    column((r) => r.status), column((r) => r.version), column((r) => (r.error === null ? null : JSON.stringify(r.error))),
  ];
}

interface StateRow {
  ledger: ({ op_id: string } & LedgerEntry)[];
  state: { collection: string; id: string; version: number; deleted: boolean; field_versions: FieldVersions; created_at: string; updated_at: string; deleted_at: string | null }[];
  /** The rows as read; `xmin`: the row version (BatchState.rowVersions). */
  rows: Record<string, { id: string; xmin: string; data: JsonObject }[]>;
  live_records: number;
  /** The caller's device's installation id (the batch's device_id, the ledger's). */
  device_id: string | null;
  /** Its row's id (app_private.devices.id): what the merge stamps and tells own writes by. */
  device_stamp: string | null;
  now: string;
}

/** STATE_SQL's row as it arrives: the state and rows still JSON text. */
type StateRowText = Omit<StateRow, "state" | "rows"> & { state: string; rows: string };

interface ApplyResult {
  failed: Refusal[];
  records: { collection: string; id: string; version: number; deleted: boolean; data: JsonObject | null; updated_at: string }[];
}

/** The records the ops name (a collection of this server, a uuid; the planner refuses the rest). */
function namedRecords(ops: readonly SyncOpEnvelope[]): { collection: string; id: string; data: unknown }[] {
  return ops.flatMap((op) => {
    const { collection, record_id } = namedRecord(op);
    return collection !== null && record_id !== null ? [{ collection, id: record_id, data: op.data }] : [];
  });
}

/** The scope an op's data points its row at (a create's, a move's), if any: a uuid in the scope column of a row that is not a scope. */
function scopePointedAt({ collection, data }: ReturnType<typeof namedRecords>[number]): { collection: string; id: string } | null {
  const definition = findCollection(collection)!;
  const scopeId = typeof data === "object" && data !== null ? (data as Record<string, unknown>)[definition.scopeColumn] : undefined;
  return !definition.isScope && typeof scopeId === "string" && isUuid(scopeId) ? { collection: definition.scopeCollection, id: scopeId.toLowerCase() } : null;
}

/** The scopes the ops' data points their rows at (scopePointedAt), by recordKey. */
function scopesPointedAt(records: ReturnType<typeof namedRecords>): Map<string, { collection: string; id: string }> {
  const scopes = new Map<string, { collection: string; id: string }>();
  for (const record of records) {
    const scope = scopePointedAt(record);
    if (scope) scopes.set(recordKey(scope.collection, scope.id), scope);
  }
  return scopes;
}

/** The rows the planner must know: those the ops name (namedRecords), and the scopes their data points at. */
function keysToRead(records: ReturnType<typeof namedRecords>, scopes = scopesPointedAt(records)): Map<string, { collection: string; id: string }> {
  const keys = new Map(records.map(({ collection, id }) => [recordKey(collection, id), { collection, id: id.toLowerCase() }]));
  for (const [key, scope] of scopes) keys.set(key, scope);
  return keys;
}

/** The collections a batch reads or writes: those its ops name, and their scopes'. */
export function collectionsOfBatch(ops: readonly SyncOpEnvelope[]): string[] {
  const names = new Set<string>();
  for (const { collection } of ops) {
    const definition = typeof collection === "string" ? findCollection(collection) : undefined;
    if (definition) names.add(definition.name).add(definition.scopeCollection);
  }
  return [...names];
}

function byCollection(keys: Iterable<{ collection: string; id: string }>, only?: (c: CollectionDefinition) => boolean): Map<string, string[]> {
  const ids = new Map<string, string[]>(COLLECTIONS.filter((c) => !only || only(c)).map((c) => [c.name, []]));
  for (const key of keys) ids.get(key.collection)?.push(key.id);
  return ids;
}

/**
 * STATE_SQL for these op_ids and records (the batch's device and session: it sets the
 * transaction's device again, the same), not yet sent: postgres.js sends a query when it is
 * first awaited, and the push sends this one after the locks and the set-up (see above).
 */
function stateQuery(tx: Tx, opIds: string[], keys: Map<string, { collection: string; id: string }>, deviceId: string | null, sessionId: string) {
  const toRead = byCollection(keys.values());
  const { text, collections } = stateStatement();
  return tx.unsafe<StateRowText[]>(text, [
    pgArray(opIds),
    pgArray([...keys.values()].map((k) => k.collection)),
    pgArray([...keys.values()].map((k) => k.id)),
    deviceId,
    sessionId,
    ...collections.map((c) => pgArray(toRead.get(c.name) ?? [])),
  ], PREPARED);
}

function parseState([text]: StateRowText[]): StateRow {
  return { ...text, state: JSON.parse(text.state), rows: KEEPS_LONG_NUMBERS.size > 0 ? parseRowsJson(text.rows) : JSON.parse(text.rows) };
}

/** The records the caller can see: sync state visible to them, and for a live one its row too. */
function visibleRecords(row: StateRow): Map<string, ServerRecord> {
  const data = new Map<string, JsonObject>();
  for (const [collection, rows] of Object.entries(row.rows)) for (const r of rows) data.set(recordKey(collection, r.id), r.data);
  const records = new Map<string, ServerRecord>();
  for (const s of row.state) {
    const key = recordKey(s.collection, s.id);
    const rowData = data.get(key);
    if (!s.deleted && !rowData) continue; // the table's policies hide the row
    records.set(key, { ...s, version: Number(s.version), data: s.deleted ? null : rowData! });
  }
  return records;
}

/** The row version (xmin) of each row read, by recordKey. */
function rowVersions(row: StateRow): Map<string, string> {
  const versions = new Map<string, string>();
  for (const [collection, rows] of Object.entries(row.rows)) for (const r of rows) versions.set(recordKey(collection, r.id), r.xmin);
  return versions;
}

/**
 * Thrown (the transaction rolls back) when the batch's write shows its plan rested on rows that
 * changed meanwhile, or on a scope row's delete the database refused (`refusedDeletes`: planned
 * again with it known, the ops in that scope are decided as if it stayed, as it does), or on the
 * delete of a record the batch created that the database refused when tried (tryNeverStored).
 */
export class StaleBatch extends ApiError {
  constructor(readonly refusedDeletes: ReadonlyMap<string, Refusal> = new Map()) {
    super("UNAVAILABLE", "the records changed while this batch was written; retry it", { headers: { "Retry-After": "1" } });
  }
}

/**
 * Applies a validated batch for the transaction's user; returns one result per op. Throws
 * StaleBatch when the transaction must be rolled back and the batch pushed again; once `replanned`,
 * a row the caller still cannot read once written is its ops' refusal instead.
 */
export async function pushBatch(
  tx: Tx,
  batch: SyncBatchEnvelope,
  caller: Pick<UserClaims, "sub" | "session_id">,
  limits: Pick<Limits, "max_record_data_bytes" | "max_live_records_per_user">,
  /** Per op index, the numbers of its data JSON.parse did not read exactly (inexact-op-numbers.ts). */
  inexactNumbers: ReadonlyMap<number, readonly InexactNumber[]> = new Map(),
  replanned = false,
  /** The scope deletes the database refused when the batch was first written (StaleBatch). */
  refusedDeletes: ReadonlyMap<string, Refusal> = new Map(),
): Promise<{ results: SyncOpResult[]; now: string; written: number; refusals: Refusal[] }> {
  // One push per user at a time: a concurrent copy of this batch (a client's retry) waits
  // here, then its ledger read (a later statement, a later snapshot) sees this one's op_ids.
  // Sent now (execute): postgres.js sends a query when it is first awaited, and the locks
  // below are awaited as they are made, so the set-up went after them; a push waiting its
  // turn then held its rows, and the locks ran without the plan settings.
  const setUp = tx.unsafe(SETUP_SQL, [], PREPARED).execute();
  const records = namedRecords(batch.ops);
  const named = byCollection(records);
  const scopes = scopesPointedAt(records);
  const locks = lockStatements(named, byCollection(scopes.values(), (c) => c.isScope))
    .map(({ collection, text, parameters, only }) => tx.unsafe<{ id: string }[]>(text, parameters, PREPARED)
      .then((rows) => rows.filter((r) => !only || only.has(r.id)).map((r) => recordKey(collection, r.id))));
  const statePromise = stateQuery(tx, batch.ops.map((op) => op.op_id), keysToRead(records, scopes), batch.device_id ?? null, caller.session_id);
  const [, writable, stateText] = await Promise.all([setUp, Promise.all(locks), statePromise]);
  const state = parseState(stateText);

  if (batch.device_id !== undefined && state.device_id === null) {
    throw new ApiError("VALIDATION_FAILED", "device_id is not one of your devices", {
      details: [{ field: "/device_id", code: "unknown_device", message: "register this installation with POST /v1/auth/session first" }],
    });
  }
  const visible = visibleRecords(state);
  const plan = planBatch(batch.ops, state.device_stamp, {
    liveRecords: state.live_records,
    ledger: new Map(state.ledger.map(({ op_id, ...entry }) => [op_id.toLowerCase(), { ...entry, version: entry.version === null ? null : Number(entry.version) }])),
    records: visible,
    writable: new Set(writable.flat()),
    rowVersions: rowVersions(state),
    refusedDeletes: (key, index) => {
      const refusal = refusedDeletes.get(key);
      return refusal && refusalError(refusal, index, findCollection(refusal.collection));
    },
  }, limits, state.now, inexactNumbers);

  // A row written here that the caller cannot see once written is never kept: it would stay where
  // they cannot list it (counted in their quota). Either they lost access to its scope while the
  // batch ran (removed from the list by a transaction that committed while the write waited for a
  // lock, its policies having let the row in before): the batch rests on a stale picture, and is
  // planned again; or, planned again, the table's SELECT policy hides a row its INSERT policy lets
  // them write: that row is refused, the rest of the batch applies.
  const tried = plan.neverStored ? tryNeverStored(tx, plan.neverStored) : undefined;
  const applied = await applyPlan(tx, plan, replanned, visible, caller.sub);
  const { createsRefused, deletesRefused } = tried ? await tried : { createsRefused: [], deletesRefused: new Map() };
  const refused = firstRefusals([...applied.failed, ...createsRefused]);
  // A scope row's delete the database refused (its DELETE policy is narrower than its UPDATE
  // policy: an editor deleting a list): the batch's ops in that scope were planned as if it were
  // gone (a task created in it NOT_FOUND, an edit of one left to the cascade, unwritten): planned
  // again with it known. Also in a batch planned again: the caller may have lost the right
  // between the two (an owner demoted), and one the plan knew of is never written.
  // A delete of a row the batch could not lock that another writer changed since the read (an
  // edit committed meanwhile, which the database's delete of the version read left alone): planned
  // again, the merge sees that edit (a conflict), or none (a write of the same values: the delete
  // applies). Raced again, the batch is a retryable 503. Told by the row as it stands after the
  // write, read again only when such a delete was left undone (rare: a plain push never reads it).
  // A delete of a record the batch created that the database refused when tried (tryNeverStored):
  // planned again, that delete is rejected and the record is created, as two batches would do.
  const cascaded = inDeletedScopes(plan);
  const readAfter = () => readAfterWrite(tx, plan, refused, cascaded, batch.device_id ?? null, caller.session_id);
  const versioned = versionedDeletesLeft(plan, refused);
  let after = versioned.size > 0 ? await readAfter() : undefined;
  const changed = after ? changedSinceRead(versioned, after.rowVersions) : new Set<string>();
  const scopeDeletesRefused = new Map([...refused].filter(([key, r]) => r.kind === "delete" && !changed.has(key) && findCollection(r.collection)?.isScope));
  if (changed.size > 0 || scopeDeletesRefused.size > 0 || deletesRefused.size > 0 || (!replanned && unreadable(applied, refused).length > 0)) {
    throw new StaleBatch(new Map([...scopeDeletesRefused, ...deletesRefused]));
  }
  // Only when the database refused a record, or the batch deleted a scope row (a list) after
  // answering ops on records in it without writing them (its cascade may have taken them): those
  // ops are answered from the rows as they stand after the write (a round trip more), not from the
  // planner's picture, which may be stale.
  after ??= await readAfter();
  const results = settle(plan, applied, refused, { records: after.records, deviceId: state.device_stamp, now: state.now }, new Set(cascaded.keys()));
  const ledgerRows: LedgerRow[] = plan.ops.filter((p) => p.logged).map((p) => {
    const result = results[p.index];
    return {
      op_id: result.op_id,
      ...p.named,
      status: result.status,
      version: result.status === "rejected" ? null : result.record?.version ?? null,
      error: result.error ?? null,
    };
  });
  if (ledgerRows.length > 0) await tx.unsafe(LEDGER_SQL, ledgerParameters(ledgerRows, state.device_id), PREPARED);
  // The SQLSTATE of each refused record, for the log line: a refusal the push did not foresee (a
  // trigger's own error, a type it has no schema for) is an op's answer, not a 500, and shows there.
  return { results, now: state.now, written: plan.written.size - refused.size, refusals: [...refused.values()] };
}

/**
 * The records the database refused and the scopes their ops point at, and those `cascaded` names
 * (inDeletedScopes), as the caller sees them after the write (step 1's read, a later snapshot),
 * with their rows' xmin. No read when there are none.
 */
async function readAfterWrite(
  tx: Tx,
  plan: BatchPlan,
  refused: Map<string, Refusal>,
  cascaded: Map<string, { collection: string; id: string }>,
  deviceId: string | null,
  sessionId: string,
): Promise<{ records: Map<string, ServerRecord>; rowVersions: Map<string, string> }> {
  const reread = refused.size === 0 ? new Map<string, { collection: string; id: string }>()
    : keysToRead(namedRecords(plan.ops.flatMap((p) => (p.op && p.writes && refused.has(p.writes) ? [p.op] : []))));
  for (const [key, record] of cascaded) reread.set(key, record);
  if (reread.size === 0) return { records: new Map(), rowVersions: new Map() };
  const state = parseState(await stateQuery(tx, [], reread, deviceId, sessionId));
  return { records: visibleRecords(state), rowVersions: rowVersions(state) };
}

/**
 * The deletes sync_apply left undone that named the row version read (plan-batch.ts: rows the
 * batch could not lock), by recordKey: the xmin each named. Undone either because the DELETE policy
 * refused the row, or because another writer's change committed in between (the row the delete
 * waited for no longer matched).
 */
function versionedDeletesLeft(plan: BatchPlan, refused: Map<string, Refusal>): Map<string, string> {
  const versioned = new Map<string, string>();
  for (const g of plan.groups) {
    if (g.kind !== "delete") continue;
    for (const row of g.rows) {
      const key = recordKey(g.collection, row.id as string);
      if (row.xmin !== undefined && refused.get(key)?.kind === "delete") versioned.set(key, row.xmin as string);
    }
  }
  return versioned;
}

/**
 * Of those deletes, the ones whose row is live after the write at another row version (xmin) than
 * the one the delete named: another writer wrote it in between, whether or not they changed a
 * field (a write of the same values, `set body = body` or a PATCH sending what is there, is a new
 * row version with the same sync version). A delete the DELETE policy refused finds the version it
 * named. A row deleted or hidden since is answered as it stands (refusedResult), not planned again.
 */
function changedSinceRead(versioned: Map<string, string>, now: Map<string, string>): Set<string> {
  return new Set([...versioned].filter(([key, xmin]) => now.has(key) && now.get(key) !== xmin).map(([key]) => key));
}

/** The written records the caller cannot read back (live, no data) and the database did not refuse. */
function unreadable(applied: ApplyResult, refused: Map<string, Refusal>): ApplyResult["records"] {
  return applied.records.filter((r) => !r.deleted && r.data === null && !refused.has(recordKey(r.collection, r.id)));
}

/**
 * The database's refusals of the creates and deletes of records the batch creates and deletes
 * again (BatchPlan.neverStored), which the write never stores: those writes are run in a savepoint
 * and rolled back, so that the table's policies, constraints and triggers (and the live-records
 * quota) judge each such create and delete as they judge those the batch keeps, and nothing of
 * them stays. Sent now, pipelined ahead of the batch's write (no round trip of its own); only such
 * a batch has it. A delete counts as refused only when its create was not (the row was there).
 */
function tryNeverStored(tx: Tx, neverStored: NonNullable<BatchPlan["neverStored"]>) {
  const refusals = Promise.all([
    tx.unsafe("savepoint tidesync_never_stored").execute(),
    tx.unsafe<{ result: Pick<ApplyResult, "failed"> }[]>(APPLY_SQL, [JSON.stringify(neverStored.groups)], PREPARED).execute(),
    tx.unsafe("rollback to savepoint tidesync_never_stored").execute(),
  ]).then(([, [row]]) => {
    const failed = row.result.failed.filter((f) => neverStored.keys.has(recordKey(f.collection, f.id)));
    const createsRefused = failed.filter((f) => f.kind === "insert");
    const notCreated = new Set(createsRefused.map((f) => recordKey(f.collection, f.id)));
    const deletesRefused = new Map<string, Refusal>();
    for (const f of failed) if (f.kind === "delete" && !notCreated.has(recordKey(f.collection, f.id))) deletesRefused.set(recordKey(f.collection, f.id), f);
    return { createsRefused, deletesRefused };
  });
  refusals.catch(() => {}); // awaited by the caller, after the write sent behind it
  return refusals;
}

/**
 * The plan's writes. Those of a membership table (an owner's role change, a member leaving) go
 * last, in a round trip of their own once the rest is written and read back: the rest of the
 * batch is written and answered while the caller still has the access they may take away (a
 * member's last edits, then their leaving, in one batch; as two batches would). Of those, the
 * caller's own (stepping down, leaving) are written after the others' (an owner handing a list
 * over and stepping down): where the database refuses one and sync_apply retries row by row, the
 * others are still judged as the single statement judged them, by the caller's role before.
 */
async function applyPlan(tx: Tx, plan: BatchPlan, replanned: boolean, before: Map<string, ServerRecord>, callerId: string): Promise<ApplyResult> {
  // (A membership in a scope the batch deletes has no write of its own: the plan leaves it to the
  // delete's cascade. It is read back with the rest, after that cascade.)
  const deleted = deletedScopes(plan);
  const OTHERS = 1, OWN = 2;
  const rank = (key: string) => {
    const definition = findCollection(keyParts(key).collection);
    const data = before.get(key)?.data;
    if (!definition?.memberColumn || inOneOf(deleted, definition, data)) return 0;
    return data?.[definition.memberColumn] === callerId ? OWN : OTHERS;
  };
  const groupsOf = (r: number) =>
    plan.groups.map((g) => ({ ...g, rows: g.rows.filter((row) => rank(recordKey(g.collection, row.id as string)) === r) })).filter((g) => g.rows.length > 0);
  const rounds: Pick<BatchPlan, "groups" | "written">[] = [
    { groups: groupsOf(0), written: new Set([...plan.written].filter((key) => rank(key) === 0)) },
    { groups: [...groupsOf(OTHERS), ...groupsOf(OWN)], written: new Set([...plan.written].filter((key) => rank(key) !== 0)) },
  ];
  const results: ApplyResult[] = [];
  for (const writes of rounds) {
    if (writes.groups.length === 0) continue;
    results.push(replanned ? await applyReadable(tx, writes) : await applyWrites(tx, writes.groups, writes.written));
  }
  return { failed: results.flatMap((r) => r.failed), records: results.flatMap((r) => r.records) };
}

/**
 * The plan's writes, less each row the caller cannot read once written: the write is rolled back
 * (to a savepoint) and run again without that row's last write, refused NOT_READABLE_AFTER_WRITE,
 * as sync_apply isolates a row the database refuses (a row that depended on it, a task in a list
 * left out, is then the database's refusal). Each round leaves out at least one more row.
 */
async function applyReadable(tx: Tx, plan: Pick<BatchPlan, "groups" | "written">): Promise<ApplyResult> {
  const hidden: Refusal[] = [];
  for (;;) {
    const left = new Map(hidden.map((h) => [`${h.kind}:${recordKey(h.collection, h.id)}`, h]));
    const groups = plan.groups.map((g) => ({ ...g, rows: g.rows.filter((row) => !left.has(`${g.kind}:${recordKey(g.collection, row.id as string)}`)) }))
      .filter((g) => g.rows.length > 0);
    await tx.unsafe("savepoint tidesync_readable_write");
    const applied = await applyWrites(tx, groups, plan.written);
    const more = unreadable(applied, firstRefusals([...hidden, ...applied.failed]));
    if (more.length === 0) return { failed: [...hidden, ...applied.failed], records: applied.records };
    await tx.unsafe("rollback to savepoint tidesync_readable_write");
    for (const r of more) {
      // The write that left the row as it stands: its last (a re-creation after the batch's delete).
      const key = recordKey(r.collection, r.id);
      const kind = plan.groups.filter((g) => g.rows.some((row) => recordKey(g.collection, row.id as string) === key)).pop()!.kind;
      hidden.push({ collection: r.collection, id: r.id, kind, sqlstate: NOT_READABLE_AFTER_WRITE });
    }
  }
}

async function applyWrites(tx: Tx, groups: BatchPlan["groups"], written: Set<string>): Promise<ApplyResult> {
  const write = tx.unsafe<{ result: Pick<ApplyResult, "failed"> }[]>(APPLY_SQL, [JSON.stringify(groups)], PREPARED);
  // Sent with the write, run after it (same transaction): a write that fails aborts them too.
  const toRead = [...byCollection([...written].map(keyParts))].filter(([, ids]) => ids.length > 0);
  const readBacks = toRead.map(([collection, ids]) => tx.unsafe<{ records: string }[]>(READ_BACK_SQL.get(collection)!, [pgArray(ids)], PREPARED));
  const [[row], ...read] = await Promise.all([write, ...readBacks]);
  const records = read.flatMap((rows, i) =>
    rows.flatMap((r): ApplyResult["records"] => (KEEPS_LONG_NUMBERS.has(toRead[i][0]) ? parseRowsJson(r.records) : JSON.parse(r.records)))
  );
  return { failed: row.result.failed, records };
}

/**
 * The live records ops are answered with that the batch does not write, in a scope row the batch
 * deletes (by recordKey): the delete's cascade may remove them. None (and no read) in a batch that
 * deletes no scope row.
 */
function inDeletedScopes(plan: BatchPlan): Map<string, { collection: string; id: string }> {
  const records = new Map<string, { collection: string; id: string }>();
  const deleted = deletedScopes(plan);
  if (deleted.size === 0) return records;
  for (const p of plan.ops) {
    const record = p.result.record;
    if (p.writes || !record?.data || p.result.status === "applied") continue;
    if (inOneOf(deleted, findCollection(record.collection), record.data)) {
      records.set(recordKey(record.collection, record.id), { collection: record.collection, id: record.id.toLowerCase() });
    }
  }
  return records;
}

/** The recordKeys of the scope rows (lists) the batch deletes. */
function deletedScopes(plan: Pick<BatchPlan, "groups">): Set<string> {
  return new Set(plan.groups.flatMap((g) =>
    g.kind === "delete" && findCollection(g.collection)?.isScope ? g.rows.map((row) => recordKey(g.collection, row.id as string)) : []
  ));
}

/** Each refused record's first refusal: a record written in several phases fails again in the later ones. */
function firstRefusals(failed: Refusal[]): Map<string, Refusal> {
  const refused = new Map<string, Refusal>();
  for (const f of failed) {
    const key = recordKey(f.collection, f.id);
    if (!refused.has(key)) refused.set(key, f);
  }
  return refused;
}

/**
 * Final results: written records in their stored state; the ops of a record the database
 * refused are answered from the rows as they stand after the write (refusedResult). A record
 * written in several phases (deleted, then re-created) stands as the phases before the refused
 * one left it: their ops stay applied. The ops answered with a record in a scope the batch
 * deleted (`cascaded`, inDeletedScopes) are answered from the record as it stands after the write;
 * those of a written record with no state after it (created and deleted again), without one.
 */
function settle(plan: BatchPlan, applied: ApplyResult, refused: Map<string, Refusal>, after: AfterRefusal, cascaded: Set<string>): SyncOpResult[] {
  const stored = new Map(applied.records.map((r) => [recordKey(r.collection, r.id), r]));
  return plan.ops.map((p) => {
    if (!p.writes) {
      const key = p.result.record ? recordKey(p.result.record.collection, p.result.record.id) : "";
      return cascaded.has(key) ? cascadedResult(p, after.records.get(key)) : p.result;
    }
    const refusal = refused.get(p.writes);
    const steps = plan.phasesOf.get(p.writes);
    const refusedFrom = refusal && steps ? steps.find((s) => s.kind === refusal.kind)?.phase ?? 0 : 0;
    if (refusal && p.phase >= refusedFrom) return refusedResult(p, refusal, after);
    const record = stored.get(p.writes);
    return record ? { ...p.result, record } : neverStoredResult(p);
  });
}

/**
 * The answer to an op of a record the batch wrote that has no state after the write: one the batch
 * created and deleted again (its own delete, or its list's, whose cascade finds no row of it). No
 * row, tombstone or version of it was ever stored and no pull lists it, so no answer carries the
 * record the planner made of it: applied ops are answered without one (nothing to keep), and an
 * upsert after the delete, which met that planned tombstone, is NOT_FOUND, as on an id nobody has.
 */
function neverStoredResult(p: PlannedOp): SyncOpResult {
  const { record: _planned, ...result } = p.result;
  if (result.status !== "conflict") return result;
  return { op_id: result.op_id, status: "rejected", error: notFound(p.index, p.named.collection!) };
}
