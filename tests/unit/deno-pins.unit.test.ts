// The function (Deno, deno.json) and Node (package.json: vitest, generators,
// the client) must run the very same versions of every shared npm package.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";

const denoJson = JSON.parse(readFileSync(path.join(ROOT, "functions/api/deno.json"), "utf8")) as { imports: Record<string, string> };
const packageJson = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};
const nodePins = { ...packageJson.devDependencies, ...packageJson.dependencies };

/** "npm:@hono/zod-openapi@1.6.3", "npm:/hono@4.13.19/" → [name, version]. */
function parseNpmSpecifier(specifier: string): [string, string] | undefined {
  const match = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)@([^/]+)\/?$/.exec(specifier);
  return match ? [match[1], match[2]] : undefined;
}

const npmImports = Object.entries(denoJson.imports).filter(([, target]) => target.startsWith("npm:"));

describe("deno.json npm pins", () => {
  it("has npm imports to compare", () => {
    expect(npmImports.length).toBeGreaterThan(0);
  });

  it.each(npmImports)("%s → %s is pinned exactly as in package.json", (_alias, target) => {
    const parsed = parseNpmSpecifier(target);
    expect(parsed, `${target} is not an exact npm:<name>@<version> specifier`).toBeDefined();
    const [name, version] = parsed!;
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect(nodePins[name], `${name} is missing from package.json`).toBe(version);
  });

  it("package.json pins exact versions (no ranges)", () => {
    for (const [name, version] of Object.entries(nodePins)) {
      expect(version, name).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    }
  });
});
