// Feedback sent while an operator deletes the release (a documented dashboard
// action, docs/test-builds.md), or removes the tester from its group: the
// tester gets the 404 of a release that is gone or hidden, as once the change
// has committed, never a 500.
import { describe, expect, it } from "vitest";
import { adminSql, call, createTestUser, expectEnvelope } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { binaryRelease, freshChannel, publish, testerGroup } from "../support/releases.ts";

describe("POST /v1/releases/{id}/feedback while the release is deleted, or hidden from the tester", () => {
  it("waits for the delete, then answers 404 NOT_FOUND and stores nothing", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 200));
    const feedback = { body: "crashes on start", platform: "ios", build_number: 200 };

    const deleting = holdTransaction((tx) => tx`delete from app_private.releases where id = ${id}`);
    await deleting.ran;
    const sending = call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: feedback });
    await waitersOf(await deleting.pid);
    deleting.commit();
    await deleting.done;

    const sent = await sending;
    const refused = expectEnvelope(sent, 404, "NOT_FOUND");
    const again = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: feedback });
    expect(expectEnvelope(again, 404, "NOT_FOUND").message).toBe(refused.message);
    const [{ stored }] = await adminSql<{ stored: number }[]>`
      select count(*)::int as stored from app_private.release_feedback where user_id = ${tester.userId}`;
    expect(stored).toBe(0);
  });

  it("a tester removed from the group while their feedback is stored: 404 NOT_FOUND as for a release they may not see, nothing stored, never 500", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    const group = await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 200));
    const feedback = { body: "crashes on start", platform: "ios", build_number: 200 };

    // Holds the request after it found the release, before its insert: its device lookup waits for this lock.
    const pause = holdTransaction((tx) => tx`lock table app_private.devices in access exclusive mode`);
    await pause.ran;
    const sending = call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: feedback });
    await waitersOf(await pause.pid);
    // The release manager removes the tester meanwhile.
    await adminSql`delete from app_private.tester_group_members where group_id = ${group} and user_id = ${tester.userId}`;
    pause.commit();
    await pause.done;

    expectEnvelope(await sending, 404, "NOT_FOUND");
    const [{ stored }] = await adminSql<{ stored: number }[]>`
      select count(*)::int as stored from app_private.release_feedback where user_id = ${tester.userId}`;
    expect(stored).toBe(0);
  });
});
