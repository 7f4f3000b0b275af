// docs/test-builds.md's bash recipe for CI's signed requests ("What CI
// signs"), and its loop over the pages of feedback ("Feedback"), run as written
// against the real server: the feedback read, the PATCH and every page pass, so
// the copy-pasteable examples stay right.
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

/** The paging loop of "Feedback", which uses the recipe's `sign`. */
async function pagingLoop(): Promise<string> {
  const doc = await readFile(path.join(import.meta.dirname, "../../docs/test-builds.md"), "utf8");
  const sign = /^sign\(\) \{\n[\s\S]*?\n\}\n/m.exec(await recipe());
  const block = /In bash, with `sign` from \[What CI\s+signs\]\(#what-ci-signs\):\n\n```bash\n([\s\S]*?)```/.exec(doc);
  if (!sign || !block) throw new Error("docs/test-builds.md: no paging loop under \"Feedback\", or no `sign` in the recipe");
  return sign[0] + block[1];
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

  it("reads every page of a release's feedback with the paging loop, as written", async () => {
    const channel = freshChannel();
    await testerGroup([channel], []);
    const { id } = await publish(await binaryRelease(channel, 200));
    // 550 entries, more than a page of 500: 11 users at the cap of 50 each.
    const users = await Promise.all(Array.from({ length: 11 }, () => createTestUser()));
    await adminSql`
      insert into app_private.release_feedback (release_id, user_id, platform, build_number, body)
      select ${id}, (${users.map((u) => u.userId)}::uuid[])[1 + i % 11], 'ios', 200, 'entry ' || i from generate_series(1, 550) i`;

    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", await pagingLoop()], {
      env: { ...process.env, TIDESYNC_API: stack.apiUrl, TIDESYNC_RELEASES_WEBHOOK_SECRET: WEBHOOK_SECRET, RELEASE_ID: id },
      timeout: 30_000,
    });
    const bodies = stdout.trim().split("\n").map((line) => (JSON.parse(line) as { body: string }).body);
    expect(new Set(bodies).size).toBe(550);
  });
});
