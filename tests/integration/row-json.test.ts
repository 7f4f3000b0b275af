// A synced row's `data` on the wire (functions/api/sync/row-json.ts) is text
// concatenated per column type, no longer json_build_object. What a user would
// notice if a type were printed wrongly: a pull or push answer that is not
// JSON, or a value that differs from what Postgres' own JSON of the row says
// (a quote or control character unescaped, NaN or Infinity as a bare word, a
// date in another format). Checked on a real synced table with a column of
// every kind the printer distinguishes, its fields read as `npm run generate`
// reads them, against row_to_json of the same rows.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { rowJsonSql } from "../../functions/api/sync/row-json.ts";
import { readSyncCollections } from "../../scripts/generate/sync-collections.ts";
import { adminSql, createTestUser } from "../support/harness.ts";

const COLUMNS = `
  t_text text, t_varchar varchar(40), t_char char(3), "Odd ""name"" \\ é" text,
  t_uuid uuid, t_bool boolean, t_int2 smallint, t_int4 integer, t_int8 bigint,
  t_numeric numeric, t_money numeric(10, 2), t_real real, t_double double precision,
  t_date date, t_timestamp timestamp, t_timestamptz timestamptz, t_time time, t_interval interval,
  t_json json, t_jsonb jsonb, t_text_array text[], t_int_array integer[], t_mood tidesync_test_rowjson_mood, t_domain tidesync_test_rowjson_short_text,
  t_bytea bytea, t_inet inet`;

// Every column null, then the awkward values of each type.
const ROWS = `
  insert into public.tidesync_test_rowjson_probe (id, list_id) values ('d1000000-0000-4000-8000-000000000001', $1);
  insert into public.tidesync_test_rowjson_probe values ('d1000000-0000-4000-8000-000000000002', $1,
    e'quote " backslash \\\\ newline \\n tab \\t bell \\u0007 crab 🦀 line-sep \\u2028', 'ASCII', 'ab', 'odd',
    'D1000000-0000-4000-8000-00000000000A', true, -32768, 2147483647, 9223372036854775807,
    'NaN', 12345678.90, 'Infinity', '-Infinity',
    'infinity', '2026-11-26 01:02:03.456789', '2026-11-26 01:02:03.456789+05:30', '23:59:59.999999', '1 year 2 mons 3 days 04:05:06',
    '{"a": [1, 2.50, "x"], "b": null}', '{"b": null, "a": [1, 2.50, "x"]}', array['a"b', null, 'c\\d'], array[1, null, 3], 'happy', 'short',
    '\\x00ff', '192.168.0.1/24');
  insert into public.tidesync_test_rowjson_probe values ('d1000000-0000-4000-8000-000000000003', $1,
    '', '', '', '', '00000000-0000-0000-0000-000000000000', false, 0, 0, 0,
    '-0.000001', -0.01, '-0', '1e-320',
    '-infinity', '0001-01-01 00:00:00 BC', '-infinity', '00:00', '-1 day',
    '[]', '0', '{}', '{}', 'sad', '',
    '', '::1');`;

interface Compared {
  id: string;
  printed: string | null;
  same: boolean;
}

/** Each probe row printed by rowJsonSql, and whether it equals Postgres' own JSON of the row (without id). */
async function printProbeRows(tx: postgres.TransactionSql): Promise<Compared[]> {
  const probe = (await readSyncCollections(tx as unknown as postgres.Sql)).find((c) => c.name === "tidesync_test_rowjson_probe");
  if (!probe) throw new Error("the probe table is not synced");
  return await tx.unsafe<Compared[]>(`
    select t.id::text as id, ${rowJsonSql(probe, "t")} as printed,
           (${rowJsonSql(probe, "t")})::jsonb = (row_to_json(t)::jsonb - 'id') as same
      from public.tidesync_test_rowjson_probe t order by t.id`);
}

describe("row-json: a synced row's data as the wire prints it", () => {
  it("is valid JSON equal to Postgres' own JSON of the row, for every column type, null and awkward values included", async () => {
    const owner = await createTestUser();
    const rollback = new Error("rolled back on purpose");
    let compared: Compared[] = [];
    await adminSql.begin(async (tx) => {
      await tx.unsafe(`set local timezone = 'UTC'`); // as the function's connections print times
      await tx.unsafe(`create type public.tidesync_test_rowjson_mood as enum ('happy', 'sad')`);
      await tx.unsafe(`create domain public.tidesync_test_rowjson_short_text as text check (char_length(value) <= 10)`);
      await tx.unsafe(`create table public.tidesync_test_rowjson_probe (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, ${COLUMNS})`);
      await tx.unsafe(`alter table public.tidesync_test_rowjson_probe enable row level security`);
      await tx.unsafe(`grant select on public.tidesync_test_rowjson_probe to authenticated`); // else npm run generate refuses it
      await tx.unsafe(`select app_private.enable_sync('public.tidesync_test_rowjson_probe', 'list_id')`);
      await tx.unsafe(ROWS.replaceAll("$1", `'${owner.userId}'`));
      compared = await printProbeRows(tx);
      throw rollback;
    }).catch((error) => {
      if (error !== rollback) throw error;
    });

    expect(compared).toHaveLength(3);
    for (const row of compared) {
      expect(row.same, `row ${row.id}: ${row.printed}`).toBe(true);
      expect(() => JSON.parse(row.printed!), `row ${row.id} is JSON`).not.toThrow();
    }
    const awkward = JSON.parse(compared[1].printed!);
    expect(awkward.t_text).toBe('quote " backslash \\ newline \n tab \t bell \u0007 crab 🦀 line-sep \u2028');
    expect(awkward['Odd "name" \\ é']).toBe("odd");
    expect(awkward.t_uuid).toBe("d1000000-0000-4000-8000-00000000000a");
    expect([awkward.t_numeric, awkward.t_real, awkward.t_double, awkward.t_date]).toEqual(["NaN", "Infinity", "-Infinity", "infinity"]);
    expect(awkward.t_timestamptz).toBe("2026-11-25T19:32:03.456789+00:00");
    expect(Object.keys(JSON.parse(compared[0].printed!))).not.toContain("id");
    expect(Object.values(JSON.parse(compared[0].printed!)).filter((v) => v !== null)).toEqual([owner.userId]);
  });
});
