// `npm run generate` refuses a synced table whose scope column's foreign key
// to its scope table does anything but `on delete cascade` when the scope row
// goes (scripts/generate/sync-collection-checks.ts): `no action` (the default
// of `references public.lists (id)`) and `restrict` refuse the list's delete
// while a row is in it, so the account purge (which deletes the lists that go
// with the account) failed 23503 on every run and a push's delete of such a
// list was refused; `set null` fails on the NOT NULL scope column (23502) the
// same way; `set default` would move the rows into another list, past its
// policies, to its members. The message names the table, the constraint and
// the statement that replaces it.
import { describe, expect, it } from "vitest";
import { generateWithTable } from "../support/generate-test-table.ts";

const NAME = "cascade_notes";
const TABLE = `public.tidesync_test_${NAME}`;
const KEY = "tidesync_test_cascade_notes_list_id_fkey";
const withKey = (action: string) => `alter table ${TABLE} drop constraint ${KEY},
  add constraint ${KEY} foreign key (list_id) references public.lists (id) ${action}`;

describe("npm run generate and a synced table's scope key", () => {
  it("refuses a scope key without on delete cascade (references public.lists (id)), naming the table, the key and the statement", async () => {
    await expect(generateWithTable(NAME, { before: [withKey("")] })).rejects.toThrow(
      new RegExp(
        `public\\.tidesync_test_cascade_notes: its scope column list_id references public\\.lists \\(${KEY}\\) on delete no action.*23503.*` +
          `alter table public\\.tidesync_test_cascade_notes drop constraint ${KEY}, add constraint ${KEY} foreign key \\(list_id\\) references public\\.lists \\(id\\) on delete cascade`,
        "s",
      ),
    );
  });

  it("refuses restrict, set null and set default too, each named", async () => {
    for (const [action, named] of [["on delete restrict", "restrict"], ["on delete set null", "set null"], ["on delete set default", "set default"]]) {
      await expect(generateWithTable(NAME, { before: [withKey(action)] }))
        .rejects.toThrow(`public.tidesync_test_cascade_notes: its scope column list_id references public.lists (${KEY}) on delete ${named}`);
    }
  });

  it("refuses a later migration's key without the cascade", async () => {
    await expect(generateWithTable(NAME, { after: [withKey("on delete no action")] }))
      .rejects.toThrow(`public.tidesync_test_cascade_notes: its scope column list_id references public.lists (${KEY}) on delete no action`);
  });

  it("takes the table with on delete cascade (the sample's too)", async () => {
    expect(await generateWithTable(NAME)).toEqual(expect.arrayContaining(["tidesync_test_cascade_notes", "tasks", "list_members"]));
  });
});
