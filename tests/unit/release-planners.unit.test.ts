// The pure decisions of test-build distribution: Standard Webhooks
// verification against the reference implementation, deterministic rollouts,
// the update check and the Expo Updates answer.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  expoCandidates,
  type ExpoDeletion,
  type ExpoRequest,
  type IdRange,
  planExpoUpdate,
  releaseIdRanges,
  republishedUpdateId,
  republishTime,
  unnamedUpdate,
} from "../../functions/_shared/releases/plan-expo-update.ts";
import { planUpdateCheck } from "../../functions/_shared/releases/plan-update-check.ts";
import { inRollout, rolloutBucket } from "../../functions/_shared/releases/rollout.ts";
import {
  checkWebhookHeaders,
  decodeWebhookSecret,
  requestLine,
  requestPayload,
  verifyWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
} from "../../functions/_shared/releases/webhook-signature.ts";

const SECRET = `whsec_${Buffer.from("a-test-secret-of-thirty-two-bytes!!").toString("base64")}`;
const key = decodeWebhookSecret(SECRET);
const encode = (text: string) => new TextEncoder().encode(text);

function signed(body: string, id = `msg_${randomUUID()}`, at = new Date()) {
  return { id, timestamp: String(Math.floor(at.getTime() / 1000)), signature: new Webhook(SECRET).sign(id, at, body) };
}

describe("verifyWebhook (against standardwebhooks' own signatures)", () => {
  const now = Math.floor(Date.now() / 1000);

  it("accepts what the reference implementation signs, for any body", async () => {
    await fc.assert(fc.asyncProperty(fc.string(), async (body) => {
      expect(await verifyWebhook(key, signed(body), [encode(body)], now)).toMatchObject({ ok: true });
    }), { numRuns: 50 });
  });

  it("accepts a list of signatures with one match (key rotation), refuses other versions", async () => {
    const headers = signed("{}");
    const rotated = { ...headers, signature: `v1,${Buffer.alloc(32).toString("base64")} ${headers.signature}` };
    expect((await verifyWebhook(key, rotated, [encode("{}")], now)).ok).toBe(true);
    const v2 = { ...headers, signature: headers.signature.replace(/^v1,/, "v2,") };
    expect(await verifyWebhook(key, v2, [encode("{}")], now)).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("refuses a changed body, id or timestamp, and a timestamp outside the tolerance", async () => {
    const headers = signed("{\"a\":1}");
    expect(await verifyWebhook(key, headers, [encode("{\"a\":2}")], now)).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifyWebhook(key, { ...headers, id: "msg_other" }, [encode("{\"a\":1}")], now)).toEqual({ ok: false, reason: "bad_signature" });
    const sent = Number(headers.timestamp);
    expect((await verifyWebhook(key, headers, [encode("{\"a\":1}")], sent + WEBHOOK_TOLERANCE_SECONDS)).ok).toBe(true);
    expect(await verifyWebhook(key, headers, [encode("{\"a\":1}")], sent + WEBHOOK_TOLERANCE_SECONDS + 1)).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(await verifyWebhook(key, headers, [encode("{\"a\":1}")], sent - WEBHOOK_TOLERANCE_SECONDS - 1)).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(await verifyWebhook(key, { ...headers, signature: undefined }, [encode("{\"a\":1}")], now)).toEqual({ ok: false, reason: "missing_headers" });
  });

  it("checkWebhookHeaders (before the body is read) refuses what the headers decide, as verifyWebhook does, and passes whatever may still match", async () => {
    const good = signed("{}");
    const refusals: [string, typeof good, string][] = [
      ["no id", { ...good, id: "" }, "missing_headers"],
      ["an id with a space", { ...good, id: "msg 1" }, "missing_headers"],
      ["no signature", { ...good, signature: "" }, "missing_headers"],
      ["a timestamp in milliseconds", { ...good, timestamp: `${good.timestamp}000` }, "bad_timestamp"],
      ["a timestamp that is no number", { ...good, timestamp: "soon" }, "bad_timestamp"],
      // Stale against the clock the checks are given (\`now\`, read when the suite started): the seconds
      // this suite took before this test (a loaded machine: more than one) must not make it fresh.
      ["a stale timestamp", { ...good, timestamp: String(now - WEBHOOK_TOLERANCE_SECONDS - 1) }, "stale_timestamp"],
      ["only another version", { ...good, signature: good.signature.replace(/^v1,/, "v2,") }, "bad_signature"],
      ["a v1 signature of the wrong length", { ...good, signature: `v1,${Buffer.alloc(20).toString("base64")}` }, "bad_signature"],
    ];
    for (const [label, headers, reason] of refusals) {
      expect({ label, verdict: checkWebhookHeaders(headers, now) }).toEqual({ label, verdict: { ok: false, reason } });
      expect({ label, verdict: await verifyWebhook(key, headers, [encode("{}")], now) }).toEqual({ label, verdict: { ok: false, reason } });
    }
    // Unpadded base64, a version list, a trailing field after the value: verifyWebhook reads each, so the early check lets them through.
    const value = good.signature.slice("v1,".length);
    for (const signature of [good.signature, `v1,${value.replace(/=+$/, "")}`, `v2,abc ${good.signature}`, `${good.signature},x`]) {
      expect({ signature, verdict: checkWebhookHeaders({ ...good, signature }, now) }).toEqual({ signature, verdict: { ok: true } });
      expect((await verifyWebhook(key, { ...good, signature }, [encode("{}")], now)).ok, signature).toBe(true);
    }
  });

  it("a request is signed over \"<METHOD> <target>\\n<body>\": one signature is good for that request only", async () => {
    const target = "/v1/releases/0a0b0c0d-0000-4000-8000-000000000001/feedback?limit=10";
    // What docs/test-builds.md tells CI to sign, spelled out, with the reference implementation.
    const headers = signed(`GET ${target}\n`);
    expect(requestLine("GET", target)).toBe(`GET ${target}\n`);
    expect((await verifyWebhook(key, headers, [requestPayload("GET", target, new Uint8Array())], now)).ok).toBe(true);
    for (const [method, other] of [["GET", target.replace("0001/", "0002/")], ["GET", target.replace("10", "500")], ["HEAD", target], ["PATCH", target]]) {
      expect(await verifyWebhook(key, headers, [requestPayload(method, other, new Uint8Array())], now), `${method} ${other}`).toEqual({ ok: false, reason: "bad_signature" });
    }
    // Over the body alone (POST /v1/releases also takes it), it is never good for a request, nor the reverse.
    expect(await verifyWebhook(key, headers, [new Uint8Array()], now)).toEqual({ ok: false, reason: "bad_signature" });
    const patch = signed(`PATCH /v1/releases/x\n{"status":"paused"}`);
    expect((await verifyWebhook(key, patch, [requestPayload("PATCH", "/v1/releases/x", encode('{"status":"paused"}'))], now)).ok).toBe(true);
    expect(await verifyWebhook(key, patch, [encode('{"status":"paused"}')], now)).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("refuses a short or malformed secret at start-up", () => {
    expect(() => decodeWebhookSecret("whsec_c2hvcnQ=")).toThrow(/at least/);
    expect(() => decodeWebhookSecret("whsec_***")).toThrow();
  });
});

describe("rollouts", () => {
  it("raising the percentage only adds devices, for any device and release", async () => {
    await fc.assert(fc.asyncProperty(fc.uuid(), fc.uuid(), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }), async (release, device, a, b) => {
      const bucket = await rolloutBucket(release, device);
      expect(bucket).toBe(await rolloutBucket(release, device));
      const [low, high] = a <= b ? [a, b] : [b, a];
      if (inRollout(bucket, low)) expect(inRollout(bucket, high)).toBe(true);
      expect(inRollout(bucket, 100)).toBe(true);
      expect(inRollout(bucket, 0)).toBe(false);
    }), { numRuns: 200 });
  });
});

const candidate = (build: number, overrides: Partial<{ status: "active" | "paused" | "rolled_back"; rollout_percentage: number; rollout_bucket: number; created_at: Date }> = {}) => ({
  id: `00000000-0000-4000-8000-${String(build).padStart(12, "0")}`,
  build_number: build,
  status: "active" as const,
  rollout_percentage: 100,
  rollout_bucket: 0,
  created_at: new Date(1_700_000_000_000 + build),
  updated_at: new Date(1_800_000_000_000 + build),
  ...overrides,
});

/** The time every planExpoUpdate test answers at: after every candidate's created_at and updated_at. */
const NOW = new Date(2_000_000_000_000);
const EMBEDDED = "0b7a4a43-5d6b-4a8e-9a3c-0e1f2d3c4b5a";
/** A request from a device running `currentUpdateId` (none reported when undefined), with the embedded update EMBEDDED; no rollback but the candidates'. */
const on = (currentUpdateId?: string, more: Partial<ExpoRequest> = {}): ExpoRequest =>
  ({ currentUpdateId, embeddedUpdateId: EMBEDDED, rolledBackAt: null, pastRollbackAt: null, now: NOW, ...more });

describe("planUpdateCheck", () => {
  it("offers the newest active build above the caller's, skipping paused, rolled back and out-of-rollout ones", () => {
    const plan = planUpdateCheck([
      candidate(500, { status: "paused" }),
      candidate(400, { status: "rolled_back" }),
      candidate(300, { rollout_percentage: 10, rollout_bucket: 5000 }),
      candidate(200),
      candidate(100),
    ], 150, null);
    expect(plan).toMatchObject({ level: "optional", release: { build_number: 200 } });
  });

  it("required below the minimum; none (never required) when nothing is offered", () => {
    const policy = { minimum_build_number: 150, below_minimum_level: "required" as const };
    expect(planUpdateCheck([candidate(200)], 100, policy).level).toBe("required");
    expect(planUpdateCheck([candidate(200)], 150, policy).level).toBe("optional");
    expect(planUpdateCheck([], 100, policy)).toEqual({ level: "none", release: null });
    expect(planUpdateCheck([candidate(200)], 100, { ...policy, below_minimum_level: "optional" }).level).toBe("optional");
  });

  it("required only when the build offered meets the minimum: a build still below it is offered as optional (the minimum follows a staged rollout)", () => {
    const policy = { minimum_build_number: 200, below_minimum_level: "required" as const };
    // 200 (which sets the minimum) is staged and reaches this device not yet: 190 is all it can install.
    const staged = [candidate(200, { rollout_percentage: 0, rollout_bucket: 5000 }), candidate(190)];
    expect(planUpdateCheck(staged, 150, policy)).toMatchObject({ level: "optional", release: { build_number: 190 } });
    expect(planUpdateCheck(staged, 190, policy)).toEqual({ level: "none", release: null });
    // Rolled out to the device: 200 is offered and meets the minimum, so the device must take it.
    const rolledOut = [candidate(200), candidate(190)];
    expect(planUpdateCheck(rolledOut, 150, policy)).toMatchObject({ level: "required", release: { build_number: 200 } });
    expect(planUpdateCheck(rolledOut, 190, policy)).toMatchObject({ level: "required", release: { build_number: 200 } });
  });
});

describe("planExpoUpdate", () => {
  it("a manifest of the newest active update; noUpdateAvailable when the app already runs it", async () => {
    const updates = [candidate(1), candidate(2)];
    expect(await planExpoUpdate(updates, on())).toMatchObject({ kind: "manifest", release: { build_number: 2 } });
    expect(await planExpoUpdate(updates, on(updates[1].id.toUpperCase()))).toEqual({ kind: "noUpdateAvailable" });
  });

  it("rolling back the newest offers the previous; with none left, rollBackToEmbedded; paused alone is noUpdateAvailable", async () => {
    expect(await planExpoUpdate([candidate(1), candidate(2, { status: "rolled_back" })], on())).toMatchObject({ kind: "manifest", release: { build_number: 1 } });
    const rolledBack = candidate(2, { status: "rolled_back" });
    expect(await planExpoUpdate([candidate(1, { status: "paused" }), rolledBack], on()))
      .toEqual({ kind: "rollBackToEmbedded", commitTime: new Date(rolledBack.updated_at.getTime() + 1) });
    expect(await planExpoUpdate([candidate(1, { status: "paused" })], on())).toEqual({ kind: "noUpdateAvailable" });
    expect(await planExpoUpdate([], on())).toEqual({ kind: "noUpdateAvailable" });
  });
});

describe("planExpoUpdate after a rollback (expo-updates takes only a later createdAt / commitTime)", () => {
  const manifest = async (...args: Parameters<typeof planExpoUpdate<ReturnType<typeof candidate>>>) => {
    const plan = await planExpoUpdate(...args);
    if (plan.kind !== "manifest") throw new Error(`a manifest, not ${plan.kind}`);
    return plan;
  };

  it("the previous update is served as of the rollback, under one id, to a device on the rolled-back one and to new devices", async () => {
    const [a, b] = [candidate(1), candidate(2, { status: "rolled_back" })];
    const at = republishTime([a, b], on())!;
    const plan = await manifest([a, b], on(b.id));
    expect(plan).toEqual({ kind: "manifest", release: a, id: await republishedUpdateId(a.id, new Date(at.getTime() + 1)), createdAt: new Date(b.updated_at.getTime() + 2) });
    expect(plan.createdAt.getTime()).toBeGreaterThan(b.created_at.getTime());
    expect(plan.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await planExpoUpdate([a, b], on())).toEqual(plan);
    // Running it (either id) is nothing to take.
    expect(await planExpoUpdate([a, b], on(plan.id))).toEqual({ kind: "noUpdateAvailable" });
    expect(await planExpoUpdate([a, b], on(a.id))).toEqual({ kind: "noUpdateAvailable" });
    // Published after the rollback: served as published.
    const c = candidate(3, { created_at: new Date(1_900_000_000_000) });
    expect(await planExpoUpdate([c, b], on(b.id))).toEqual({ kind: "manifest", release: c, id: c.id, createdAt: c.created_at });
    expect(await planExpoUpdate([c, a, b], on(plan.id))).toEqual({ kind: "manifest", release: c, id: c.id, createdAt: c.created_at });
  });

  it("nothing to offer: rollBackToEmbedded for a device on a rolled-back update, also below a newer paused or unreached one", async () => {
    const rolledBack = candidate(1, { status: "rolled_back" });
    const commitTime = new Date(rolledBack.updated_at.getTime() + 1);
    for (const newer of [candidate(2, { status: "paused" }), candidate(2, { rollout_percentage: 10, rollout_bucket: 5000 })]) {
      const updates = [rolledBack, newer];
      expect(await planExpoUpdate(updates, on(rolledBack.id))).toEqual({ kind: "rollBackToEmbedded", commitTime });
      // A device that took the newer one before it was paused (or the rollout narrowed) keeps it.
      expect(await planExpoUpdate(updates, on(newer.id))).toEqual({ kind: "noUpdateAvailable" });
    }
  });

  // Build order is by build number: a re-run of an old CI run publishes a lower build after a newer one, and
  // expo-updates would take that manifest (a later createdAt) over the build the device keeps.
  it("a device on a newer update that was paused or narrowed keeps it: noUpdateAvailable, also when a lower build was published after it", async () => {
    const kept = candidate(10, { created_at: new Date(1_700_000_000_000) });
    const rerun = candidate(9, { created_at: new Date(1_700_000_000_020) });
    for (const narrowed of [{ ...kept, status: "paused" as const }, { ...kept, rollout_percentage: 0 }, { ...kept, rollout_percentage: 10, rollout_bucket: 5000 }]) {
      expect(await planExpoUpdate([narrowed, rerun], on(kept.id))).toEqual({ kind: "noUpdateAvailable" });
      // A device that does not run it gets the lower build as published.
      for (const device of [on(), on(EMBEDDED)]) expect(await planExpoUpdate([narrowed, rerun], device)).toEqual({ kind: "manifest", release: rerun, id: rerun.id, createdAt: rerun.created_at });
    }
    // Published before it, too (expo-updates would not take it either way), beside a rolled-back one.
    const updates = [candidate(1), candidate(2, { status: "rolled_back" }), candidate(3, { status: "paused" })];
    expect(await planExpoUpdate(updates, on(updates[2].id))).toEqual({ kind: "noUpdateAvailable" });
  });

  it("whatever the candidates and their times, a device on an update that was not rolled back is never offered a lower build", async () => {
    const status = fc.constantFrom("active" as const, "paused" as const, "rolled_back" as const);
    const release = fc.record({
      build: fc.integer({ min: 1, max: 20 }),
      status,
      rollout_percentage: fc.constantFrom(0, 10, 100),
      rollout_bucket: fc.integer({ min: 0, max: 9999 }),
      published: fc.integer({ min: 0, max: 1000 }),
    });
    await fc.assert(fc.asyncProperty(fc.uniqueArray(release, { selector: (r) => r.build, minLength: 1, maxLength: 5 }), fc.nat(), async (rows, pick) => {
      const updates = rows.map(({ build, published, ...rest }) => candidate(build, { ...rest, created_at: new Date(1_700_000_000_000 + published) }));
      const current = updates[pick % updates.length];
      const plan = await planExpoUpdate(updates, on(current.id));
      if (current.status !== "rolled_back" && plan.kind !== "noUpdateAvailable") {
        expect(plan).toMatchObject({ kind: "manifest" });
        if (plan.kind === "manifest") expect(plan.release.build_number).toBeGreaterThan(current.build_number);
      }
    }), { numRuns: 200 });
  });

  // A device that followed a rollback runs the older update as of that rollback: whatever is offered to it
  // next must be later still, even when published before the rollback (re-activated, or rolled out since).
  it("a rolled-back update made active again reaches the devices that followed the rollback, later than what they run", async () => {
    const a = candidate(1);
    const b = candidate(2, { status: "rolled_back" });
    const followed = await manifest([a, b], on(b.id));
    const reactivated = { ...b, status: "active" as const, updated_at: new Date(b.updated_at.getTime() + 60_000) };
    const plan = await manifest([a, reactivated], on(followed.id));
    expect(plan.release).toBe(reactivated);
    expect(plan.createdAt.getTime()).toBeGreaterThan(followed.createdAt.getTime());
    expect(plan.id).not.toBe(followed.id);
    // The same for every such device and every retry; once taken, nothing more to take.
    expect(await planExpoUpdate([a, reactivated], on(followed.id))).toEqual(plan);
    expect(await planExpoUpdate([a, reactivated], on(plan.id.toUpperCase()))).toEqual({ kind: "noUpdateAvailable" });
    // A device that never left B, or a new one, gets B as published.
    expect(await planExpoUpdate([a, reactivated], on(b.id))).toEqual({ kind: "noUpdateAvailable" });
    expect(await planExpoUpdate([a, reactivated], on())).toEqual({ kind: "manifest", release: reactivated, id: b.id, createdAt: b.created_at });
  });

  // expo-updates gives the embedded bundle the directive's commitTime, and then takes only a later createdAt.
  it("an update made active after a device went back to its embedded bundle is later than that rollBackToEmbedded", async () => {
    const older = candidate(1, { status: "paused" });
    const rolledBack = candidate(2, { status: "rolled_back" });
    const back = await planExpoUpdate([older, rolledBack], on(rolledBack.id));
    if (back.kind !== "rollBackToEmbedded") throw new Error(`rollBackToEmbedded, not ${back.kind}`);
    const resumed = { ...older, status: "active" as const, updated_at: new Date(rolledBack.updated_at.getTime() + 60_000) };
    for (const device of [on(EMBEDDED), on()]) {
      const plan = await manifest([resumed, rolledBack], device);
      expect(plan.release).toBe(resumed);
      expect(plan.createdAt.getTime()).toBeGreaterThan(back.commitTime.getTime());
    }
  });

  // The rolled-back release made active again, or deleted and an older one resumed: the candidates no longer
  // show the rollback, the database does (pastRollbackAt: the rolled-back release's updated_at as it left rolled_back).
  it("an update offered after the rolled-back release is active again or deleted is later than the rollBackToEmbedded of its rollback", async () => {
    const a = candidate(1, { status: "rolled_back" });
    const back = await planExpoUpdate([a], on(a.id));
    if (back.kind !== "rollBackToEmbedded") throw new Error(`rollBackToEmbedded, not ${back.kind}`);
    const reactivated = { ...a, status: "active" as const, updated_at: new Date(a.updated_at.getTime() + 60_000) };
    const remembered = on(EMBEDDED, { pastRollbackAt: a.updated_at });
    const plan = await manifest([reactivated], remembered);
    expect(plan.release).toBe(reactivated);
    expect(plan.createdAt.getTime()).toBeGreaterThan(back.commitTime.getTime());
    expect(plan.id).toBe(await republishedUpdateId(a.id, plan.createdAt));
    // The same for every device but one that never left it; once taken, nothing more to take.
    expect(await planExpoUpdate([reactivated], { ...remembered, currentUpdateId: undefined })).toEqual(plan);
    expect(await planExpoUpdate([reactivated], { ...remembered, currentUpdateId: a.id })).toEqual({ kind: "noUpdateAvailable" });
    expect(await planExpoUpdate([reactivated], { ...remembered, currentUpdateId: plan.id })).toEqual({ kind: "noUpdateAvailable" });
    // Deleted instead, an older update resumed: the same.
    const older = { ...candidate(0), updated_at: reactivated.updated_at };
    expect((await manifest([older], remembered)).createdAt.getTime()).toBeGreaterThan(back.commitTime.getTime());
    // Published after the rollback: as published. Nothing offered: no rollback for a device that reports
    // no update (it runs nothing rolled back any more), nor for one on its embedded update.
    const c = candidate(3, { created_at: new Date(1_900_000_000_000) });
    expect(await planExpoUpdate([reactivated, c], remembered)).toEqual({ kind: "manifest", release: c, id: c.id, createdAt: c.created_at });
    const paused = { ...reactivated, status: "paused" as const };
    for (const device of [remembered, { ...remembered, currentUpdateId: undefined }]) expect(await planExpoUpdate([paused], device)).toEqual({ kind: "noUpdateAvailable" });
    // Rolled back again later: the later rollback counts, whichever is remembered.
    const again = { ...a, updated_at: new Date(a.updated_at.getTime() + 120_000) };
    expect(await planExpoUpdate([again], on(a.id, { pastRollbackAt: a.updated_at })))
      .toEqual({ kind: "rollBackToEmbedded", commitTime: new Date(again.updated_at.getTime() + 1) });
    expect(await planExpoUpdate([candidate(0), { ...a, status: "rolled_back" as const }], on(a.id, { pastRollbackAt: again.updated_at })))
      .toMatchObject({ kind: "manifest", createdAt: new Date(again.updated_at.getTime() + 2) });
  });

  it("a staged rollout published before a rollback and widened after it reaches the devices that followed the rollback", async () => {
    const a = candidate(1);
    const staged = candidate(2, { rollout_percentage: 0 });
    const c = candidate(3, { status: "rolled_back" });
    const followed = await manifest([a, staged, c], on(c.id));
    expect(followed.release).toBe(a);
    const widened = { ...staged, rollout_percentage: 100, updated_at: new Date(c.updated_at.getTime() + 60_000) };
    const plan = await manifest([a, widened, c], on(followed.id));
    expect(plan.release).toBe(widened);
    expect(plan.createdAt.getTime()).toBeGreaterThan(followed.createdAt.getTime());
    expect(await planExpoUpdate([a, widened, c], on(plan.id))).toEqual({ kind: "noUpdateAvailable" });
    // Rolled back in turn, that device goes to the embedded bundle, later than the update it runs.
    const both = [a, { ...widened, status: "rolled_back" as const, updated_at: plan.createdAt }, c];
    const back = await planExpoUpdate(both.map((r) => (r === a ? { ...a, status: "paused" as const } : r)), on(plan.id));
    expect(back).toMatchObject({ kind: "rollBackToEmbedded" });
    if (back.kind === "rollBackToEmbedded") expect(back.commitTime.getTime()).toBeGreaterThan(plan.createdAt.getTime());
  });
});

// docs/test-builds.md, Deleted: a release published by mistake may be deleted outright. A device that took it
// reports an id no candidate names; the server withdraws it only when it knows why (unnamedUpdate): its
// deletion is recorded, or it is an update the caller may no longer see. expo-updates reports its embedded
// update's id while it runs that one.
describe("planExpoUpdate for a device on an update no candidate names", () => {
  const deleted = "00000000-0000-4000-8000-0000000000ff";
  /** Deleted at DELETED_AT, long after it was published (and served as published). */
  const DELETED_AT = new Date(1_900_000_000_000);
  const wasDeleted = (since = new Date(1_700_000_000_000)) => ({ unnamed: { kind: "deleted" as const, deletedAt: DELETED_AT, since } });
  const hidden = { unnamed: { kind: "hidden" as const } };

  it("deleted: the offered update is served as of the deletion, under an id of its own, whenever asked", async () => {
    const a = candidate(1);
    const plan = await planExpoUpdate([a], on(deleted, wasDeleted()));
    expect(plan).toEqual({ kind: "manifest", release: a, id: await republishedUpdateId(a.id, DELETED_AT), createdAt: DELETED_AT });
    expect(await planExpoUpdate([a], on(deleted, { ...wasDeleted(), now: new Date(NOW.getTime() + 86_400_000) }))).toEqual(plan);
    // Once taken, nothing more to take; a new device or one on its embedded update gets it as published.
    if (plan.kind !== "manifest") throw new Error(plan.kind);
    expect(await planExpoUpdate([a], on(plan.id))).toEqual({ kind: "noUpdateAvailable" });
    for (const device of [on(), on(EMBEDDED), on(EMBEDDED.toUpperCase())]) {
      expect(await planExpoUpdate([a], device)).toEqual({ kind: "manifest", release: a, id: a.id, createdAt: a.created_at });
    }
    // Also over a newer update that is paused or not rolled out to this device, and after an earlier rollback.
    const b = candidate(2, { status: "rolled_back" });
    const staged = candidate(3, { rollout_percentage: 10, rollout_bucket: 5000 });
    expect(await planExpoUpdate([a, b, staged, candidate(4, { status: "paused" })], on(deleted, wasDeleted())))
      .toEqual({ kind: "manifest", release: a, id: await republishedUpdateId(a.id, DELETED_AT), createdAt: DELETED_AT });
  });

  it("deleted, with none offered: rollBackToEmbedded as of the deletion, whenever asked; later than the time the update was served with", async () => {
    const paused = candidate(1, { status: "paused" });
    for (const now of [NOW, new Date(NOW.getTime() + 86_400_000)]) {
      expect(await planExpoUpdate([], on(deleted, { ...wasDeleted(), now }))).toEqual({ kind: "rollBackToEmbedded", commitTime: DELETED_AT });
      expect(await planExpoUpdate([paused], on(deleted.toUpperCase(), { ...wasDeleted(), now }))).toEqual({ kind: "rollBackToEmbedded", commitTime: DELETED_AT });
    }
    // Served (republished) in the millisecond of its deletion (by a request that still read it): a millisecond
    // later, the only other answer (a republished id dated after the deletion names nothing: unnamedUpdate).
    expect(await planExpoUpdate([], on(deleted, wasDeleted(DELETED_AT)))).toEqual({ kind: "rollBackToEmbedded", commitTime: new Date(DELETED_AT.getTime() + 1) });
  });

  it("hidden (no longer the caller's to see): withdrawn as of the request", async () => {
    const a = candidate(1);
    expect(await planExpoUpdate([a], on(deleted, hidden))).toEqual({ kind: "manifest", release: a, id: await republishedUpdateId(a.id, NOW), createdAt: NOW });
    expect(await planExpoUpdate([candidate(1, { status: "paused" })], on(deleted, hidden))).toEqual({ kind: "rollBackToEmbedded", commitTime: NOW });
  });

  it("neither (an id the server never had, or an update of another channel): never withdrawn; the offered update as published, as of the latest rollback", async () => {
    const paused = candidate(1, { status: "paused" });
    expect(await planExpoUpdate([], on(deleted))).toEqual({ kind: "noUpdateAvailable" });
    expect(await planExpoUpdate([paused, candidate(2, { status: "rolled_back" })], on(deleted))).toEqual({ kind: "noUpdateAvailable" });
    const a = candidate(1);
    expect(await planExpoUpdate([a], on(deleted))).toEqual({ kind: "manifest", release: a, id: a.id, createdAt: a.created_at });
    const rolledBack = candidate(2, { status: "rolled_back" });
    expect(await planExpoUpdate([a, rolledBack], on(deleted))).toEqual(await planExpoUpdate([a, rolledBack], on(EMBEDDED)));
    // A device that runs its embedded update, or reports none, is left alone as before.
    for (const device of [on(), on(EMBEDDED), on(EMBEDDED.toUpperCase())]) expect(await planExpoUpdate([paused], device)).toEqual({ kind: "noUpdateAvailable" });
    // A rollback changes nothing for a device that runs its embedded update (expo-updates would take the
    // directive and "roll back" to what it runs); one that reports no update is sent back as before.
    expect(await planExpoUpdate([paused, rolledBack], on(EMBEDDED))).toEqual({ kind: "noUpdateAvailable" });
    expect(await planExpoUpdate([paused, rolledBack], on())).toEqual({ kind: "rollBackToEmbedded", commitTime: new Date(rolledBack.updated_at.getTime() + 1) });
  });

  it("whatever the candidates: deleted, an answer expo-updates takes over it, the same whenever asked and stable once taken; neither, never rollBackToEmbedded", async () => {
    const status = fc.constantFrom("active" as const, "paused" as const, "rolled_back" as const);
    const release = fc.record({ build: fc.integer({ min: 1, max: 20 }), status, rollout_percentage: fc.constantFrom(0, 10, 100), rollout_bucket: fc.integer({ min: 0, max: 9999 }) });
    await fc.assert(fc.asyncProperty(fc.uniqueArray(release, { selector: (r) => r.build, maxLength: 5 }), async (rows) => {
      const updates = rows.map(({ build, ...rest }) => candidate(build, rest));
      const plan = await planExpoUpdate(updates, on(deleted, wasDeleted()));
      if (plan.kind === "noUpdateAvailable") throw new Error("a device on a deleted update is never left on it");
      if (plan.kind === "rollBackToEmbedded") expect(plan.commitTime).toEqual(DELETED_AT);
      else {
        expect(plan.createdAt.getTime()).toBeGreaterThanOrEqual(DELETED_AT.getTime());
        expect(await planExpoUpdate(updates, on(plan.id))).toEqual({ kind: "noUpdateAvailable" });
      }
      expect(await planExpoUpdate(updates, on(deleted, { ...wasDeleted(), now: new Date(NOW.getTime() + 1000) }))).toEqual(plan);
      expect((await planExpoUpdate(updates, on(deleted))).kind).not.toBe("rollBackToEmbedded");
    }), { numRuns: 100 });
  });
});

// What the server knows of an update no candidate names: its recorded deletion (read by the id's ranges, of any
// channel the caller may see), else whether it is one the caller may not see; reads only when it must.
describe("unnamedUpdate", () => {
  const a = candidate(1);
  const gone = { id: "00000000-0000-4000-8000-0000000000ff", created_at: new Date(1_700_000_000_500), deleted_at: new Date(1_900_000_000_000) };
  const reads = (deletions: ExpoDeletion[], hidden: boolean) => {
    const calls: string[] = [];
    const rangeHolds = (ranges: IdRange[], id: string) => ranges.some(([first, last]) => first <= id && id <= last);
    return {
      calls,
      reads: {
        deletions: async (ranges: IdRange[]) => (calls.push("deletions"), deletions.filter((d) => rangeHolds(ranges, d.id))),
        hidden: async () => (calls.push("hidden"), hidden),
      },
    };
  };
  const complete = (currentUpdateId?: string) => ({ currentUpdateId, embeddedUpdateId: EMBEDDED, now: NOW, complete: true });

  it("a recorded deletion names the id, directly or as republished: deleted, served as published or as of the republication", async () => {
    const { reads: r, calls } = reads([gone], true);
    expect(await unnamedUpdate([a], complete(gone.id.toUpperCase()), r)).toEqual({ kind: "deleted", deletedAt: gone.deleted_at, since: gone.created_at });
    const since = new Date(1_800_000_000_000);
    expect(await unnamedUpdate([a], complete(await republishedUpdateId(gone.id, since)), r)).toEqual({ kind: "deleted", deletedAt: gone.deleted_at, since });
    expect(calls).toEqual(["deletions", "deletions"]);
  });

  it("else hidden when the caller may not see it, only with a token that counts; nothing for an id the server never had", async () => {
    const sibling = { ...gone, id: "00000000-0000-4000-9000-000000000000" };
    const unknown = await republishedUpdateId(gone.id, new Date(1_800_000_000_000));
    for (const [deletions, isHidden] of [[[], true], [[sibling], true], [[], false]] as const) {
      const { reads: r, calls } = reads([...deletions], isHidden);
      expect(await unnamedUpdate([a], complete(unknown), r)).toEqual(isHidden ? { kind: "hidden" } : undefined);
      expect(calls).toEqual(["deletions", "hidden"]);
    }
    // Its token ignored, the request sees what anyone sees: a tester's update is still there, and hidden is not asked.
    const { reads: r, calls } = reads([], true);
    expect(await unnamedUpdate([a], { ...complete(unknown), complete: false }, r)).toBeUndefined();
    expect(calls).toEqual(["deletions"]);
    // A recorded deletion counts then too (a deletion the caller may see).
    expect(await unnamedUpdate([a], { ...complete(gone.id), complete: false }, reads([gone], true).reads)).toMatchObject({ kind: "deleted" });
  });

  it("no read when a candidate names it, the device runs its embedded update or reports none, or the id is no UUID", async () => {
    const { reads: r, calls } = reads([gone], true);
    for (const request of [complete(a.id), complete(await republishedUpdateId(a.id, NOW)), complete(EMBEDDED), complete(EMBEDDED.toUpperCase()), complete(), complete("not-an-update-id")]) {
      expect(await unnamedUpdate([a], request, r)).toBeUndefined();
    }
    expect(calls).toEqual([]);
  });
});

// The candidates are a window of the newest (the route's MAX_EXPO_CANDIDATES): the update a device runs may be
// older than all of them. expoCandidates reads it by id then; only what it could not find is deleted.
describe("expoCandidates: the update a device runs, outside a full window of the newest", () => {
  const LIMIT = 50;
  const r0 = candidate(0);
  const staged = Array.from({ length: LIMIT }, (_, i) => candidate(i + 1, { rollout_percentage: 0 }));
  /** The store's read (visibleReleasesWithIds) over `rows`, recording each call: uuid strings order as their bytes. */
  const store = (rows: ReturnType<typeof candidate>[]) => {
    const calls: IdRange[][] = [];
    const readIds = async (ranges: IdRange[]) => {
      calls.push(ranges);
      return rows.filter((r) => ranges.some(([first, last]) => first <= r.id && r.id <= last));
    };
    return { calls, readIds };
  };
  const weigh = async (window: ReturnType<typeof candidate>[], request: ExpoRequest, rows = [r0, ...staged], limit = LIMIT) => {
    const { calls, readIds } = store(rows);
    const candidates = await expoCandidates(window, limit, request, readIds);
    return { candidates, reads: calls.length, plan: await planExpoUpdate(candidates, request) };
  };

  it("a device on an update below a window of staged updates keeps it; it takes the newest once rolled out to it, and leaves it once rolled back", async () => {
    const kept = await weigh(staged, on(r0.id.toUpperCase()));
    expect(kept).toMatchObject({ reads: 1, plan: { kind: "noUpdateAvailable" } });
    expect(kept.candidates).toContain(r0);
    const ramped = staged.map((r, i) => (i === LIMIT - 1 ? { ...r, rollout_percentage: 100 } : r));
    const newest = ramped[LIMIT - 1];
    expect((await weigh(ramped, on(r0.id))).plan).toEqual({ kind: "manifest", release: newest, id: newest.id, createdAt: newest.created_at });
    // Rolled back, it is withdrawn as of its rollback (not of the request); the window alone does not name it, and would keep it.
    const rolledBack = { ...r0, status: "rolled_back" as const };
    expect(await planExpoUpdate(staged, on(r0.id))).toEqual({ kind: "noUpdateAvailable" });
    expect((await weigh(staged, on(r0.id), [rolledBack, ...staged])).plan)
      .toEqual({ kind: "rollBackToEmbedded", commitTime: new Date(rolledBack.updated_at.getTime() + 1) });
  });

  // The store reads the latest rollback of the whole runtime version (rolledBackAt) beside the window, as the
  // rolled-back release may be older than all of it; expo-updates then takes only an update later than that.
  it("a rollback of an update below the window counts: the update offered after it is later than its rollBackToEmbedded", async () => {
    const rolledBack = { ...r0, status: "rolled_back" as const };
    const back = (await weigh(staged, on(r0.id), [rolledBack, ...staged])).plan;
    expect(back).toEqual({ kind: "rollBackToEmbedded", commitTime: new Date(rolledBack.updated_at.getTime() + 1) });
    if (back.kind !== "rollBackToEmbedded") throw new Error(back.kind);
    // Back on its embedded bundle, the device reports that id: the window alone names no rolled-back update.
    const ramped = staged.map((r, i) => (i === LIMIT - 1 ? { ...r, rollout_percentage: 100 } : r));
    const newest = ramped[LIMIT - 1];
    const remembered = on(EMBEDDED, { rolledBackAt: rolledBack.updated_at });
    const { plan, reads } = await weigh(ramped, remembered, [rolledBack, ...ramped]);
    expect(reads).toBe(0);
    expect(plan).toEqual({ kind: "manifest", release: newest, id: await republishedUpdateId(newest.id, new Date(back.commitTime.getTime() + 1)), createdAt: new Date(back.commitTime.getTime() + 1) });
    // A device that reports no update may run it: with nothing offered, back to its embedded bundle as of that rollback.
    expect(await planExpoUpdate(staged, { ...remembered, currentUpdateId: undefined })).toEqual(back);
    expect(await planExpoUpdate(staged, remembered)).toEqual({ kind: "noUpdateAvailable" });
  });

  it("a device on a republished update below the window keeps it; of the releases its id's range holds, only the one it names is added", async () => {
    const since = new Date(1_850_000_000_000);
    const republished = await republishedUpdateId(r0.id, since);
    // An id that begins as r0's does is in the range too (as every candidate's here); it is not what the device runs.
    const sibling = { ...r0, id: "00000000-0000-4000-9000-000000000000" };
    const { candidates, reads, plan } = await weigh(staged, on(republished.toUpperCase()), [r0, sibling, ...staged]);
    expect({ reads, plan }).toEqual({ reads: 1, plan: { kind: "noUpdateAvailable" } });
    expect(candidates).toEqual([...staged, r0]);
    // What it runs was served as of `since`: the newest, published before, is offered later than that.
    const ramped = staged.map((r, i) => (i === LIMIT - 1 ? { ...r, rollout_percentage: 100 } : r));
    expect((await weigh(ramped, on(republished))).plan).toMatchObject({ kind: "manifest", release: ramped[LIMIT - 1], createdAt: new Date(since.getTime() + 1) });
  });

  it("an update it cannot find is left to unnamedUpdate; no read when the window names it, is not full, or the device runs its embedded update", async () => {
    expect(await weigh(staged, on(r0.id), staged)).toMatchObject({ reads: 1, candidates: staged, plan: { kind: "noUpdateAvailable" } });
    expect(await weigh(staged, on(await republishedUpdateId(r0.id, NOW)), staged)).toMatchObject({ reads: 1, candidates: staged });
    for (const request of [on(staged[7].id), on(await republishedUpdateId(staged[7].id, NOW)), on(EMBEDDED), on(EMBEDDED.toUpperCase()), on(), on("not-an-update-id")]) {
      expect((await weigh(staged, request)).reads).toBe(0);
    }
    expect(await weigh(staged, on(r0.id), undefined, LIMIT + 1)).toMatchObject({ reads: 0, candidates: staged });
  });

  it("a republished id names its release by the first bytes of the release's id: one index range holds it, for any release and time", async () => {
    await fc.assert(fc.asyncProperty(fc.uuid(), fc.integer({ min: 0, max: 2 ** 48 - 1 }), async (releaseId, ms) => {
      const id = await republishedUpdateId(releaseId, new Date(ms));
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseInt(id.replaceAll("-", "").slice(0, 12), 16)).toBe(ms);
      const ranges = releaseIdRanges(id.toUpperCase(), new Date(ms));
      expect(ranges).toHaveLength(2);
      expect(ranges.some(([first, last]) => first <= releaseId.toLowerCase() && releaseId.toLowerCase() <= last)).toBe(true);
    }), { numRuns: 100 });
    expect(releaseIdRanges(r0.id, NOW)).toEqual([[r0.id, r0.id]]);
    expect(releaseIdRanges("not-an-update-id", NOW)).toEqual([]);
  });
});

// A republished id carries the time it was served at, and its hash has no secret: anyone who knows an update's
// id can make one for any time. The server trusts that time only when it could have served the id then: never
// later than now, and for a deleted release never after its deletion (it was served while the release existed).
// Any other such id is one the server never had: nothing is withdrawn for it, nor served later than it.
describe("a republished id dated when the server could not have served it", () => {
  const LATER = new Date(NOW.getTime() + 1);
  const YEAR_2100 = new Date("2100-01-01T00:00:00.000Z");
  const never = async (releaseId: string) => [await republishedUpdateId(releaseId, LATER), await republishedUpdateId(releaseId, YEAR_2100)];

  it("later than now: names no release, for the planner, the window's read and the unnamed update's reads", async () => {
    const a = candidate(1);
    const rolledBack = candidate(2, { status: "rolled_back" });
    for (const id of await never(a.id)) {
      expect(releaseIdRanges(id, NOW)).toEqual([[id, id]]);
      // The offered update itself: as published (the device is not known to run it).
      expect(await planExpoUpdate([a], on(id))).toEqual({ kind: "manifest", release: a, id: a.id, createdAt: a.created_at });
      // A newer one offered: as published too, not later than the id's time.
      const b = candidate(3);
      expect(await planExpoUpdate([a, b], on(id))).toEqual({ kind: "manifest", release: b, id: b.id, createdAt: b.created_at });
      // Below a full window: read by its exact id only, and not added.
      const window = Array.from({ length: 3 }, (_, i) => candidate(i + 10, { rollout_percentage: 0 }));
      const reads: IdRange[][] = [];
      expect(await expoCandidates(window, 3, on(id), async (ranges) => (reads.push(ranges), [a]))).toEqual(window);
      expect(reads).toEqual([[[id, id]]]);
    }
    // Rolled back: no rollBackToEmbedded as of its time; the same as for an id the server never had.
    for (const id of await never(rolledBack.id)) {
      expect(await planExpoUpdate([rolledBack], on(id))).toEqual({ kind: "noUpdateAvailable" });
      expect(await planExpoUpdate([a, rolledBack], on(id))).toEqual(await planExpoUpdate([a, rolledBack], on(EMBEDDED)));
    }
    // Dated now at the latest, it is trusted: withdrawn as of the later of the rollback and that time.
    expect(await planExpoUpdate([rolledBack], on(await republishedUpdateId(rolledBack.id, NOW))))
      .toEqual({ kind: "rollBackToEmbedded", commitTime: new Date(NOW.getTime() + 1) });
  });

  it("of a deleted release, dated after its deletion or later than now: neither deleted nor hidden", async () => {
    const gone = { id: "00000000-0000-4000-8000-0000000000ff", created_at: new Date(1_700_000_000_500), deleted_at: new Date(1_900_000_000_000) };
    const request = async (at: Date) => ({ currentUpdateId: await republishedUpdateId(gone.id, at), embeddedUpdateId: EMBEDDED, now: NOW, complete: true });
    const holds = (ranges: IdRange[]) => ranges.some(([first, last]) => first <= gone.id && gone.id <= last);
    // The store's reads: the deletion by the id's ranges; were it a hidden channel's, hidden would say so by them.
    const store = (calls: string[] = []) => ({
      deletions: async (ranges: IdRange[]) => (calls.push("deletions"), holds(ranges) ? [gone] : []),
      hidden: async (ranges: IdRange[]) => (calls.push("hidden"), holds(ranges)),
    });
    for (const at of [new Date(gone.deleted_at.getTime() + 1), NOW, LATER, YEAR_2100]) {
      const calls: string[] = [];
      expect(await unnamedUpdate([candidate(1)], await request(at), store(calls)), at.toISOString()).toBeUndefined();
      // Later than now, it names only itself (no release has that id).
      expect(calls).toEqual(at > NOW ? ["deletions", "hidden"] : ["deletions"]);
    }
    // In the millisecond of the deletion it may have been served (a request that still read the release):
    // withdrawn then, a millisecond after the deletion (planExpoUpdate), the only answer but the deletion's own.
    const reads = store();
    expect(await unnamedUpdate([candidate(1)], await request(gone.deleted_at), reads)).toEqual({ kind: "deleted", deletedAt: gone.deleted_at, since: gone.deleted_at });
    const at = new Date(gone.deleted_at.getTime() - 1);
    expect(await unnamedUpdate([candidate(1)], await request(at), reads)).toEqual({ kind: "deleted", deletedAt: gone.deleted_at, since: at });
  });

  it("whatever the time in the id: no answer is dated later than a millisecond after now", async () => {
    const status = fc.constantFrom("active" as const, "paused" as const, "rolled_back" as const);
    const release = fc.record({ build: fc.integer({ min: 1, max: 20 }), status, rollout_percentage: fc.constantFrom(0, 10, 100), rollout_bucket: fc.integer({ min: 0, max: 9999 }) });
    await fc.assert(fc.asyncProperty(fc.uniqueArray(release, { selector: (r) => r.build, minLength: 1, maxLength: 5 }), fc.nat(), fc.integer({ min: 0, max: 2 ** 47 }), async (rows, pick, ms) => {
      const updates = rows.map(({ build, ...rest }) => candidate(build, rest));
      const plan = await planExpoUpdate(updates, on(await republishedUpdateId(updates[pick % updates.length].id, new Date(ms))));
      const dated = plan.kind === "manifest" ? plan.createdAt : plan.kind === "rollBackToEmbedded" ? plan.commitTime : null;
      if (dated) expect(dated.getTime()).toBeLessThanOrEqual(NOW.getTime() + 1);
    }), { numRuns: 200 });
  });
});

describe("Expo code-signing keys", () => {
  it("signs the same with the PKCS#1 key `expo-updates codesigning:generate` writes as with its PKCS#8 form", async () => {
    const { generateKeyPairSync, verify } = await import("node:crypto");
    const { importSigningKey, expoSignature } = await import("../../functions/api/releases/expo-response.ts");
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    for (const pem of [privateKey.export({ type: "pkcs1", format: "pem" }), privateKey.export({ type: "pkcs8", format: "pem" })]) {
      const header = await expoSignature(await importSigningKey(pem.toString()), "main", "{\"id\":1}");
      const sig = /sig="([^"]+)"/.exec(header)![1];
      expect(verify("sha256", Buffer.from("{\"id\":1}"), publicKey, Buffer.from(sig, "base64"))).toBe(true);
    }
  });
});
