import { readFile } from "node:fs/promises";
import path from "node:path";
import { ROOT } from "../lib/paths.ts";

export function sqlLiteral(value: string): string {
  return "'" + value.replaceAll("'", "''") + "'";
}

export async function readFixture(name: string): Promise<unknown> {
  return JSON.parse(await readFile(path.join(ROOT, "fixtures", name), "utf8"));
}
