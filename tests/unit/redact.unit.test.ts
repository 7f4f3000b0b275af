// What the scripts print of a database URL: never its password (npm start's banner and a failed
// command's message, e.g. `supabase db push --db-url=postgres://owner:<password>@…`).
import { describe, expect, it } from "vitest";
import { redactPasswords, redactUrl } from "../../scripts/lib/redact.ts";
import { runOrThrow } from "../../scripts/lib/run.ts";

describe("redacting database passwords", () => {
  it("redactUrl shows a URL's password as ***, and an unparsable URL not at all", () => {
    expect(redactUrl("postgres://tidesync_owner:JGG_T7nI@127.0.0.1:55932/tidesync")).toBe("postgres://tidesync_owner:***@127.0.0.1:55932/tidesync");
    expect(redactUrl("postgres://postgres@127.0.0.1:5432/postgres")).toBe("postgres://postgres@127.0.0.1:5432/postgres");
    expect(redactUrl("not a URL")).toBe("(unparsable URL)");
  });

  it("redactPasswords hides every URL's password in a command line or its output, and leaves the rest", () => {
    expect(redactPasswords("supabase db push --db-url=postgres://owner:s3cr%2Ft@127.0.0.1:5432/db --include-all\nat postgresql://a:b@h/x"))
      .toBe("supabase db push --db-url=postgres://owner:***@127.0.0.1:5432/db --include-all\nat postgresql://a:***@h/x");
    expect(redactPasswords("postgres://postgres@127.0.0.1/db and time 10:30 at user@example.com")).toBe("postgres://postgres@127.0.0.1/db and time 10:30 at user@example.com");
  });

  it("a password holding an unescaped @ or : is hidden whole, as a URL parser reads it (to the last @ before the host)", () => {
    expect(redactPasswords("--db-url=postgres://owner:p@ss:w@rd@127.0.0.1:5432/db?sslmode=require&x=a@b done"))
      .toBe("--db-url=postgres://owner:***@127.0.0.1:5432/db?sslmode=require&x=a@b done");
    expect(redactUrl("postgres://owner:p@ss@127.0.0.1:5432/db")).toBe("postgres://owner:***@127.0.0.1:5432/db");
  });

  it("a password given as a libpq keyword (password=…) is hidden too", () => {
    expect(redactPasswords("connect: host=127.0.0.1 user=owner password=s3cr3t dbname=x")).toBe("connect: host=127.0.0.1 user=owner password=*** dbname=x");
  });

  it("the banner's URL and a command's text are masked by the same rule", () => {
    for (const url of ["postgres://tidesync_owner:JGG_T7nI@127.0.0.1:55932/tidesync", "postgresql://a:b@h/x", "postgres://postgres@127.0.0.1:5432/postgres"]) {
      expect(redactUrl(url)).toBe(redactPasswords(url));
    }
  });

  it("a command that fails says what ran and what it printed, without the password", async () => {
    const url = "postgres://tidesync_owner:JGG_T7nI@127.0.0.1:1/tidesync";
    const failed = runOrThrow(process.execPath, ["-e", "console.error(process.argv.at(-1)); process.exit(3)", "--", `--db-url=${url}`]);
    await expect(failed).rejects.toThrow(/exited with 3/);
    const message = await failed.catch((error: Error) => error.message);
    expect(message).toContain("postgres://tidesync_owner:***@127.0.0.1:1/tidesync");
    expect(message).not.toContain("JGG_T7nI");
  });
});
