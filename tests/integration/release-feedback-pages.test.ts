// The release manager reads a release's feedback in keyset pages (docs/test-builds.md,
// "Feedback"): GET /v1/releases/{id}/feedback answers at most 500 entries, newest first,
// and next_before, passed as `before`, continues after the last of them. Without it a
// release with more feedback than a page (anyone may post on an `everyone` channel) hid
// all but the newest 500 from the API.
import { describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, expectEnvelope } from "../support/harness.ts";
import { binaryRelease, freshChannel, publish, signedCall, testerGroup } from "../support/releases.ts";

interface Page {
  feedback: { id: string; body: string }[];
  has_more: boolean;
  next_before: string | null;
}

async function readPage(releaseId: string, query: string): Promise<Page> {
  const read = await signedCall(`/v1/releases/${releaseId}/feedback?${query}`, undefined, { method: "GET" });
  expect(read.status, read.text).toBe(200);
  return read.body;
}

/** Every page of `limit` entries, following next_before. */
async function readAll(releaseId: string, limit: number): Promise<{ ids: string[]; pages: Page[] }> {
  const pages: Page[] = [];
  let before: string | null = null;
  do {
    const page = await readPage(releaseId, `limit=${limit}${before === null ? "" : `&before=${before}`}`);
    pages.push(page);
    before = page.next_before;
  } while (before !== null && pages.length < 100);
  return { ids: pages.flatMap((p) => p.feedback.map((f) => f.id)), pages };
}

async function everyoneRelease(buildNumber: number): Promise<string> {
  const channel = freshChannel("production");
  await testerGroup([channel], [], { everyone: true });
  return (await publish(await binaryRelease(channel, buildNumber))).id;
}

describe("GET /v1/releases/{id}/feedback in pages", () => {
  it("following next_before reaches every entry once, newest first, entries written at the same instant included", async () => {
    const id = await everyoneRelease(300);
    const testers = [await createTestUser(), await createTestUser()];
    // Seven entries, three of them at one instant (one transaction's now()): the id orders those.
    await adminSql`
      insert into app_private.release_feedback (release_id, user_id, platform, build_number, body, created_at)
      select ${id}, (${testers.map((t) => t.userId)}::uuid[])[1 + i % 2], 'ios', 300, 'entry ' || i,
             case when i between 3 and 5 then timestamptz '2026-11-20 10:00:00.003500+00'
                  else timestamptz '2026-11-20 10:00:00+00' + i * interval '1 millisecond' end
        from generate_series(1, 7) i`;
    const expected = (await adminSql<{ id: string }[]>`
      select id from app_private.release_feedback where release_id = ${id} order by created_at desc, id desc`).map((r) => r.id);

    const { ids, pages } = await readAll(id, 3);
    expect(ids).toEqual(expected);
    expect(pages.map((p) => [p.feedback.length, p.has_more])).toEqual([[3, true], [3, true], [1, false]]);
    expect(pages.at(-1)!.next_before).toBeNull();
    // A page that ends exactly at the last entry says so: nothing comes after it.
    expect((await readAll(id, 7)).pages.map((p) => [p.feedback.length, p.has_more, p.next_before])).toEqual([[7, false, null]]);
  });

  it("a report buried under 600 newer entries is beyond the first 500 and reached on the next page", async () => {
    const id = await everyoneRelease(301);
    const tester = await createTestUser();
    const sent = await call(`/v1/releases/${id}/feedback`, {
      method: "POST",
      token: tester.token,
      body: { body: "CRASH on launch when offline (genuine report)", platform: "ios", build_number: 301 },
    });
    expect(sent.status, sent.text).toBe(201);
    // 12 accounts, each at the cap of 50 per release (release-feedback-cap.test.ts).
    const spammers = await Promise.all(Array.from({ length: 12 }, () => createTestUser()));
    await adminSql`
      insert into app_private.release_feedback (release_id, user_id, platform, build_number, body, created_at)
      select ${id}, (${spammers.map((s) => s.userId)}::uuid[])[1 + i % 12], 'ios', 301, 'spam ' || i, now() + i * interval '1 millisecond'
        from generate_series(1, 600) i`;

    const first = await readPage(id, "limit=500");
    expect(first.feedback.some((f) => f.body.startsWith("CRASH"))).toBe(false);
    expect(first.has_more).toBe(true);
    const second = await readPage(id, `limit=500&before=${first.next_before}`);
    expect(second.feedback.map((f) => f.body).at(-1)).toBe("CRASH on launch when offline (genuine report)");
    expect([second.feedback.length, second.has_more, second.next_before]).toEqual([101, false, null]);
  });

  it("a `before` the server did not issue is 400 VALIDATION_FAILED on /before, and reads nothing", async () => {
    const id = await everyoneRelease(302);
    for (const before of ["x", "2026-11-20T10:00:00Z", `99999999999999999_${id}`, `1764151200000000_not-a-uuid`]) {
      const read = await signedCall(`/v1/releases/${id}/feedback?before=${encodeURIComponent(before)}`, undefined, { method: "GET" });
      const error = expectEnvelope(read, 400, "VALIDATION_FAILED");
      expect(error.details?.map((d) => d.field)).toEqual(["/before"]);
    }
  });
});
