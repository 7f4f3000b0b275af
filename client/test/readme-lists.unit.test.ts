// client/README.md's lists of codes and error classes, checked against the code they describe,
// so that a code or class added later is documented too.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { syncOpErrorCodeSchema } from "../../functions/_shared/schemas/sync.ts";
import * as errors from "../api-error.ts";

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** The README's text from the bullet or table row starting with `start`, up to the next bullet or row. */
function section(start: string): string {
  const from = README.indexOf(start);
  expect(from, start).toBeGreaterThanOrEqual(0);
  const rest = README.slice(from + start.length);
  const end = rest.search(/\n(- \*\*|\| |## )/);
  return end < 0 ? rest : rest.slice(0, end);
}

describe("client/README.md", () => {
  it("lists every code the client itself gives as a status's lastErrorCode", () => {
    const status = section("- **Status**");
    for (const code of errors.CLIENT_ONLY_CODES) expect(status, code).toContain(`\`${code}\``);
  });

  it("says what each op error code means for the user under Refused writes", () => {
    const refused = section("- **Refused writes**");
    for (const code of syncOpErrorCodeSchema.options) expect(refused, code).toContain(`\`${code}\``);
  });

  it("names every error class in the file table's api-error.ts row", () => {
    const row = section("| `api-error.ts` |");
    const classes = Object.entries(errors).filter(([name, value]) => typeof value === "function" && value.prototype instanceof Error && name !== "TidesyncError").map(([name]) => name);
    expect(classes.length).toBeGreaterThan(5);
    for (const name of classes) expect(row, name).toContain(`\`${name}\``);
  });
});
