// A synced table with column kinds the sample app does not have, pushed to
// through the real function (POST /v1/sync/batch, GET /v1/meta) on a stack of
// its own (tests/support/probe-stack.ts): what a developer who follows
// docs/security-model.md ("Making a new table syncable") and their users would
// notice. The table decides: what SQL as `authenticated` accepts, the push
// applies; what the database refuses is that op's `rejected` with the field
// it concerns, never a 500 for the batch.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, call } from "../support/harness.ts";
import { type ProbeStack, type ProbeUser, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";
import { requestLogLine } from "../support/request-log.ts";
import { upsert } from "../support/shared-lists.ts";

// Every column granted, the generated and identity-always ones too (as a developer might).
const COLUMNS = [
  "label", "note", "amount", "day", "ratio", "mood", "tags", "at", "email", "doubled", "seq", "code", "initials", "blob", "span", "clock", "due",
  "tag", "tags_ci", "path", "addr", "stretch", "flags", "price", "handle", "pair", "clock_tz", "instants",
];

let probe: ProbeStack;

beforeAll(async () => {
  probe = await startProbeStack("colkinds", [
    `create domain public.tidesync_test_kinds_nonblank as text not null check (value <> '')`,
    `create domain public.tidesync_test_kinds_email as text constraint kinds_email_check check (value ~ '^[^@]+@[^@]+$')`,
    `create type public.tidesync_test_kinds_mood as enum ('happy', 'sad')`,
    `create domain public.tidesync_test_kinds_instant as timestamptz`,
    `create extension if not exists citext with schema extensions`,
    `create extension if not exists ltree with schema extensions`,
    `create type public.tidesync_test_kinds_pair as (a text, b integer)`,
    `create table public.tidesync_test_kinds (
       id uuid primary key,
       list_id uuid not null references public.lists (id) on delete cascade,
       label public.tidesync_test_kinds_nonblank default 'unnamed',
       note text, amount numeric(10, 2), day date, ratio real, mood public.tidesync_test_kinds_mood, tags text[], at timestamp,
       email public.tidesync_test_kinds_email, initials char(4), blob bytea, span interval, clock time, due public.tidesync_test_kinds_instant,
       doubled integer generated always as (char_length(note) * 2) stored,
       seq bigint generated always as identity,
       code text not null,
       tag extensions.citext, tags_ci extensions.citext[], path extensions.ltree, addr inet, stretch int4range, flags bit(3), price money,
       handle name, pair public.tidesync_test_kinds_pair, clock_tz timetz, instants timestamptz[])`,
    // A trigger whose lookup finds nothing for some rows: `select … into strict` raises no_data_found (P0002);
    // it fills code, NOT NULL without a default, unless the note asks it not to.
    // A function the trigger calls for some rows, every API role's EXECUTE revoked (the project's own habit).
    `create function public.tidesync_test_kinds_secret() returns void language sql set search_path = '' as $f$ select $f$`,
    `revoke all on function public.tidesync_test_kinds_secret() from public, anon, authenticated, service_role`,
    `create function public.tidesync_test_kinds_look_up() returns trigger language plpgsql set search_path = '' as $f$
     declare
       found_id uuid;
     begin
       if new.note = 'look up a missing row' then
         select l.id into strict found_id from public.lists l where false;
       end if;
       if new.note = 'call a revoked function' then
         perform public.tidesync_test_kinds_secret();
       end if;
       if new.code is null and new.note is distinct from 'leave code null' then
         new.code := 'K-' || left(new.id::text, 4);
       end if;
       return new;
     end $f$`,
    `create trigger tidesync_test_kinds_look_up before insert or update on public.tidesync_test_kinds for each row execute function public.tidesync_test_kinds_look_up()`,
    ...syncedLikeTasks("tidesync_test_kinds", COLUMNS),
  ]);
});

afterAll(async () => {
  await probe?.stop();
});

async function pushOps(user: ProbeUser, ops: unknown[]): Promise<ApiResponse> {
  return await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
}

/** A new row in the user's personal list. */
const create = (user: ProbeUser, data: Record<string, unknown>) => upsert("tidesync_test_kinds", randomUUID(), { list_id: user.userId, ...data });

interface Result {
  status: string;
  record?: { version: number; data: Record<string, unknown> };
  error?: { code: string; details?: { field: string; code: string }[] };
}

describe("a synced table's own column kinds, through the real function", () => {
  it("a NOT NULL domain column with a default: a create without it and an update that does not touch it apply; /v1/meta says it is not nullable", async () => {
    const user = await probe.newUser();
    const row = create(user, { note: "first" });
    const created = await pushOps(user, [row]);
    expect(created.status, created.text).toBe(200);
    expect(created.body.results[0]).toMatchObject({ status: "applied", record: { data: { label: "unnamed", note: "first" } } });
    const version = created.body.results[0].record.version as number;

    const edited = await pushOps(user, [upsert("tidesync_test_kinds", row.record_id, { note: "edited" }, version)]);
    expect(edited.body.results[0]).toMatchObject({ status: "applied", record: { data: { label: "unnamed", note: "edited" } } });

    const meta = await call("/v1/meta", { baseUrl: probe.apiUrl });
    expect(meta.body.collection_schemas.tidesync_test_kinds.fields.label).toMatchObject({ nullable: false, has_default: true });
  });

  it("a generated or identity-always column, granted or not, is published read-only; writing it rejects that op (read_only), not the batch", async () => {
    const meta = await call("/v1/meta", { baseUrl: probe.apiUrl });
    for (const name of ["doubled", "seq"]) {
      expect(meta.body.collection_schemas.tidesync_test_kinds.fields[name], name).toMatchObject({ insertable: false, updatable: false });
    }
    const user = await probe.newUser();
    const response = await pushOps(user, [create(user, { note: "abc", doubled: 1 }), create(user, { seq: 5 }), create(user, { note: "abc" })]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as Result[];
    expect(results.map((r) => [r.status, r.error?.details?.map((d) => [d.field, d.code])])).toEqual([
      ["rejected", [["/ops/0/data/doubled", "read_only"]]],
      ["rejected", [["/ops/1/data/seq", "read_only"]]],
      ["applied", undefined],
    ]);
    expect(results[2].record!.data).toMatchObject({ doubled: 6 });
  });

  it("a value its column's type or domain refuses rejects that op on its field; the rest of the batch applies", async () => {
    const user = await probe.newUser();
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: 123456789.12 }, "amount"], // numeric(10,2) overflow
      [{ day: "0000-01-01" }, "day"], // no year 0
      [{ ratio: 1e39 }, "ratio"], // real overflow
      [{ ratio: 1e-50 }, "ratio"], // real underflow
      [{ mood: "grumpy" }, "mood"], // not in the enum
      [{ tags: "abc" }, "tags"], // not an array
      [{ at: "not a time" }, "at"],
      [{ email: "no at sign" }, "email"], // the domain's CHECK
      [{ label: null }, "label"], // the domain's NOT NULL
      [{ label: "" }, "label"], // the domain's CHECK
    ];
    const fine = create(user, { amount: 12.5, day: "2026-11-26", ratio: 1.5, mood: "sad", tags: ["a"], at: "2026-11-26T10:00:00", email: "me@example.com" });
    const response = await pushOps(user, [...cases.map(([data]) => create(user, data)), fine]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as Result[];
    cases.forEach(([data, column], i) => {
      expect(results[i], JSON.stringify(data)).toMatchObject({ status: "rejected", error: { code: "VALIDATION_FAILED" } });
      expect(results[i].error!.details!.map((d) => d.field), JSON.stringify(data)).toEqual([expect.stringMatching(new RegExp(`^/ops/${i}/data/${column}(/|$)`))]);
    });
    expect(results[cases.length]).toMatchObject({ status: "applied", record: { data: { mood: "sad", email: "me@example.com" } } });
  });

  it("an error of the table's own trigger (no_data_found) rejects that op, not the batch (was a 500)", async () => {
    const user = await probe.newUser();
    const response = await pushOps(user, [create(user, { note: "look up a missing row" }), create(user, { note: "fine" })]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as Result[];
    expect(results[0]).toMatchObject({ status: "rejected", error: { code: "VALIDATION_FAILED", details: [{ field: "/ops/0/data" }] } });
    expect(results[1].status).toBe("applied");
  });

  it("a trigger calling a function authenticated may not execute: that op FORBIDDEN, the batch applied, and the log line names the missing grant", async () => {
    const user = await probe.newUser();
    const response = await pushOps(user, [create(user, { note: "call a revoked function" }), create(user, { note: "fine" })]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as Result[];
    expect(results[0]).toMatchObject({ status: "rejected", error: { code: "FORBIDDEN" } });
    expect(results[1].status).toBe("applied");
    const line = await requestLogLine(probe.logFile, response.headers.get("x-request-id")!);
    expect(line).toMatchObject({ db_refusals: ["42501"], db_permission_denied: ["permission denied for function tidesync_test_kinds_secret"] });
  });

  it("a NOT NULL column a BEFORE INSERT trigger fills: a create may leave it out; left null, that op is rejected required on it", async () => {
    const meta = await call("/v1/meta", { baseUrl: probe.apiUrl });
    expect(meta.body.collection_schemas.tidesync_test_kinds.fields.code).toMatchObject({ nullable: false, has_default: false, filled_by_trigger: true });
    const user = await probe.newUser();
    const filled = create(user, { note: "no code" });
    const response = await pushOps(user, [filled, create(user, { note: "leave code null" }), create(user, { code: "mine" })]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as Result[];
    expect(results[0]).toMatchObject({ status: "applied", record: { data: { code: `K-${filled.record_id.slice(0, 4)}` } } });
    expect(results[1]).toMatchObject({ status: "rejected", error: { code: "VALIDATION_FAILED", details: [{ field: "/ops/1/data/code", code: "required" }] } });
    expect(results[2]).toMatchObject({ status: "applied", record: { data: { code: "mine" } } });
  });

  it("a value its column would store as another one (a number as char(n), bytea or interval text, an offset or \"now\" in a timestamp, a second's digits past the microsecond) rejects that op; a domain is checked as its base type (/v1/meta: base_type)", async () => {
    const meta = await call("/v1/meta", { baseUrl: probe.apiUrl });
    expect(meta.body.collection_schemas.tidesync_test_kinds.fields.due).toMatchObject({ type: "tidesync_test_kinds_instant", base_type: "timestamp with time zone" });
    expect(meta.body.collection_schemas.tidesync_test_kinds.fields.email).toMatchObject({ type: "tidesync_test_kinds_email", base_type: "text" });
    const user = await probe.newUser();
    const cases: [Record<string, unknown>, string][] = [
      [{ initials: 12 }, "invalid_type"], // was stored as "12  "
      [{ initials: true }, "invalid_type"], // was stored as "true"
      [{ blob: 5 }, "invalid_type"], // was stored as \x35
      [{ span: 3600 }, "invalid_type"], // was stored as 01:00:00
      [{ at: "2026-01-01T10:00:00+05:00" }, "invalid_format"], // the offset was dropped
      [{ at: "now" }, "invalid_format"], // was the server's time
      [{ at: "-infinity" }, "invalid_format"],
      [{ clock: 930 }, "invalid_type"],
      [{ due: "9999-12-31T23:59:59-14:00" }, "out_of_range"], // was pulled back as the year 10000
      [{ due: "2026-01-01T23:59:59.9999999Z" }, "not_exact"], // was stored as the next day's midnight
      [{ at: "2026-01-01T10:00:00.1234567" }, "not_exact"], // was stored as .123457
      [{ clock: "10:00:00.0000005" }, "not_exact"], // was stored as 10:00:00.000001
      [{ due: "2026-01-01T00:00:00.1234567Z" }, "not_exact"], // .NET's "o": was stored as .123457
      [{ clock_tz: "23:59:59.9999999+00" }, "not_exact"], // was stored as 24:00:00+00
      [{ instants: ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.1234567Z"] }, "not_exact"], // its second element was stored as .123457
    ];
    const fine = create(user, {
      initials: "ab", blob: "\\x00ff", span: "P1Y2M", at: "2026-01-01T10:00:00.1234560", clock: "24:00:00", due: "9999-12-31T23:59:59Z",
      clock_tz: "10:00:00.123456000+05:30", instants: ["2026-01-01T00:00:00.123456000Z"],
    });
    const response = await pushOps(user, [...cases.map(([data]) => create(user, data)), fine]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as Result[];
    expect(results.slice(0, cases.length).map((r) => [r.status, r.error?.details?.map((d) => [d.field, d.code])])).toEqual(
      cases.map(([data, code], i) => {
        const [name, value] = Object.entries(data)[0];
        return ["rejected", [[`/ops/${i}/data/${name}${Array.isArray(value) ? `/${value.length - 1}` : ""}`, code]]];
      }),
    );
    expect(results.find((r) => r.error?.details?.some((d) => d.code === "not_exact"))?.error?.details?.[0])
      .toMatchObject({ message: "has more than 6 digits of a second: Postgres keeps microseconds, and would store it rounded" });
    expect(results[cases.length]).toMatchObject({
      status: "applied",
      record: { data: {
        initials: "ab  ", blob: "\\x00ff", span: "1 year 2 mons", at: "2026-01-01T10:00:00.123456", clock: "24:00:00", due: "9999-12-31T23:59:59+00:00",
        clock_tz: "10:00:00.123456+05:30", instants: ["2026-01-01T00:00:00.123456+00:00"],
      } },
    });
    const [{ count }] = await probe.admin`select count(*)::int as count from public.tidesync_test_kinds where list_id = ${user.userId}`;
    expect(count).toBe(1);
  });

  it("a type with no schema of its own (citext, ltree, inet, a range, bit, money, name) takes a string, as a pull lists it; a composite an object; a value of another kind rejects that op (invalid_type), never stored as its text (/v1/meta: category)", async () => {
    const meta = await call("/v1/meta", { baseUrl: probe.apiUrl });
    const fields = meta.body.collection_schemas.tidesync_test_kinds.fields;
    expect(fields.tag).toMatchObject({ type: "extensions.citext", category: "S" });
    expect(fields.tags_ci).toMatchObject({ type: "extensions.citext[]", category: "S" });
    expect(fields.path).toMatchObject({ category: "U" });
    expect(fields.pair).toMatchObject({ type: "tidesync_test_kinds_pair", category: "C" });
    expect(fields.email).toMatchObject({ base_type: "text", category: "S" });
    const user = await probe.newUser();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ tag: 12 }, "tag", "invalid_type"], // was stored as "12"
      [{ tag: { a: 1 } }, "tag", "invalid_type"], // was stored as '{"a": 1}'
      [{ tag: true }, "tag", "invalid_type"], // was stored as "true"
      [{ tags_ci: ["a", 1] }, "tags_ci/1", "invalid_type"],
      [{ path: 5 }, "path", "invalid_type"], // was stored as the ltree 5
      [{ addr: 10 }, "addr", "invalid_type"],
      [{ stretch: [1, 3] }, "stretch", "invalid_type"],
      [{ flags: 101 }, "flags", "invalid_type"], // was stored as B'101'
      [{ price: 12 }, "price", "invalid_type"], // was stored as $12.00
      [{ handle: "é".repeat(32) }, "handle", "too_long"], // 64 bytes: was stored cut to 31 characters
      [{ pair: "(x,1)" }, "pair", "invalid_type"], // was pulled back as an object
    ];
    const fine = create(user, {
      tag: "Ab", tags_ci: ["a", null], path: "a.b", addr: "10.0.0.1", stretch: "[1,3)", flags: "101", price: "$12.00", handle: "é".repeat(31), pair: { a: "x", b: 1 },
    });
    const response = await pushOps(user, [...cases.map(([data]) => create(user, data)), fine]);
    expect(response.status, response.text).toBe(200);
    const results = response.body.results as Result[];
    expect(results.slice(0, cases.length).map((r) => [r.status, r.error?.details?.map((d) => [d.field, d.code])])).toEqual(
      cases.map(([, field, code], i) => ["rejected", [[`/ops/${i}/data/${field}`, code]]]),
    );
    expect(results[cases.length]).toMatchObject({
      status: "applied",
      record: { data: { tag: "Ab", tags_ci: ["a", null], path: "a.b", addr: "10.0.0.1", stretch: "[1,3)", flags: "101", price: "$12.00", handle: "é".repeat(31), pair: { a: "x", b: 1 } } },
    });
    const [{ count }] = await probe.admin`select count(*)::int as count from public.tidesync_test_kinds where list_id = ${user.userId}`;
    expect(count).toBe(1);
  });
});
