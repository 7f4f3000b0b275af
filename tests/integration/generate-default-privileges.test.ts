// `npm run generate` refuses a synced table whose column default or generated column calls a
// function authenticated may not execute, or takes a sequence's next value it may not use
// (scripts/generate/sync-collection-checks.ts): Postgres checks that privilege of the writer, so
// every create that left the column out was refused (a push's op FORBIDDEN "you may not make
// this change to this record", which named no cause), while a create that sent it worked. The
// project's own habit, `revoke all on function … from public, anon, authenticated`, makes it.
import { describe, expect, it } from "vitest";
import { generateWithTable } from "../support/generate-test-table.ts";

const NAME = "default_notes";
const TABLE = `public.tidesync_test_${NAME}`;
/** `create function public.tidesync_test_…(…)`, then every API role's EXECUTE revoked, as the project's own functions do. */
const revoked = (create: string, signature: string) => [create, `revoke all on function ${signature} from public, anon, authenticated, service_role`];
const NEXT_CODE = revoked(
  `create function public.tidesync_test_next_code() returns text language sql immutable set search_path = '' as $$ select 'c' $$`,
  "public.tidesync_test_next_code()",
);
const SHOUT = revoked(
  `create function public.tidesync_test_shout(p text) returns text language sql immutable set search_path = '' as $$ select upper(p) $$`,
  "public.tidesync_test_shout(text)",
);

describe("npm run generate and what a synced column's default uses", () => {
  it("refuses a default calling a function authenticated may not execute, naming the column and the grant", async () => {
    const refusal = await generateWithTable(NAME, {
      before: [...NEXT_CODE, `alter table ${TABLE} add column code text not null default public.tidesync_test_next_code()`],
    }).then(() => "taken", (error: Error) => error.message);
    expect(refusal).toContain(
      `${TABLE}: the default of code calls public.tidesync_test_next_code(), which authenticated may not execute, and Postgres checks that ` +
        `privilege of the writer, so every create that leaves code out is refused`,
    );
    expect(refusal).toContain("grant execute on function public.tidesync_test_next_code() to authenticated");
  });

  it("refuses a generated column calling one, and a default taking a sequence's next value authenticated may not use", async () => {
    await expect(generateWithTable(NAME, {
      before: [...SHOUT,
        `alter table ${TABLE} add column shout text generated always as (public.tidesync_test_shout(body)) stored`],
    })).rejects.toThrow(`${TABLE}: the generated column shout calls public.tidesync_test_shout(p text), which authenticated may not execute`);
    await expect(generateWithTable(NAME, {
      before: [`create sequence public.tidesync_test_numbers`, `revoke all on sequence public.tidesync_test_numbers from public, anon, authenticated, service_role`,
        `alter table ${TABLE} add column n bigint not null default nextval('public.tidesync_test_numbers')`],
    })).rejects.toThrow(
      `${TABLE}: the default of n takes the next value of the sequence public.tidesync_test_numbers, which authenticated may not use`,
    );
  });

  it("takes the table once authenticated may run what its defaults use", async () => {
    expect(await generateWithTable(NAME, {
      before: [...NEXT_CODE, `grant execute on function public.tidesync_test_next_code() to authenticated`,
        `alter table ${TABLE} add column code text not null default public.tidesync_test_next_code()`],
    })).toEqual(expect.arrayContaining(["tidesync_test_default_notes", "tasks"]));
  });
});
