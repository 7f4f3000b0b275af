// Seed section: the sample to-do app's records (fixtures/sample-todo.json) for
// the sample users, as a push would have written them: per user, versions
// 1..n in fixture order, every field stamped with its record's version (no
// device), and a sync head whose last_seq and live_records match. Each data
// object is checked against its collection's schema and the size limit.
import { z } from "zod";
import { findCollection } from "../../functions/_shared/collections.ts";
import { DEFAULT_LIMITS } from "../../functions/_shared/limits.ts";
import type { FieldVersions } from "../../functions/_shared/merge.ts";
import { recordDataBytes } from "../../functions/_shared/record-size.ts";
import { readFixture, sqlLiteral } from "./seed-sql.ts";
import { loadSampleUsers } from "./sample-users.ts";

export const sampleTodoSchema = z.object({
  _label: z.string().includes("SAMPLE"),
  users: z.array(z.object({
    user_id: z.uuid(),
    records: z.array(z.object({
      collection: z.string(),
      id: z.uuid(),
      at: z.iso.datetime(),
      data: z.record(z.string(), z.unknown()),
    })).min(1),
  })),
});
export type SampleTodo = z.infer<typeof sampleTodoSchema>;

export async function loadSampleTodo(): Promise<SampleTodo> {
  const fixture = sampleTodoSchema.parse(await readFixture("sample-todo.json"));
  const known = new Set((await loadSampleUsers()).users.map((u) => u.id));
  for (const user of fixture.users) {
    if (!known.has(user.user_id)) throw new Error(`sample-todo.json: ${user.user_id} is not a sample user`);
    for (const record of user.records) {
      const collection = findCollection(record.collection);
      if (!collection) throw new Error(`sample-todo.json: unknown collection ${record.collection}`);
      const parsed = collection.patch.safeParse(record.data);
      if (!parsed.success) throw new Error(`sample-todo.json: ${record.collection}/${record.id}: ${parsed.error.message}`);
      if (recordDataBytes(record.data) > DEFAULT_LIMITS.max_record_data_bytes) throw new Error(`sample-todo.json: ${record.id} is too large`);
    }
  }
  return fixture;
}

export async function sampleTodoSql(): Promise<string> {
  const fixture = await loadSampleTodo();
  const lines = [
    "-- Sample to-do records (fixtures/sample-todo.json). SAMPLE DATA: lists and tasks of the sample users.",
    "-- The head comes first: records_check_head refuses versions the head has not handed out.",
  ];
  for (const user of fixture.users) {
    const uid = sqlLiteral(user.user_id);
    const last = user.records.at(-1)!.at;
    lines.push(
      `insert into app_private.sync_heads (user_id, last_seq, live_records, updated_at)`,
      `values (${uid}, ${user.records.length}, ${user.records.length}, ${sqlLiteral(last)})`,
      `on conflict (user_id) do nothing;`,
      `insert into app_private.records (user_id, collection, id, version, change_seq, data, field_versions, deleted, created_at, updated_at) values`,
    );
    const rows = user.records.map((record, index) => {
      const version = index + 1;
      const stamps: FieldVersions = Object.fromEntries(Object.keys(record.data).map((field) => [field, { v: version, d: null }]));
      return `  (${uid}, ${sqlLiteral(record.collection)}, ${sqlLiteral(record.id)}, ${version}, ${version}, ` +
        `${sqlLiteral(JSON.stringify(record.data))}::jsonb, ${sqlLiteral(JSON.stringify(stamps))}::jsonb, false, ` +
        `${sqlLiteral(record.at)}, ${sqlLiteral(record.at)})`;
    });
    lines.push(rows.join(",\n"), `on conflict do nothing;`);
  }
  return lines.join("\n");
}
