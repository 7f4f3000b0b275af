// The append-only rule on synthetic git output: it must be able to fail.
import { describe, expect, it } from "vitest";
import { appendOnlyViolations } from "../../scripts/migrations/append-only-guard.ts";

const M = "supabase/migrations/20261122000100_app_private_and_rate_limits.sql";

describe("appendOnlyViolations", () => {
  it("no changes, or only added migrations → no violation", () => {
    expect(appendOnlyViolations({ committed: "", uncommitted: "" })).toEqual([]);
    expect(appendOnlyViolations({ committed: "A\tsupabase/migrations/20261201000000_new.sql\n", uncommitted: "" })).toEqual([]);
  });

  it("a committed modification, deletion or rename after the baseline is named", () => {
    const committed = [`M\t${M}`, "D\tsupabase/migrations/20261122010000_sync.sql", `R087\t${M}\tsupabase/migrations/20261122000101_renamed.sql`].join("\n");
    expect(appendOnlyViolations({ committed, uncommitted: "" })).toEqual([
      `${M} was modified in a commit after the baseline`,
      "supabase/migrations/20261122010000_sync.sql was deleted in a commit after the baseline",
      `${M} was renamed to supabase/migrations/20261122000101_renamed.sql in a commit after the baseline`,
    ]);
  });

  it("an uncommitted edit or deletion of a committed migration is named", () => {
    expect(appendOnlyViolations({ committed: "", uncommitted: `M\t${M}\nD\tsupabase/migrations/x.sql\n` })).toEqual([
      `${M} was modified in the working tree`,
      "supabase/migrations/x.sql was deleted in the working tree",
    ]);
  });

  it("the same change in two commits is named once; files outside supabase/migrations are ignored", () => {
    expect(appendOnlyViolations({ committed: `M\t${M}\nM\t${M}\nM\tREADME.md\n`, uncommitted: "" })).toEqual([
      `${M} was modified in a commit after the baseline`,
    ]);
  });
});
