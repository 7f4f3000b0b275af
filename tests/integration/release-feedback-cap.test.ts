// A user sends at most MAX_FEEDBACK_PER_USER_AND_RELEASE (50, the database's:
// app_private.max_feedback_per_user_and_release()) feedback on one release
// (docs/test-builds.md, "Feedback"). Anyone may post on an `everyone` channel, and a
// few accounts posting at the rate limit buried the testers' reports; past the cap,
// POST /v1/releases/{id}/feedback answers 403 FORBIDDEN and stores nothing.
import { describe, expect, it } from "vitest";
import { MAX_FEEDBACK_PER_USER_AND_RELEASE } from "../../functions/_shared/release-limits.generated.ts";
import { adminSql, call, createTestUser, expectEnvelope } from "../support/harness.ts";
import { binaryRelease, freshChannel, publish, signedCall, testerGroup } from "../support/releases.ts";

async function everyoneRelease(buildNumber: number): Promise<string> {
  const channel = freshChannel("production");
  await testerGroup([channel], [], { everyone: true });
  return (await publish(await binaryRelease(channel, buildNumber))).id;
}

function post(releaseId: string, token: string, body: string) {
  return call(`/v1/releases/${releaseId}/feedback`, { method: "POST", token, body: { body, platform: "ios", build_number: 300 } });
}

async function stored(releaseId: string, userId: string): Promise<number> {
  const [row] = await adminSql<{ n: number }[]>`
    select count(*)::int as n from app_private.release_feedback where release_id = ${releaseId} and user_id = ${userId}`;
  return row.n;
}

describe("feedback per user and release is capped", () => {
  it("is the database's number, published by GET /v1/meta", async () => {
    const [row] = await adminSql<{ max: number }[]>`select app_private.max_feedback_per_user_and_release() as max`;
    expect(MAX_FEEDBACK_PER_USER_AND_RELEASE).toBe(row.max);
    expect((await call("/v1/meta")).body.releases.max_feedback_per_user_and_release).toBe(row.max);
  });

  it("accounts posting past it get 403 FORBIDDEN and store nothing more; the tester's report stays on the first page", async () => {
    const id = await everyoneRelease(300);
    const tester = await createTestUser();
    expect((await post(id, tester.token, "CRASH on launch when offline (genuine report)")).status).toBe(201);

    const spammers = [await createTestUser(), await createTestUser(), await createTestUser()];
    for (const spammer of spammers) {
      const statuses: number[] = [];
      for (let i = 0; i < MAX_FEEDBACK_PER_USER_AND_RELEASE + 5; i++) statuses.push((await post(id, spammer.token, `spam ${i}`)).status);
      expect(statuses).toEqual([...Array(MAX_FEEDBACK_PER_USER_AND_RELEASE).fill(201), ...Array(5).fill(403)]);
      expect(await stored(id, spammer.userId)).toBe(MAX_FEEDBACK_PER_USER_AND_RELEASE);
    }
    const refused = expectEnvelope(await post(id, spammers[0].token, "one more"), 403, "FORBIDDEN");
    expect(refused).toMatchObject({
      retryable: false,
      message: `you have sent the most feedback one user may send on this release (${MAX_FEEDBACK_PER_USER_AND_RELEASE})`,
      details: [{ field: "/body", code: "feedback_limit_reached", message: `at most ${MAX_FEEDBACK_PER_USER_AND_RELEASE} per user and release` }],
    });

    expect((await post(id, tester.token, "and another genuine one")).status).toBe(201);
    const read = await signedCall(`/v1/releases/${id}/feedback?limit=500`, undefined, { method: "GET" });
    expect(read.body.feedback.length).toBe(3 * MAX_FEEDBACK_PER_USER_AND_RELEASE + 2);
    expect(read.body.feedback.some((f: { body: string }) => f.body.startsWith("CRASH"))).toBe(true);
  });

  it("posts sent at once cannot pass it together", async () => {
    const id = await everyoneRelease(301);
    const user = await createTestUser();
    const answers = await Promise.all(
      Array.from({ length: MAX_FEEDBACK_PER_USER_AND_RELEASE + 10 }, (_, i) => post(id, user.token, `at once ${i}`)),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(MAX_FEEDBACK_PER_USER_AND_RELEASE).fill(201), ...Array(10).fill(403)]);
    expect(await stored(id, user.userId)).toBe(MAX_FEEDBACK_PER_USER_AND_RELEASE);
  });
});
