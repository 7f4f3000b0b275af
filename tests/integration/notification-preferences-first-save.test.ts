// A user's very first save of their notification preferences, sent twice at once: a phone
// retrying its PUT after a timeout while the first attempt is still running. With no row yet
// to lock, the two saves meet at the insert (preference-store.ts).
import { expect, it } from "vitest";
import { adminSql, call, createTestUser } from "../support/harness.ts";

const PATH = "/v1/users/me/notifications";
const channels = (push: boolean) => ({ push, email: false, in_app: true });
const document = (start: string) => ({
  categories: { security: channels(true), sync_conflicts: channels(false), reminders: channels(true), product_updates: channels(false) },
  quiet_hours: { enabled: true, start, end: "06:45", timezone: "Europe/Paris" },
});

async function stored(userId: string) {
  const [row] = await adminSql<{ version: number; start: string }[]>`
    select version, quiet_hours_start as start from app_private.notification_preferences where user_id = ${userId}`;
  const audit = await adminSql<{ old_version: number | null; new_version: number }[]>`
    select old_version, new_version from app_private.notification_preference_audit where user_id = ${userId} order by id`;
  return { ...row, audit };
}

// Several rounds: each pair of PUTs races anew, and before the fix every round lost.
const ROUNDS = 5;

it("the same first save sent twice at once stores one version and one audit row, and both answers carry it", async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const user = await createTestUser();
    const answers = await Promise.all([0, 1].map(() => call(PATH, { method: "PUT", token: user.token, body: document("22:30") })));
    expect(answers.map((a) => [a.status, a.body.version, a.headers.get("etag")])).toEqual([[200, 1, '"1"'], [200, 1, '"1"']]);
    expect(await stored(user.userId)).toEqual({ version: 1, start: "22:30", audit: [{ old_version: null, new_version: 1 }] });
  }
});

it("two different first saves sent at once both apply, in turn: the later replaces the earlier (two versions, two audit rows)", async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const user = await createTestUser();
    const answers = await Promise.all(["22:30", "23:15"].map((start) => call(PATH, { method: "PUT", token: user.token, body: document(start) })));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.body.version).sort()).toEqual([1, 2]);
    const last = answers.find((a) => a.body.version === 2)!;
    expect(await stored(user.userId)).toEqual({
      version: 2,
      start: last.body.quiet_hours.start,
      audit: [{ old_version: null, new_version: 1 }, { old_version: 1, new_version: 2 }],
    });
  }
});
