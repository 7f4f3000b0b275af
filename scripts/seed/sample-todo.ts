// Seed section: the sample to-do app (fixtures/sample-todo.json) as rows of
// public.lists, public.list_members and public.tasks. Inserted by the owner
// role, so the sync triggers record them exactly as for any other write (the
// list's creator becomes its owner; a personal list exists already: signup
// created it). Each row's data is checked against its table's columns.
import { z } from "zod";
import { findCollection } from "../../functions/_shared/collections.ts";
import { readFixture, sqlLiteral } from "./seed-sql.ts";
import { loadSampleUsers } from "./sample-users.ts";
import { uuidSchema } from "../../functions/_shared/uuid.ts";

const row = z.object({ id: uuidSchema, created_by: uuidSchema, created_at: z.iso.datetime(), data: z.record(z.string(), z.unknown()) });

export const sampleTodoSchema = z.object({
  _label: z.string().includes("SAMPLE"),
  lists: z.array(z.union([
    row.extend({ personal: z.undefined().optional(), members: z.array(z.object({ user_id: uuidSchema, role: z.enum(["owner", "editor", "viewer"]) })), tasks: z.array(row) }),
    z.object({ id: uuidSchema, personal: z.literal(true), members: z.array(z.never()).max(0), tasks: z.array(row) }),
  ])),
});
export type SampleTodo = z.infer<typeof sampleTodoSchema>;

function checkData(collection: string, data: Record<string, unknown>, where: string): void {
  const parsed = findCollection(collection)!.create.safeParse(data);
  if (!parsed.success) throw new Error(`sample-todo.json: ${where}: ${parsed.error.message}`);
}

export async function loadSampleTodo(): Promise<SampleTodo> {
  const fixture = sampleTodoSchema.parse(await readFixture("sample-todo.json"));
  const known = new Set((await loadSampleUsers()).users.map((u) => u.id));
  for (const list of fixture.lists) {
    if (list.personal) {
      if (!known.has(list.id)) throw new Error(`sample-todo.json: personal list ${list.id} is not a sample user's`);
    } else {
      if (!known.has(list.created_by)) throw new Error(`sample-todo.json: ${list.id}: ${list.created_by} is not a sample user`);
      checkData("lists", list.data, list.id);
      for (const member of list.members) if (!known.has(member.user_id)) throw new Error(`sample-todo.json: ${member.user_id} is not a sample user`);
    }
    for (const task of list.tasks) checkData("tasks", { ...task.data, list_id: list.id }, task.id);
  }
  return fixture;
}

function insert(table: string, rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return "";
  const columns = Object.keys(rows[0]);
  const values = rows.map((r) => `  (${columns.map((c) => r[c] === null ? "null" : sqlLiteral(String(r[c]))).join(", ")})`);
  return `insert into ${table} (${columns.join(", ")}) values\n${values.join(",\n")}\non conflict do nothing;`;
}

export async function sampleTodoSql(): Promise<string> {
  const fixture = await loadSampleTodo();
  const lists = fixture.lists.flatMap((l) => l.personal ? [] : [{ id: l.id, ...l.data, created_by: l.created_by, created_at: l.created_at }]);
  const members = fixture.lists.flatMap((l) => l.members.map((m) => ({ list_id: l.id, user_id: m.user_id, role: m.role })));
  const tasks = fixture.lists.flatMap((l) => l.tasks.map((t) => ({ id: t.id, list_id: l.id, ...t.data, created_by: t.created_by, created_at: t.created_at })));
  return [
    "-- Sample to-do app (fixtures/sample-todo.json). SAMPLE DATA: lists, members and tasks of the sample users.",
    "-- The sync triggers record every row; a list's creator becomes its owner.",
    insert("public.lists", lists),
    insert("public.list_members", members),
    insert("public.tasks", tasks),
  ].join("\n");
}
