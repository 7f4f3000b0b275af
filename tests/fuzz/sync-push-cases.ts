// Pushes aimed at the sync surfaces of the shared-list design: ops on every
// collection GET /v1/meta publishes, with data built from its
// `collection_schemas` (each field valid, or broken for its type), scope ids
// of the caller's lists, of a list they only view and of another user's
// private list, real record ids of both users, `device_id`s that are the
// caller's, another user's or junk, non-finite numbers written verbatim, and
// odd unicode (NUL, lone surrogates, bidi, zero-width) in collection names and
// data key names. Any answer but a 5xx in the envelope is fine; a 200 must be
// the documented shape, one result per op, and never show a row of another
// user's private list.
import fc from "fast-check";
import type postgres from "postgres";
import { syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import type { FuzzUser } from "./fuzz-context.ts";
import { junkValue, nastyString, RawNumber, stringifyWithRaw } from "./junk-values.ts";

interface FieldInfo {
  type: string;
  nullable: boolean;
  insertable: boolean;
  updatable: boolean;
  min_length?: number;
  max_length?: number;
  pattern?: string;
}

export interface SyncSurface {
  schemas: Record<string, { scope: string; fields: Record<string, FieldInfo> }>;
  /** Scope (list) ids: the caller's own, one they were invited to as a viewer, another user's private one. */
  scopes: { own: string[]; viewer: string[]; other: string[] };
  /** Real records: ones the caller can see (theirs, and a task of the list they view), and another user's private ones. */
  records: { visible: { collection: string; id: string }[]; other: { collection: string; id: string }[] };
  /** Installation ids of registered devices: the caller's and another user's. */
  devices: { own: string[]; other: string[] };
}

/** Collection and key names no table has, but a client (or an attacker) may send. */
export const ODD_NAMES: string[] = [
  "tasks\u0000", "ta\u0000sks", "\u0000", "ta\ud800sks", "\udfff", "tasks\u200b", "\u202etasks", "TASKS", "Tasks", " tasks", "tasks ",
  "lists\ufeff", "𝓽𝓪𝓼𝓴𝓼", "täsks", "tasks\n", "tasks;", "public.tasks", "app_private.sync_ops", "pg_catalog.pg_class", "list_members",
  "__proto__", "constructor", "id", "x".repeat(300), "\u0001", "e\u0301",
];

const str = (text: string) => JSON.stringify(text);

async function api(apiUrl: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Runs `work` as `user` the way PostgREST does (role authenticated with their claims). */
async function asUser<T>(sql: postgres.Sql, user: FuzzUser, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return await sql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId })}, true),
                    set_config('role', 'authenticated', true)`;
    return await work(tx);
  }) as T;
}

/**
 * Gives both users devices, lists and tasks through the API, and the caller a
 * viewer's seat on a list of the other user (invite + accept, as an app does).
 */
export async function buildSyncSurface(apiUrl: string, sql: postgres.Sql, me: FuzzUser, other: FuzzUser, rng: () => string): Promise<SyncSurface> {
  const meta = (await (await fetch(`${apiUrl}/v1/meta`)).json()) as { collection_schemas: SyncSurface["schemas"] };
  const devices = { own: [] as string[], other: [] as string[] };
  for (const [user, into] of [[me, devices.own], [other, devices.other]] as const) {
    const installationId = rng();
    const session = await user.newSession();
    const started = await api(apiUrl, session.token, "POST", "/v1/auth/session", { device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
    if (started.status >= 300) throw new Error(`POST /v1/auth/session answered ${started.status}`);
    into.push(installationId);
  }
  const push = async (user: FuzzUser, ops: unknown[]) => {
    const response = await api(apiUrl, user.token, "POST", "/v1/sync/batch", { ops });
    if (response.status !== 200 || response.body.results.some((r: { status: string }) => r.status !== "applied")) {
      throw new Error(`setting up the fuzz lists failed: ${response.status} ${JSON.stringify(response.body)}`);
    }
  };
  const upsert = (collection: string, id: string, data: unknown) => ({ op_id: rng(), collection, record_id: id, type: "upsert", base_version: null, data });
  const [myList, myTask, theirShared, theirTask, theirPrivate, theirSecret] = [rng(), rng(), rng(), rng(), rng(), rng()];
  await push(me, [upsert("lists", myList, { title: "fuzz list" }), upsert("tasks", myTask, { list_id: myList, title: "fuzz task" })]);
  await push(other, [
    upsert("lists", theirShared, { title: "shared with the fuzzer" }), upsert("tasks", theirTask, { list_id: theirShared, title: "view only" }),
    upsert("lists", theirPrivate, { title: "private" }), upsert("tasks", theirSecret, { list_id: theirPrivate, title: "secret" }),
  ]);
  const code = await asUser(sql, other, async (tx) => (await tx<{ code: string }[]>`select public.create_list_invite(${theirShared}, 'viewer') as code`)[0].code);
  await asUser(sql, me, (tx) => tx`select public.accept_list_invite(${code})`);
  return {
    schemas: meta.collection_schemas,
    scopes: { own: [me.userId, myList], viewer: [theirShared], other: [other.userId, theirPrivate] },
    records: {
      visible: [{ collection: "lists", id: myList }, { collection: "tasks", id: myTask }, { collection: "lists", id: me.userId }, { collection: "tasks", id: theirTask }],
      other: [{ collection: "lists", id: theirPrivate }, { collection: "tasks", id: theirSecret }, { collection: "lists", id: other.userId }],
    },
    devices,
  };
}

/** A value that fits the column (the database may still refuse it: that is the point). */
function validValue(surface: SyncSurface, name: string, field: FieldInfo, scope: string): fc.Arbitrary<unknown> {
  if (name === scope && field.type === "uuid") {
    return fc.constantFrom(...surface.scopes.own, ...surface.scopes.viewer, ...surface.scopes.other);
  }
  const type = field.type.replace(/\(.*\)$/, "");
  const nullable = <T>(arb: fc.Arbitrary<T>) => (field.nullable ? fc.option(arb, { freq: 5 }) : arb);
  switch (type) {
    case "text":
    case "character varying":
      if (field.pattern) return nullable(fc.constantFrom("#3a7bd5", "#FFFFFF", "#000000"));
      return nullable(fc.string({ minLength: Math.max(1, field.min_length ?? 0), maxLength: Math.min(field.max_length ?? 40, 40), unit: "grapheme" }));
    case "boolean":
      return nullable(fc.boolean());
    case "double precision":
    case "real":
    case "numeric":
      return nullable(fc.double({ noNaN: true, noDefaultInfinity: true }));
    case "smallint":
    case "integer":
    case "bigint":
      return nullable(fc.integer({ min: -1000, max: 1000 }));
    case "date":
      return nullable(fc.constantFrom("2026-12-01", "2027-02-28", "2000-01-01"));
    case "timestamp with time zone":
      return nullable(fc.constantFrom("2026-11-22T10:00:00Z", "2026-11-22T10:00:00.123456+02:00"));
    case "uuid":
      return nullable(fc.uuid({ version: 4 }));
    default:
      return junkValue;
  }
}

/** A value the column's type cannot take, or a hostile one; `nonFinite` adds numbers JSON cannot carry in JavaScript (a whole-batch 400). */
function brokenValue(nonFinite: boolean): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: junkValue },
    { weight: 1, arbitrary: fc.constantFrom("123456789012345678901234567890", "-0.0", "1E+2").map((text) => new RawNumber(text)) },
    ...(nonFinite ? [{ weight: 2, arbitrary: fc.constantFrom("1e309", "-1e999", "1e-400", "1".repeat(400)).map((text) => new RawNumber(text)) }] : []),
    { weight: 1, arbitrary: fc.constantFrom("2026-02-30", "0000-00-00", "9999-99-99T99:99:99Z", "#zzzzzz", "not-a-uuid",
      // 36 hex digits and dashes, not a uuid (once read as a scope id and failed the batch)
      "-".repeat(36), "0".repeat(35) + "-", "x".repeat(20_000)) },
    { weight: 1, arbitrary: nastyString },
  );
}

const oddName: fc.Arbitrary<string> = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ODD_NAMES) }, { weight: 1, arbitrary: nastyString });

/** The caller's data for one op of `collection`: some of its fields (valid or broken), sometimes keys no table has. */
function opData(surface: SyncSurface, collection: string, nonFinite: boolean): fc.Arbitrary<Record<string, unknown>> {
  const schema = surface.schemas[collection];
  const fields = Object.entries(schema.fields);
  const fieldValues = fc.tuple(...fields.map(([name, field]) =>
    fc.tuple(fc.nat({ max: 9 }), validValue(surface, name, field, schema.scope), brokenValue(nonFinite)).map(([roll, valid, broken]) =>
      roll < 4 ? undefined : roll < 8 ? valid : broken)));
  const unknownKeys = fc.oneof(
    { weight: 6, arbitrary: fc.constant<[string, unknown][]>([]) },
    { weight: 3, arbitrary: fc.array(fc.tuple(oddName, junkValue), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.nat({ max: 3000 }).map((n) => Array.from({ length: n }, (_, i) => [`k${i}\u0000`, i] as [string, unknown])) },
  );
  return fc.tuple(fieldValues, unknownKeys).map(([values, extra]) => {
    const data: Record<string, unknown> = {};
    fields.forEach(([name], i) => {
      if (values[i] !== undefined) data[name] = values[i];
    });
    for (const [name, value] of extra) data[name] = value;
    return data;
  });
}

interface PushCase {
  label: string;
  body: string;
  ops: { op_id: string }[] | null;
}

/**
 * One generated push: a batch of ops plus a device_id. Most batches are
 * well-formed envelopes (so the ops reach the per-op checks, the merge and
 * the database) with data, scopes, records and devices valid, borrowed from
 * another user, or broken; the rest may break any part (a whole-batch 400).
 */
export function syncPushBodies(surface: SyncSurface): fc.Arbitrary<PushCase> {
  return fc.oneof({ weight: 7, arbitrary: pushBodies(surface, false) }, { weight: 3, arbitrary: pushBodies(surface, true) });
}

function pushBodies(surface: SyncSurface, breakEnvelope: boolean): fc.Arbitrary<PushCase> {
  const collections = Object.keys(surface.schemas);
  const recordId = fc.oneof(
    { weight: 3, arbitrary: fc.uuid({ version: 4 }) },
    { weight: 3, arbitrary: fc.constantFrom(...surface.records.visible).map((r) => r.id) },
    { weight: 2, arbitrary: fc.constantFrom(...surface.records.other).map((r) => r.id) },
    { weight: 1, arbitrary: fc.constantFrom(...surface.records.visible).map((r) => r.id.toUpperCase()) },
    ...(breakEnvelope ? [{ weight: 1, arbitrary: nastyString }] : []),
  );
  const baseVersion = fc.oneof(
    { weight: 4, arbitrary: fc.constant<unknown>(null) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 10_000 }) },
    ...(breakEnvelope
      ? [
        { weight: 2, arbitrary: fc.constantFrom("1e309", "-1e309", "1e999", "123456789012345678901234567890", "1.5", "-1", "0.0").map((t) => new RawNumber(t)) },
        { weight: 1, arbitrary: junkValue },
      ]
      : []),
  );
  const op = fc.tuple(
    fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...collections) }, { weight: 2, arbitrary: breakEnvelope ? oddName : fc.constantFrom(...ODD_NAMES) }),
    recordId,
    fc.nat({ max: 9 }),
    baseVersion,
    fc.uuid({ version: 4 }),
    fc.nat(),
  ).chain(([collection, record, typeRoll, base, opId, n]) => {
    const known = Object.hasOwn(surface.schemas, collection);
    const type = typeRoll < 8 ? "upsert" : typeRoll < 9 || !breakEnvelope ? "delete" : pickOne(["UPSERT", "remove", "", 1], n);
    const data = type === "upsert" || (breakEnvelope && n % 5 === 0)
      ? (known ? opData(surface, collection, breakEnvelope) : opData(surface, pickOne(collections, n), breakEnvelope).map((d) => (n % 2 === 0 ? d : { [pickOne(ODD_NAMES, n)]: 1, ...d })))
      : fc.constant(undefined);
    return data.map((d) => ({ op_id: opId, collection, record_id: record, type, base_version: base, ...(d !== undefined ? { data: d } : {}) }));
  });
  const deviceId = fc.oneof(
    { weight: 3, arbitrary: fc.constant<unknown>(undefined) },
    { weight: 3, arbitrary: fc.constantFrom(...surface.devices.own) },
    { weight: 1, arbitrary: fc.constantFrom(...surface.devices.own).map((id) => id.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...surface.devices.other) },
    { weight: 1, arbitrary: fc.uuid({ version: 4 }) },
    ...(breakEnvelope ? [{ weight: 2, arbitrary: fc.oneof(nastyString, junkValue, fc.constant(new RawNumber("1e309"))) }] : []),
  );
  return fc.tuple(fc.array(op, { minLength: 1, maxLength: 8 }), deviceId, fc.nat({ max: 19 })).map(([ops, device, roll]) => {
    // A few batches repeat an op (same op_id twice in one batch: exactly-once within a batch too).
    if (roll === 0 && ops.length > 0) ops.push(structuredClone(ops[0]));
    const body: Record<string, unknown> = { ops, ...(device !== undefined ? { device_id: device } : {}) };
    const labels = [...new Set(ops.map((o) => (Object.hasOwn(surface.schemas, o.collection) ? o.collection : "odd-collection")))];
    return { label: `${breakEnvelope ? "broken" : "ops"}:${labels.sort().join("+")}`, body: stringifyWithRaw(body), ops: ops.map((o) => ({ op_id: String(o.op_id) })) };
  });
}

function pickOne<T>(items: T[], n: number): T {
  return items[n % items.length];
}

/** What a 200 answer to a generated push must hold: the documented shape, one result per op, no row of another user's private list. */
export function checkPushAnswer(surface: SyncSurface, ops: { op_id: string }[] | null, body: unknown): string[] {
  const parsed = syncBatchResponseSchema.safeParse(body);
  if (!parsed.success) return [`the 200 body is not a batch response: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join("/")} ${i.message}`).join("; ")}`];
  const problems: string[] = [];
  if (ops && parsed.data.results.length !== ops.length) problems.push(`${ops.length} ops answered with ${parsed.data.results.length} results`);
  const foreign = new Set(surface.scopes.other);
  for (const result of parsed.data.results) {
    const record = result.record;
    if (!record || record.data === null) continue;
    const scope = record.collection === "lists" ? record.id : record.data.list_id;
    if (typeof scope === "string" && foreign.has(scope)) problems.push(`a result shows ${record.collection}/${record.id} of another user's private list ${str(scope)}`);
  }
  return problems;
}
