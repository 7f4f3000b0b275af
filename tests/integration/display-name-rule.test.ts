// One rule for display_name, whichever way it is written: the app's
// profileUpdateSchema (then supabase-js), a direct write as authenticated, and
// the sign-up metadata. The database holds the rule (profiles_display_name_shape,
// app_private.trim_display_name: migration 20261127000110); it trims exactly
// what String.prototype.trim trims and counts characters (code points), and
// the schema refuses what Postgres cannot store, so the schema and the
// database never disagree on a name.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { profileUpdateSchema } from "../../functions/_shared/schemas/profile.ts";
import { toStorable } from "../../functions/_shared/storable-text.ts";
import { zodIssuesToDetails } from "../../functions/_shared/validation-details.ts";
import { adminSql, createTestUser, type TestUser } from "../support/harness.ts";
import { asUser } from "../support/shared-lists.ts";

// Every code point String.prototype.trim removes, and some it keeps that look like space.
const trimmed = Array.from({ length: 0x10000 }, (_, i) => String.fromCharCode(i)).filter((c) => c.trim() === "");
const kept = ["\u0085", "\u180e", "\u200b", "\u2060"];

async function write(user: TestUser, name: string): Promise<{ stored: string | null } | { code: string }> {
  try {
    const [row] = await asUser(user, (tx) =>
      tx<{ display_name: string | null }[]>`update public.profiles set display_name = ${name} where id = ${user.userId} returning display_name`);
    return { stored: row.display_name };
  } catch (error) {
    return { code: (error as { code: string }).code };
  }
}

describe("display_name: one rule for the schema and the database", () => {
  it("the trimmed whitespace is exactly String.prototype.trim's", () => {
    expect(trimmed.map((c) => c.codePointAt(0)!.toString(16))).toEqual(
      ["9", "a", "b", "c", "d", "20", "a0", "1680", "2000", "2001", "2002", "2003", "2004", "2005", "2006", "2007", "2008",
       "2009", "200a", "2028", "2029", "202f", "205f", "3000", "feff"]);
  });

  it("a name with surrounding whitespace: the schema stores it trimmed, a direct write is refused; other characters are kept", async () => {
    const user = await createTestUser();
    for (const c of [...trimmed, ...kept]) {
      const name = `${c}Ada${c}`;
      const parsed = profileUpdateSchema.parse({ display_name: name }).display_name!;
      expect(await write(user, parsed), `U+${c.codePointAt(0)!.toString(16)} through the schema`).toEqual({ stored: name.trim() });
      expect(await write(user, name), `U+${c.codePointAt(0)!.toString(16)} written directly`)
        .toEqual(name.trim() === name ? { stored: name } : { code: "23514" });
    }
  });

  it("a name of whitespace only is refused by both", async () => {
    const user = await createTestUser();
    for (const c of trimmed) {
      expect(profileUpdateSchema.safeParse({ display_name: c + c }).success, `U+${c.codePointAt(0)!.toString(16)}`).toBe(false);
      expect(await write(user, c + c), `U+${c.codePointAt(0)!.toString(16)}`).toEqual({ code: "23514" });
    }
  });

  it("80 characters are allowed and 81 are not, counted the same way (code points, not UTF-16 units)", async () => {
    const user = await createTestUser();
    for (const [name, ok] of [["😀".repeat(80), true], ["😀".repeat(81), false], ["a".repeat(80), true], ["a".repeat(81), false]] as const) {
      expect(profileUpdateSchema.safeParse({ display_name: name }).success, `${name.length} units`).toBe(ok);
      expect(await write(user, name), `${name.length} units`).toEqual(ok ? { stored: name } : { code: "23514" });
    }
  });

  it("a name Postgres cannot store as written (NUL, an unpaired surrogate): the schema refuses it, invalid_characters on the field", async () => {
    const user = await createTestUser();
    for (const name of ["a\u0000b", "a\ud800b", "\udc00Ada", "Ada\ud83d"]) {
      const label = JSON.stringify(name);
      const parsed = profileUpdateSchema.safeParse({ display_name: name });
      expect(parsed.success ? [] : zodIssuesToDetails(parsed.error.issues, { display_name: name }).map((d) => [d.field, d.code]), label)
        .toEqual([["/display_name", "invalid_characters"]]);
      // What a write of it does: fails (22021), or stores another name (U+FFFD for the surrogate).
      expect(await write(user, name), label).toEqual(name.includes("\u0000") ? { code: "22021" } : { stored: toStorable(name) });
    }
  });

  it("the sign-up metadata's name is trimmed the same way", async () => {
    const userId = randomUUID();
    await adminSql`
      insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
      values ('00000000-0000-0000-0000-000000000000', ${userId}, 'authenticated', 'authenticated', ${`dn-${userId.slice(0, 8)}@test.tidesync.dev`},
              ${adminSql.json({ provider: "email" })}, ${adminSql.json({ full_name: "\u00a0\tAda Lovelace\u3000\n" })}, now(), now())`;
    const [row] = await adminSql<{ display_name: string | null }[]>`select display_name from public.profiles where id = ${userId}`;
    expect(row.display_name).toBe("Ada Lovelace");
  });

  it("the first sign-up metadata name that is a non-blank string: an empty, blank or non-string one does not hide the next", async () => {
    const nameFrom = async (meta: Record<string, unknown>) => {
      const [row] = await adminSql<{ name: string | null }[]>`
        select app_private.display_name_from_user_metadata(${adminSql.json(meta as never)}) as name`;
      return row.name;
    };
    expect(await nameFrom({ display_name: "", full_name: "Ada Lovelace" })).toBe("Ada Lovelace");
    expect(await nameFrom({ display_name: "\u3000 ", name: "Ada" })).toBe("Ada");
    expect(await nameFrom({ display_name: { a: 1 }, full_name: 42, name: "Ada" })).toBe("Ada");
    expect(await nameFrom({ display_name: { a: 1 } })).toBeNull();
    expect(await nameFrom({ display_name: true, full_name: ["Ada"] })).toBeNull();
    expect(await nameFrom({ display_name: " Grace ", full_name: "Ada Lovelace" })).toBe("Grace");
    expect(await nameFrom({ full_name: " " + "x".repeat(80) + "y" })).toBe("x".repeat(80));
    expect(await nameFrom({})).toBeNull();
  });
});
