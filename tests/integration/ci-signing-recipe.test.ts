// docs/test-builds.md's bash recipe for CI's signed requests ("What CI
// signs"), run as written against the real server: the feedback read and the
// PATCH it shows both pass, so the copy-pasteable example stays right.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, stack } from "../support/harness.ts";
import { binaryRelease, freshChannel, publish, testerGroup, WEBHOOK_SECRET } from "../support/releases.ts";

const run = promisify(execFile);

async function recipe(): Promise<string> {
  const doc = await readFile(path.join(import.meta.dirname, "../../docs/test-builds.md"), "utf8");
  const block = /In bash \(any request[^\n]*\n\n```bash\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/test-builds.md: no bash recipe under \"What CI signs\"");
  return block[1];
}

/** The JSON documents curl printed one after the other (no newline between them). */
function jsonDocuments(text: string): unknown[] {
  const documents: unknown[] = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === "}" && --depth === 0) documents.push(JSON.parse(text.slice(start, i + 1)));
  }
  return documents;
}

describe("docs/test-builds.md: the bash recipe for CI's signed requests", () => {
  it("reads a release's feedback and rolls it back, as written", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 200));
    const sent = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: "from the recipe", platform: "ios", build_number: 200 } });
    expect(sent.status, sent.text).toBe(201);

    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", await recipe()], {
      env: { ...process.env, TIDESYNC_API: stack.apiUrl, TIDESYNC_RELEASES_WEBHOOK_SECRET: WEBHOOK_SECRET, RELEASE_ID: id },
      timeout: 30_000,
    });
    const [read, patched] = jsonDocuments(stdout) as [{ feedback: { body: string }[] }, unknown];
    expect(read.feedback.map((f) => f.body)).toEqual(["from the recipe"]);
    expect(patched).toMatchObject({ id, status: "rolled_back" });
    expect((await adminSql`select status from app_private.releases where id = ${id}`)[0].status).toBe("rolled_back");
  });
});
