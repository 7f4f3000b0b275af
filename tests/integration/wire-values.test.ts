// Values the sync wire cannot carry: NaN and ±Infinity in a float column,
// 'infinity', BC dates and years past 9999 in a date or timestamp column.
// Postgres takes them from SQL and the Data API, and a pull lists them as
// to_json prints them ("NaN", "infinity", "0044-03-15 BC") in fields GET
// /v1/meta publishes as number and date: no client reads them as such, nor
// pushes the record back (its check, built from /v1/meta, refuses them). The
// sample app's tables refuse them (migration 20261126002500), and
// docs/security-model.md asks the same checks of an app's own tables (the
// push itself refuses an instant outside the years 0001-9999 UTC, which an
// offset can carry there; writes through the Data API need the check).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TidesyncValidationError } from "../../client/api-error.ts";
import { CollectionCatalog } from "../../client/collection-catalog.ts";
import type { ServerSchema } from "../../client/storage.ts";
import { type ApiResponse, call, createTestUser } from "../support/harness.ts";
import { type ProbeStack, type ProbeUser, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";
import { asUser, pullAll, upsert } from "../support/shared-lists.ts";

const MAX_DOUBLE = 1.7976931348623157e308;

/** The client's own check of a write (built from GET /v1/meta), as it would check an edit of every field a user may change. */
async function clientCheck(apiUrl?: string): Promise<(collection: string, data: Record<string, unknown>) => void> {
  const meta = await call("/v1/meta", { baseUrl: apiUrl });
  expect(meta.status, meta.text).toBe(200);
  const schema = meta.body as ServerSchema;
  const catalog = new CollectionCatalog(schema);
  return (collection, data) => {
    const fields = schema.collection_schemas[collection].fields;
    const editable = Object.fromEntries(Object.entries(data).filter(([field]) => fields[field]?.updatable));
    catalog.check(collection, editable, false);
  };
}

describe("the sample app's float and date columns", () => {
  it("a write through the Data API of a value a pull could not carry fails 23514 naming the column's check; what a pull lists, a client can push back", async () => {
    const alice = await createTestUser();
    const list = alice.userId; // her personal list
    const tries: [table: "tasks" | "lists", column: "position" | "due_date", value: string, constraint: string][] = [
      ["tasks", "position", "NaN", "tasks_position_finite"],
      ["tasks", "position", "Infinity", "tasks_position_finite"],
      ["tasks", "position", "-Infinity", "tasks_position_finite"],
      ["tasks", "due_date", "infinity", "tasks_due_date_range"],
      ["tasks", "due_date", "-infinity", "tasks_due_date_range"],
      ["tasks", "due_date", "0044-03-15 BC", "tasks_due_date_range"],
      ["tasks", "due_date", "12345-01-01", "tasks_due_date_range"],
      ["lists", "position", "NaN", "lists_position_finite"],
      ["lists", "position", "-Infinity", "lists_position_finite"],
    ];
    const outcomes: string[] = [];
    for (const [table, column, value, constraint] of tries) {
      // supabase-js: from(table).insert({ …, [column]: value }), which PostgREST runs as the user,
      // the value read by the column type's input function.
      const type = column === "position" ? "double precision" : "date";
      const title = `${column} ${value}`;
      const error = await asUser(alice, (tx) => table === "tasks"
        ? tx.unsafe(`insert into public.tasks (list_id, title, ${column}) values ($1::uuid, $2::text, $3::text::${type})`, [list, title, value])
        : tx.unsafe(`insert into public.lists (title, ${column}) values ($1::text, $2::text::${type})`, [title, value]))
        .then(() => null, (e: { code?: string; constraint_name?: string }) => e);
      outcomes.push(`${table}.${column} = ${value}: ${error ? `${error.code} ${error.constraint_name}` : "stored"} (want 23514 ${constraint})`);
    }
    // The bounds are values.
    await asUser(alice, (tx) => tx`insert into public.tasks (list_id, title, position, due_date) values
      (${list}, 'first', ${-MAX_DOUBLE}, '0001-01-01'), (${list}, 'last', ${MAX_DOUBLE}, '9999-12-31')`);

    // What a user notices: a record the device pulls and cannot push back.
    const check = await clientCheck();
    const { changes } = await pullAll(alice);
    const unsendable: string[] = [];
    for (const change of changes) {
      if (change.deleted || !change.data) continue;
      try {
        check(change.collection, change.data);
      } catch (error) {
        unsendable.push(`${change.collection} ${JSON.stringify(change.data)}: ${JSON.stringify((error as TidesyncValidationError).details ?? (error as Error).message)}`);
      }
    }
    expect(unsendable, "pulled records the client's check refuses").toEqual([]);
    expect(changes.filter((c) => c.collection === "tasks").map((c) => [c.data?.title, c.data?.position, c.data?.due_date]).sort()).toEqual([
      ["first", -MAX_DOUBLE, "0001-01-01"],
      ["last", MAX_DOUBLE, "9999-12-31"],
    ]);
    expect(outcomes).toEqual(tries.map(([table, column, value, constraint]) => `${table}.${column} = ${value}: 23514 ${constraint} (want 23514 ${constraint})`));
  });
});

describe("an app's timestamp column (docs/security-model.md: give it a range check)", () => {
  let probe: ProbeStack;

  beforeAll(async () => {
    probe = await startProbeStack("wirevalues", [
      `create table public.tidesync_test_events (
         id uuid primary key,
         list_id uuid not null references public.lists (id) on delete cascade,
         -- as docs/security-model.md asks
         starts_at timestamptz constraint events_starts_at_range check (starts_at >= '0001-01-01 00:00:00+00' and starts_at < '10000-01-01 00:00:00+00'),
         -- without it
         ends_at timestamptz)`,
      ...syncedLikeTasks("tidesync_test_events", ["starts_at", "ends_at"]),
    ]);
  });

  afterAll(async () => {
    await probe?.stop();
  });

  async function pushOps(user: ProbeUser, ops: unknown[]): Promise<ApiResponse> {
    return await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
  }

  it("a push of an instant past 9999-12-31 or before 0001-01-01 UTC (an offset carries it there) is that op's out_of_range, checked or not; through the Data API the check refuses it, and without it the row is pulled as a value the published schema refuses", async () => {
    const user = await probe.newUser();
    const event = (data: Record<string, unknown>) => upsert("tidesync_test_events", randomUUID(), { list_id: user.userId, ...data });
    const ops = [
      event({ starts_at: "2026-11-26T10:00:00+01:00" }),
      event({ starts_at: "9999-12-31T23:59:59-14:00" }), // 10000-01-01T13:59:59Z
      event({ starts_at: "0001-01-01T00:00:00+14:00" }), // 0001-12-31T10:00:00Z BC
      event({ ends_at: "9999-12-31T23:59:59-14:00" }),
    ];
    const response = await pushOps(user, ops);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as { status: string; error?: { code: string; details: { field: string; code: string }[] } }[];
    expect(results.map((r) => [r.status, r.error?.code, r.error?.details.map((d) => [d.field, d.code])])).toEqual([
      ["applied", undefined, undefined],
      ["rejected", "VALIDATION_FAILED", [["/ops/1/data/starts_at", "out_of_range"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/2/data/starts_at", "out_of_range"]]],
      ["rejected", "VALIDATION_FAILED", [["/ops/3/data/ends_at", "out_of_range"]]],
    ]);

    // supabase-js: from('tidesync_test_events').insert(…), run as the user. The checked column refuses it…
    const asProbeUser = (statement: string) => probe.admin.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId })}, true), set_config('role', 'authenticated', true)`;
      return await tx.unsafe(statement, [randomUUID(), user.userId]);
    }).then(() => null, (e: { code?: string; constraint_name?: string }) => `${e.code} ${e.constraint_name}`);
    expect(await asProbeUser(`insert into public.tidesync_test_events (id, list_id, starts_at) values ($1, $2, '9999-12-31T23:59:59-14:00')`)).toBe("23514 events_starts_at_range");
    // …the unchecked one stores it, and what the pull lists, the client cannot send back.
    expect(await asProbeUser(`insert into public.tidesync_test_events (id, list_id, ends_at) values ($1, $2, '9999-12-31T23:59:59-14:00')`)).toBeNull();
    const check = await clientCheck(probe.apiUrl);
    const pulled = await call(`/v1/sync/changes?collections=tidesync_test_events`, { token: user.token, baseUrl: probe.apiUrl });
    expect(pulled.status, pulled.text).toBe(200);
    const unchecked = (pulled.body.changes as { id: string; data: Record<string, unknown> }[]).find((c) => c.data?.ends_at)!;
    expect(unchecked.data.ends_at).toBe("10000-01-01T13:59:59+00:00");
    let refused: unknown = null;
    try {
      check("tidesync_test_events", unchecked.data);
    } catch (error) {
      refused = error;
    }
    expect((refused as TidesyncValidationError | null)?.details?.map((d) => [d.field, d.code])).toEqual([["/data/ends_at", "invalid_format"]]);
  });
});
