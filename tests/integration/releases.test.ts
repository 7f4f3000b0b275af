// Test-build distribution through real Deno and Postgres: CI publishing signed
// with the reference Standard Webhooks implementation, the update check
// (tester groups, minimum build, paused / rolled-back builds, deterministic
// rollouts over 1,000 devices), expiring tamper-evident download links, and
// tester feedback.
import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { artifactSchema, MAX_EXPO_CLIENT_BYTES, releaseSchema, updateCheckResponseSchema } from "../../functions/_shared/schemas/releases.ts";
import { rolloutBucket } from "../../functions/_shared/releases/rollout.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { phone, startSession, withoutRequestId } from "../support/device-sessions.ts";
import {
  binaryRelease,
  check,
  freshChannel,
  publish,
  releaseCount,
  releaseWithFeedback,
  setRelease,
  sha256Of,
  signedCall,
  testerGroup,
} from "../support/releases.ts";
import { type FunctionsServer, startFunctionsServer } from "../support/functions-server.ts";
import { signEs256, supabaseClaims } from "../support/tokens.ts";

const started: FunctionsServer[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

async function checkBody(token: string, query: Parameters<typeof check>[1]) {
  const response = await check(token, query);
  expect(response.status, response.text).toBe(200);
  return updateCheckResponseSchema.parse(response.body);
}

/** server_time's one wire format (functions/api/sync/wire-time.ts): the database's clock, UTC, microseconds. */
const WIRE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** The answer with nothing to offer: api-v1.md's fields, and `release` (update's deprecated name). */
const nothing = (minSupportedBuild: number | null = null) =>
  ({ update: null, level: "none", min_supported_build: minSupportedBuild, server_time: expect.stringMatching(WIRE_TIME), release: null });

/** An answer without its server_time (to compare two answers). */
const timeless = ({ server_time: _time, ...rest }: Record<string, unknown>) => rest;

describe("POST /v1/releases (CI, Standard Webhooks)", () => {
  it("201 with a good signature; a retried delivery (same webhook-id) answers the same release and writes nothing more", async () => {
    const channel = freshChannel();
    const release = await binaryRelease(channel, 10);
    const webhookId = `msg_${randomUUID()}`;
    const first = await signedCall("/v1/releases", release, { webhookId });
    expect(first.status, first.text).toBe(201);
    const published = releaseSchema.parse(first.body);
    expect(published).toMatchObject({ channel, build_number: 10, status: "active", rollout_percentage: 100, artifact: { path: release.artifact.path } });

    const retried = await signedCall("/v1/releases", release, { webhookId });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual(first.body);
    expect(await releaseCount(channel)).toBe(1);

    // A new delivery of the same build number is refused, in the envelope.
    const again = await signedCall("/v1/releases", release);
    expect(expectEnvelope(again, 400, "VALIDATION_FAILED").details?.[0]).toMatchObject({ field: "/build_number", code: "already_published" });
    expect(await releaseCount(channel)).toBe(1);
  });

  it("an OTA update's build number is published once per runtime version: the same again is 400 already_published", async () => {
    const channel = freshChannel();
    const { artifact } = await binaryRelease(channel, 7);
    const update = { ...(await binaryRelease(channel, 7)), kind: "ota" as const, runtime_version: "1.0", artifact: { ...artifact, content_type: "application/javascript" } };
    expect((await signedCall("/v1/releases", update)).status).toBe(201);
    // A CI re-run: the same body under a new webhook-id.
    const again = await signedCall("/v1/releases", update);
    expect(expectEnvelope(again, 400, "VALIDATION_FAILED").details?.[0]).toMatchObject({ field: "/build_number", code: "already_published" });
    expect(again.body.error.message).toMatch(/runtime version/);
    expect(await releaseCount(channel)).toBe(1);
    // Another runtime version's updates are numbered on their own; a binary of that number is another kind.
    expect((await signedCall("/v1/releases", { ...update, runtime_version: "1.1" })).status).toBe(201);
    expect((await signedCall("/v1/releases", await binaryRelease(channel, 7))).status).toBe(201);
    expect(await releaseCount(channel)).toBe(3);
  });

  it("a webhook-id is one request: another publish with it is 400 webhook_id_reused and writes nothing; the retry still answers 200", async () => {
    // What a CI run did when it named its deliveries after the run alone: iOS, then Android, one id.
    const channel = freshChannel();
    const ios = await binaryRelease(channel, 512);
    const android = { ...(await binaryRelease(channel, 512)), platform: "android" as const };
    const webhookId = `msg_${randomUUID()}_publish`;
    const first = await signedCall("/v1/releases", ios, { webhookId });
    expect(first.status, first.text).toBe(201);
    const second = await signedCall("/v1/releases", android, { webhookId });
    const detail = expectEnvelope(second, 400, "VALIDATION_FAILED").details?.[0];
    expect(detail).toMatchObject({ field: "/headers/webhook-id", code: "webhook_id_reused" });
    const platforms = async () =>
      (await adminSql`select platform, count(*)::int as n from app_private.releases where channel = ${channel} group by platform order by platform`)
        .map((r) => [r.platform, r.n]);
    expect(await platforms()).toEqual([["ios", 1]]);
    // Signed over the body alone (CI steps from before requests were bound in): the same request, the same answer.
    expectEnvelope(await signedCall("/v1/releases", android, { webhookId, signs: "body" }), 400, "VALIDATION_FAILED");
    // The true retry, in either signing, answers what it published and writes nothing.
    for (const signs of [undefined, "body" as const]) {
      const retried = await signedCall("/v1/releases", ios, { webhookId, signs });
      expect(retried.status, retried.text).toBe(200);
      expect(retried.body).toEqual(first.body);
    }
    expect(await platforms()).toEqual([["ios", 1]]);
    // With an id of its own the Android build publishes.
    expect((await signedCall("/v1/releases", android, { webhookId: `${webhookId}_android` })).status).toBe(201);
    expect(await platforms()).toEqual([["android", 1], ["ios", 1]]);
  });

  it("a release deleted in the dashboard takes its delivery records along: CI's retry of that delivery publishes the build again", async () => {
    const channel = freshChannel();
    const release = await binaryRelease(channel, 11);
    const webhookId = `msg_${randomUUID()}`;
    const first = await signedCall("/v1/releases", release, { webhookId });
    expect(first.status, first.text).toBe(201);
    // What the dashboard (or an admin script) does to withdraw a mistaken build for good.
    await adminSql`delete from app_private.releases where id = ${releaseSchema.parse(first.body).id}`;
    expect((await adminSql`select count(*)::int as n from app_private.release_webhook_deliveries where webhook_id = ${webhookId}`)[0].n).toBe(0);

    const retried = await signedCall("/v1/releases", release, { webhookId });
    expect(retried.status, retried.text).toBe(201);
    expect(releaseSchema.parse(retried.body).id).not.toBe(releaseSchema.parse(first.body).id);
    expect(await releaseCount(channel)).toBe(1);
  });

  it("401 and nothing written: wrong secret, tampered body, missing headers, stale or future timestamp", async () => {
    const channel = freshChannel();
    const release = await binaryRelease(channel, 10);
    const otherSecret = `whsec_${Buffer.from(randomUUID() + randomUUID()).toString("base64")}`;
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
    const refusals = [
      await signedCall("/v1/releases", release, { secret: otherSecret }),
      await signedCall("/v1/releases", release, { headers: { "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" } }),
      await signedCall("/v1/releases", release, { headers: { "webhook-signature": undefined } }),
      await signedCall("/v1/releases", release, { headers: { "webhook-id": undefined } }),
      await signedCall("/v1/releases", release, { headers: { "webhook-timestamp": undefined } }),
      await signedCall("/v1/releases", release, { timestamp: minutesAgo(6) }),
      await signedCall("/v1/releases", release, { timestamp: minutesAgo(-6) }),
      await signedCall("/v1/releases", release, { headers: { "webhook-timestamp": "yesterday" } }),
      // Signed for one id, sent with another (a replay under a fresh id).
      await signedCall("/v1/releases", release, { headers: { "webhook-id": `msg_${randomUUID()}` } }),
    ];
    for (const response of refusals) expectEnvelope(response, 401, "UNAUTHENTICATED");

    // The body changed after signing: the signature covers the exact bytes.
    const good = await signedCall("/v1/releases", { ...release, build_number: 11 }, { headers: {} });
    expect(good.status).toBe(201);
    const tampered = await (async () => {
      const { Webhook } = await import("standardwebhooks");
      const id = `msg_${randomUUID()}`;
      const now = new Date();
      const signature = new Webhook(stack.functionsEnv.TIDESYNC_RELEASES_WEBHOOK_SECRET).sign(id, now, JSON.stringify({ ...release, build_number: 12 }));
      return await call("/v1/releases", {
        method: "POST",
        rawBody: JSON.stringify({ ...release, build_number: 13, rollout_percentage: 100 }),
        headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(Math.floor(now.getTime() / 1000)), "webhook-signature": signature },
      });
    })();
    expectEnvelope(tampered, 401, "UNAUTHENTICATED");
    expect(await releaseCount(channel)).toBe(1);
  });

  it("a user's bearer token is no way to publish", async () => {
    const user = await createTestUser();
    const channel = freshChannel();
    expectEnvelope(await call("/v1/releases", { method: "POST", token: user.token, body: await binaryRelease(channel, 1) }), 401, "UNAUTHENTICATED");
    expect(await releaseCount(channel)).toBe(0);
  });

  it("400 in the envelope for an invalid release (one artifact location, ota needs a runtime version)", async () => {
    const channel = freshChannel();
    const release = await binaryRelease(channel, 1);
    const both = await signedCall("/v1/releases", { ...release, artifact: { ...release.artifact, url: "https://example.com/a.ipa" } });
    expect(expectEnvelope(both, 400, "VALIDATION_FAILED").details?.map((d) => d.field)).toContain("/artifact/path");
    const ota = await signedCall("/v1/releases", { ...release, kind: "ota" });
    expect(expectEnvelope(ota, 400, "VALIDATION_FAILED").details?.map((d) => d.field)).toContain("/runtime_version");
    const climbing = await signedCall("/v1/releases", { ...release, artifact: { ...release.artifact, path: "../../etc/passwd" } });
    expect(expectEnvelope(climbing, 400, "VALIDATION_FAILED").details?.map((d) => d.field)).toContain("/artifact/path");
    expect(await releaseCount(channel)).toBe(0);
  });

  // docs/test-builds.md, The model: a build number is one whole number. A dotted iOS CFBundleVersion
  // ("2.4.1", which Apple allows) is no build number here, on publish as in the update check.
  it("a dotted CFBundleVersion is refused (400 on /build_number) by publish and by the update check", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const published = await signedCall("/v1/releases", { ...(await binaryRelease(channel, 1)), build_number: "2.4.1" });
    expect(expectEnvelope(published, 400, "VALIDATION_FAILED").details?.map((d) => d.field)).toEqual(["/build_number"]);
    const checked = await call(`/v1/releases/check?platform=ios&channel=${channel}&build_number=2.4.1`, { token: tester.token });
    expect(expectEnvelope(checked, 400, "VALIDATION_FAILED").details?.map((d) => d.field)).toEqual(["/build_number"]);
    expect(await releaseCount(channel)).toBe(0);
  });

  it("an artifact url is spelled as the database stores it (https:// in lower case, no whitespace): other spellings a URL parser takes are 400 invalid_url, never a retryable 500", async () => {
    const channel = freshChannel();
    const release = await binaryRelease(channel, 1);
    const { path: _path, ...artifact } = release.artifact;
    for (const url of ["HTTPS://example.com/app.ipa", "Https://example.com/a", "https:example.com/app.ipa", "https:/example.com/app.ipa", "https://example.com/a\u00a0b"]) {
      const refused = await signedCall("/v1/releases", { ...release, artifact: { ...artifact, url } });
      expect(expectEnvelope(refused, 400, "VALIDATION_FAILED").details).toContainEqual(expect.objectContaining({ field: "/artifact/url", code: "invalid_url" }));
    }
    expect(await releaseCount(channel)).toBe(0);
    const published = await signedCall("/v1/releases", { ...release, artifact: { ...artifact, url: "https://example.com/app.ipa" } });
    expect(published.status).toBe(201);
  });

  it("the schema's https URL rule is the database's: every URL it takes, whatever character it holds, the artifact_url check takes too", async () => {
    // One URL per code point of the Basic Multilingual Plane (surrogates aside) in its path.
    const urls = Array.from({ length: 0x10000 }, (_, cp) => cp).filter((cp) => cp < 0xd800 || cp > 0xdfff)
      .map((cp) => `https://example.com/a${String.fromCharCode(cp)}b`);
    const accepted = urls.filter((url) => artifactSchema.shape.url.safeParse(url).success);
    expect(accepted.length).toBeGreaterThan(60_000);
    const [{ check }] = await adminSql<{ check: string }[]>`
      select pg_get_expr(c.conbin, c.conrelid) as check from pg_constraint c
       where c.conrelid = 'app_private.releases'::regclass and c.conname = 'releases_artifact_url_https'`;
    const refused = await adminSql.unsafe<{ url: string }[]>(
      `select u.artifact_url as url from unnest($1::text[]) as u(artifact_url) where not (${check})`,
      [accepted],
    );
    expect(refused.map((r) => [...r.url].map((c) => c.codePointAt(0)!.toString(16)))).toEqual([]);
  });
});

describe("POST /v1/releases: what belongs to one kind only", () => {
  const otaOf = (release: Awaited<ReturnType<typeof binaryRelease>>) =>
    ({ ...release, kind: "ota" as const, runtime_version: "1.0", artifact: { ...release.artifact, content_type: "application/javascript" } });

  it("an OTA update carries no update_policy (400 unexpected_field): it would move the binaries' minimum, whose build numbers it does not share", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    await publish(await binaryRelease(channel, 200, { update_policy: { minimum_build_number: 180 } }));
    expect(await checkBody(tester.token, { channel, build_number: 150 })).toMatchObject({ level: "required", min_supported_build: 180 });

    const ota = otaOf(await binaryRelease(channel, 3, { update_policy: { minimum_build_number: 3 } }));
    const refused = await signedCall("/v1/releases", ota);
    expect(expectEnvelope(refused, 400, "VALIDATION_FAILED").details).toEqual([
      { field: "/update_policy", code: "unexpected_field", message: expect.any(String) },
    ]);
    expect(await releaseCount(channel)).toBe(1);
    // The binaries' minimum is untouched: the build below it must still update.
    expect(await checkBody(tester.token, { channel, build_number: 150 })).toMatchObject({ level: "required", min_supported_build: 180 });
  });

  it("expo_client (the app's public Expo config) is an OTA update's only: a plain JSON object of bounded size, refused for a binary", async () => {
    const channel = freshChannel();
    const binary = await binaryRelease(channel, 1);
    const expoClient = { name: "App", slug: "app", version: "1.0.0", extra: { eas: { projectId: randomUUID() } } };
    const refusals: [string, unknown, { field: string; code: string }][] = [
      ["a binary's", { ...binary, expo_client: expoClient }, { field: "/expo_client", code: "unexpected_field" }],
      ["an array", { ...otaOf(binary), expo_client: [expoClient] }, { field: "/expo_client", code: "invalid_type" }],
      ["null", { ...otaOf(binary), expo_client: null }, { field: "/expo_client", code: "invalid_type" }],
      ["a string", { ...otaOf(binary), expo_client: JSON.stringify(expoClient) }, { field: "/expo_client", code: "invalid_type" }],
      ["too large", { ...otaOf(binary), expo_client: { ...expoClient, extra: { blob: "x".repeat(MAX_EXPO_CLIENT_BYTES) } } }, { field: "/expo_client", code: "too_large" }],
      ["with a NUL", { ...otaOf(binary), expo_client: { ...expoClient, name: "A\u0000pp" } }, { field: "/expo_client/name", code: "invalid_characters" }],
    ];
    for (const [label, body, detail] of refusals) {
      const response = await signedCall("/v1/releases", body);
      expect({ label, details: expectEnvelope(response, 400, "VALIDATION_FAILED").details }).toEqual({ label, details: [{ ...detail, message: expect.any(String) }] });
    }
    expect(await releaseCount(channel)).toBe(0);

    // Published with an OTA update, it is kept and answered back as it was sent; without one it is null.
    const published = await signedCall("/v1/releases", { ...otaOf(binary), expo_client: expoClient });
    expect(published.status, published.text).toBe(201);
    expect(releaseSchema.parse(published.body).expo_client).toEqual(expoClient);
    const plain = await signedCall("/v1/releases", otaOf(await binaryRelease(channel, 2)));
    expect(releaseSchema.parse(plain.body).expo_client).toBeNull();
  });
});

describe("POST /v1/releases: what no Expo Updates request could receive is refused", () => {
  const otaOf = (release: Awaited<ReturnType<typeof binaryRelease>>, runtimeVersion = "1.0") =>
    ({ ...release, kind: "ota" as const, runtime_version: runtimeVersion, artifact: { ...release.artifact, content_type: "application/javascript" } });

  it("an OTA update's runtime_version is what the expo-runtime-version header carries: visible ASCII, spaces only inside (400 invalid_format); a binary's decides nothing and is stored as sent", async () => {
    const channel = freshChannel();
    // HTTP drops whitespace at either end of a header value; Deno reads its bytes as Latin-1 (and OkHttp sends ASCII only).
    for (const runtimeVersion of ["3.0 ", " 4.0", "5.0\t", "\t5.1", "6.0-\u03b2", "6.1\u00a0", "6.2\u00e9", "7.0\tbeta", "7.1\n"]) {
      const refused = await signedCall("/v1/releases", otaOf(await binaryRelease(channel, 1), runtimeVersion));
      expect({ runtimeVersion, details: expectEnvelope(refused, 400, "VALIDATION_FAILED").details })
        .toEqual({ runtimeVersion, details: [{ field: "/runtime_version", code: "invalid_format", message: expect.stringMatching(/expo-runtime-version/) }] });
    }
    expect(await releaseCount(channel)).toBe(0);
    // What Expo's runtime version policies give (a string, appVersion, nativeVersion, sdkVersion, fingerprint), and inner spaces.
    const accepted = ["1.0.0", "1.0.0(14)", "exposdk:51.0.0", "b7c8f4a9d2e1c3b5a6f7e8d9c0b1a2f3e4d5c6b7", "2.0 beta (rc1)", "!~", "x".repeat(64)];
    for (const [i, runtimeVersion] of accepted.entries()) {
      const published = await signedCall("/v1/releases", otaOf(await binaryRelease(channel, 10 + i), runtimeVersion));
      expect(published.status, `${runtimeVersion}: ${published.text}`).toBe(201);
      expect(releaseSchema.parse(published.body).runtime_version).toBe(runtimeVersion);
    }
    // A binary's runtime_version is answered back and decides nothing (docs/test-builds.md): any storable text, as before.
    const binary = await signedCall("/v1/releases", await binaryRelease(channel, 100, { runtime_version: "6.0-\u03b2 " }));
    expect(binary.status, binary.text).toBe(201);
    expect(releaseSchema.parse(binary.body).runtime_version).toBe("6.0-\u03b2 ");
  });

  it("an OTA update is for ios or android (400 invalid_value on /platform): the Expo Updates protocol has no web platform", async () => {
    const channel = freshChannel();
    const refused = await signedCall("/v1/releases", { ...otaOf(await binaryRelease(channel, 1)), platform: "web" });
    expect(expectEnvelope(refused, 400, "VALIDATION_FAILED").details).toEqual([
      { field: "/platform", code: "invalid_value", message: expect.any(String) },
    ]);
    expect(await releaseCount(channel)).toBe(0);
    // A web binary is a build like any other.
    expect((await signedCall("/v1/releases", await binaryRelease(channel, 1, { platform: "web" }))).status).toBe(201);
  });
});

describe("POST and PATCH /v1/releases, feedback: a number JSON.parse would read as another is refused (not_exact), never stored changed", () => {
  const otaOf = (release: Awaited<ReturnType<typeof binaryRelease>>) =>
    ({ ...release, kind: "ota" as const, runtime_version: "1.0", artifact: { ...release.artifact, content_type: "application/javascript" } });
  /** `body` as JSON text with `fields` (raw JSON text each) added at its end. */
  const withRaw = (body: object, fields: string) => `${JSON.stringify(body).slice(0, -1)},${fields}}`;

  it("expo_client keeps every number as sent or is refused at the number: it is served, code-signed, as the app's config", async () => {
    const channel = freshChannel();
    const inexact = withRaw(otaOf(await binaryRelease(channel, 1)),
      '"expo_client":{"name":"App","extra":{"facebookAppId":12345678901234567890,"ratio":0.1000000000000000055511151231257827,"tiny":1e-400,"ok":[1,0.1]}}');
    const refused = await signedCall("/v1/releases", undefined, { rawBody: inexact });
    const error = expectEnvelope(refused, 400, "VALIDATION_FAILED");
    expect(error.details).toEqual([
      { field: "/expo_client/extra/facebookAppId", code: "not_exact", message: expect.stringMatching(/12345678901234567000/) },
      { field: "/expo_client/extra/ratio", code: "not_exact", message: expect.stringMatching(/ 0\.1:/) },
      { field: "/expo_client/extra/tiny", code: "not_exact", message: expect.stringMatching(/ 0:/) },
    ]);
    expect(error.message).toBe("3 fields are invalid");
    expect(await releaseCount(channel)).toBe(0);
    // Long literals a double holds as written are numbers like any other.
    const exact = withRaw(otaOf(await binaryRelease(channel, 2)), '"expo_client":{"extra":{"big":1e21,"sum":0.30000000000000004,"max":9007199254740992,"id":"12345678901234567890"}}');
    const published = await signedCall("/v1/releases", undefined, { rawBody: exact });
    expect(published.status, published.text).toBe(201);
    expect(releaseSchema.parse(published.body).expo_client).toEqual({ extra: { big: 1e21, sum: 0.30000000000000004, max: 9007199254740992, id: "12345678901234567890" } });
  });

  it("an integer field given a literal that reads as another number (1e-400 as 0) is 400 not_exact on POST, PATCH and feedback", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const release = await binaryRelease(channel, 1);
    const { build_number: _build, ...withoutBuild } = release;
    const cases: [string, string][] = [
      [withRaw(withoutBuild, '"build_number":1e-400'), "/build_number"],
      [withRaw(release, '"rollout_percentage":1e-400'), "/rollout_percentage"],
      [withRaw(release, '"update_policy":{"minimum_build_number":1.0000000000000001}'), "/update_policy/minimum_build_number"],
      [JSON.stringify(release).replace(`"size":${release.artifact.size}`, `"size":${release.artifact.size}.00000000000000001`), "/artifact/size"],
    ];
    for (const [rawBody, field] of cases) {
      const refused = await signedCall("/v1/releases", undefined, { rawBody });
      expect({ field, details: expectEnvelope(refused, 400, "VALIDATION_FAILED").details })
        .toEqual({ field, details: [{ field, code: "not_exact", message: expect.any(String) }] });
    }
    expect(await releaseCount(channel)).toBe(0);

    const { id } = await publish(release);
    const patch = await signedCall(`/v1/releases/${id}`, undefined, { method: "PATCH", rawBody: '{"rollout_percentage":1e-400}' });
    expect(expectEnvelope(patch, 400, "VALIDATION_FAILED").details).toEqual([{ field: "/rollout_percentage", code: "not_exact", message: expect.any(String) }]);
    expect((await adminSql`select rollout_percentage from app_private.releases where id = ${id}`)[0].rollout_percentage).toBe(100);

    const feedback = await call(`/v1/releases/${id}/feedback`, {
      method: "POST", token: tester.token, headers: { "content-type": "application/json" }, rawBody: '{"body":"hi","platform":"ios","build_number":1e-400}',
    });
    expect(expectEnvelope(feedback, 400, "VALIDATION_FAILED").details).toEqual([{ field: "/build_number", code: "not_exact", message: expect.any(String) }]);
    expect((await adminSql`select count(*)::int as n from app_private.release_feedback where release_id = ${id}`)[0].n).toBe(0);
    // The same numbers written exactly are taken.
    const sent = await call(`/v1/releases/${id}/feedback`, {
      method: "POST", token: tester.token, headers: { "content-type": "application/json" }, rawBody: '{"body":"hi","platform":"ios","build_number":1e0}',
    });
    expect(sent.status, sent.text).toBe(201);
  });
});

describe("PATCH /v1/releases/{id}", () => {
  it("changes status and rollout once per webhook-id; unknown ids are 404; unsigned is 401", async () => {
    const channel = freshChannel();
    const { id } = await publish(await binaryRelease(channel, 5));
    const webhookId = `msg_${randomUUID()}`;
    const paused = await signedCall(`/v1/releases/${id}`, { status: "paused" }, { method: "PATCH", webhookId });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body).toMatchObject({ id, status: "paused" });
    await setRelease(id, { status: "active", rollout_percentage: 40 });
    // The first delivery retried late must not undo the later change.
    const retried = await signedCall(`/v1/releases/${id}`, { status: "paused" }, { method: "PATCH", webhookId });
    expect(retried.status).toBe(200);
    const [row] = await adminSql`select status, rollout_percentage from app_private.releases where id = ${id}`;
    expect(row).toEqual({ status: "active", rollout_percentage: 40 });

    expectEnvelope(await signedCall(`/v1/releases/${randomUUID()}`, { status: "paused" }, { method: "PATCH" }), 404, "NOT_FOUND");
    expectEnvelope(await signedCall("/v1/releases/not-a-uuid", { status: "paused" }, { method: "PATCH" }), 404, "NOT_FOUND");
    expectEnvelope(await call(`/v1/releases/${id}`, { method: "PATCH", body: { status: "rolled_back" } }), 401, "UNAUTHENTICATED");
    expectEnvelope(await signedCall(`/v1/releases/${id}`, { version: "9.9.9" }, { method: "PATCH" }), 400, "VALIDATION_FAILED");
  });
  it("a webhook-id is one change: on another release, or with another body, it is 400 webhook_id_reused and changes nothing", async () => {
    const channel = freshChannel();
    const a = await publish(await binaryRelease(channel, 5));
    const b = await publish(await binaryRelease(channel, 6));
    const webhookId = `msg_${randomUUID()}_rollout`;
    const widened = await signedCall(`/v1/releases/${a.id}`, { rollout_percentage: 50 }, { method: "PATCH", webhookId });
    expect(widened.body).toMatchObject({ id: a.id, rollout_percentage: 50 });
    const state = async () => await adminSql`select id, status, rollout_percentage from app_private.releases where channel = ${channel} order by build_number`;
    const before = await state();

    const rollBackB = await signedCall(`/v1/releases/${b.id}`, { status: "rolled_back" }, { method: "PATCH", webhookId });
    expect(expectEnvelope(rollBackB, 400, "VALIDATION_FAILED").details?.[0]).toMatchObject({ field: "/headers/webhook-id", code: "webhook_id_reused" });
    const fullRollout = await signedCall(`/v1/releases/${a.id}`, { rollout_percentage: 100 }, { method: "PATCH", webhookId });
    expectEnvelope(fullRollout, 400, "VALIDATION_FAILED");
    expect(await state()).toEqual(before);
    expect(before.map((r) => [r.status, r.rollout_percentage])).toEqual([["active", 50], ["active", 100]]);

    // The same change again is a retry: 200, nothing changes.
    const retried = await signedCall(`/v1/releases/${a.id}`, { rollout_percentage: 50 }, { method: "PATCH", webhookId });
    expect(retried.status, retried.text).toBe(200);
    expect(await state()).toEqual(before);
  });
});

describe("a CI signature is good for the request it was made for, once", () => {
  it("a read's headers are refused on another release or query, and when sent again", async () => {
    const a = await releaseWithFeedback("feedback on A");
    const b = await releaseWithFeedback("SECRET-FEEDBACK-ON-B");
    const captured = { method: "GET" as const, webhookId: `msg_${randomUUID()}`, timestamp: new Date() };
    const read = await signedCall(`/v1/releases/${a}/feedback`, undefined, captured);
    expect(read.status, read.text).toBe(200);
    expect(read.body.feedback.map((f: { body: string }) => f.body)).toEqual(["feedback on A"]);

    // The same headers (signed for A's feedback): on B, on A with another query, and on A again.
    const signedForA = { ...captured, signs: { method: "GET", target: `/v1/releases/${a}/feedback` } };
    const refusals = [
      await signedCall(`/v1/releases/${b}/feedback?limit=500`, undefined, signedForA),
      await signedCall(`/v1/releases/${b}/feedback`, undefined, signedForA),
      await signedCall(`/v1/releases/${a}/feedback?limit=500`, undefined, signedForA),
      await signedCall(`/v1/releases/${a}/feedback`, undefined, captured),
      // Signed over the empty body alone, as reads were before: good for any release, so refused.
      await signedCall(`/v1/releases/${b}/feedback`, undefined, { method: "GET", signs: "body" }),
    ];
    for (const response of refusals) {
      expectEnvelope(response, 401, "UNAUTHENTICATED");
      expect(response.text).not.toContain("SECRET-FEEDBACK-ON-B");
    }
    expect(refusals[3].body.error.message).toMatch(/webhook-id was already used/);

    // Signed for B's feedback with its query, with a new id: read.
    const readB = await signedCall(`/v1/releases/${b}/feedback?limit=500`, undefined, { method: "GET" });
    expect(readB.status, readB.text).toBe(200);
    expect(readB.body.feedback.map((f: { body: string }) => f.body)).toEqual(["SECRET-FEEDBACK-ON-B"]);
  });

  it("a PATCH signed for one release changes no other; signed over its body alone it changes none", async () => {
    const channel = freshChannel();
    const a = (await publish(await binaryRelease(channel, 1))).id;
    const b = (await publish(await binaryRelease(channel, 2))).id;
    const rollBack = { status: "rolled_back" };
    const forA = await signedCall(`/v1/releases/${b}`, rollBack, { method: "PATCH", signs: { method: "PATCH", target: `/v1/releases/${a}` } });
    expectEnvelope(forA, 401, "UNAUTHENTICATED");
    expectEnvelope(await signedCall(`/v1/releases/${b}`, rollBack, { method: "PATCH", signs: "body" }), 401, "UNAUTHENTICATED");
    const [row] = await adminSql`select status from app_private.releases where id = ${b}`;
    expect(row.status).toBe("active");
    expect(await setRelease(b, rollBack)).toMatchObject({ id: b, status: "rolled_back" });
    expect((await adminSql`select status from app_private.releases where id = ${a}`)[0].status).toBe("active");
  });

  it("POST /v1/releases takes a signature over the request, and one over its body alone (CI clients signing as before)", async () => {
    const channel = freshChannel();
    const bound = await signedCall("/v1/releases", await binaryRelease(channel, 1));
    expect(bound.status, bound.text).toBe(201);
    const bodyAlone = await signedCall("/v1/releases", await binaryRelease(channel, 2), { signs: "body" });
    expect(bodyAlone.status, bodyAlone.text).toBe(201);
    // …but not one made for another request.
    const other = await signedCall("/v1/releases", await binaryRelease(channel, 3), { signs: { method: "PATCH", target: "/v1/releases" } });
    expectEnvelope(other, 401, "UNAUTHENTICATED");
    expect(await releaseCount(channel)).toBe(2);
  });
});

describe("GET /v1/releases/check", () => {
  it("a non-member gets exactly the answer of a channel without builds; a member gets the build with a working link", async () => {
    const tester = await createTestUser();
    const outsider = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const release = await binaryRelease(channel, 200, { release_notes: "New onboarding" });
    const { id } = await publish(release);

    const member = await checkBody(tester.token, { channel, build_number: 100 });
    expect(member).toMatchObject({ level: "optional", update: { id, build_number: 200, release_notes: "New onboarding" }, min_supported_build: null });
    expect(member.release).toEqual(member.update);
    expect(member.update!.download).toMatchObject({ sha256: release.artifact.sha256, size: release.artifact.size });
    const expiresIn = Date.parse(member.update!.download.expires_at!) - Date.now();
    expect(expiresIn).toBeGreaterThan(55 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);
    const download = await fetch(member.update!.download.url);
    expect(download.status).toBe(200);
    expect(await sha256Of(new Uint8Array(await download.arrayBuffer()))).toBe(release.artifact.sha256);

    const hidden = await check(outsider.token, { channel, build_number: 100 });
    const empty = await check(outsider.token, { channel: freshChannel(), build_number: 100 });
    expect(hidden.status).toBe(200);
    expect(hidden.body).toEqual(nothing());
    expect({ status: hidden.status, body: timeless(hidden.body) }).toEqual({ status: empty.status, body: timeless(empty.body) });
    // The tester with nothing newer gets the same none too.
    expect(await checkBody(tester.token, { channel, build_number: 200 })).toEqual(nothing());
  });

  it("required below the channel's minimum build, optional at or above it; the minimum never leaks to non-members", async () => {
    const tester = await createTestUser();
    const outsider = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    await publish(await binaryRelease(channel, 300, { update_policy: { minimum_build_number: 150 } }));
    expect((await checkBody(tester.token, { channel, build_number: 100 })).level).toBe("required");
    expect((await checkBody(tester.token, { channel, build_number: 150 })).level).toBe("optional");
    // The outsider learns no minimum: RLS hides the channel's policy as it hides its builds.
    expect(await checkBody(outsider.token, { channel, build_number: 100 })).toEqual(nothing());
    // The other platform of the channel has no policy: optional.
    await publish(await binaryRelease(channel, 300, { platform: "android" }));
    expect((await checkBody(tester.token, { channel, build_number: 100, platform: "android" })).level).toBe("optional");
  });

  it("required only when the build offered meets the minimum: a staged build's minimum reaches each device with its rollout", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    await publish(await binaryRelease(channel, 190));
    const staged = await publish(await binaryRelease(channel, 200, { rollout_percentage: 0, update_policy: { minimum_build_number: 200 } }));
    // 200 reaches this device not yet: 190, still below the minimum, is offered, not forced (installing it would not lift a block).
    expect(await checkBody(tester.token, { channel, build_number: 150 })).toMatchObject({ level: "optional", update: { build_number: 190 }, min_supported_build: 200 });
    expect(await checkBody(tester.token, { channel, build_number: 190 })).toMatchObject({ level: "none", update: null, min_supported_build: 200 });
    // Rolled out: the build that meets the minimum is offered, and required.
    await setRelease(staged.id, { rollout_percentage: 100 });
    for (const build of [150, 190]) {
      expect(await checkBody(tester.token, { channel, build_number: build })).toMatchObject({ level: "required", update: { build_number: 200 }, min_supported_build: 200 });
    }
  });

  it("the channel's minimum is the one the highest build published with one carries: a lower build published later leaves it", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    await publish(await binaryRelease(channel, 520, { update_policy: { minimum_build_number: 520 } }));
    // A hotfix branch, a slower parallel pipeline or an old CI run re-run: a lower build with a lower minimum.
    await publish(await binaryRelease(channel, 515, { update_policy: { minimum_build_number: 480 } }));
    for (const build of [400, 490]) {
      expect(await checkBody(tester.token, { channel, build_number: build })).toMatchObject({ level: "required", update: { build_number: 520 }, min_supported_build: 520 });
    }
    // A higher build lowers it on purpose; its policy is taken whole (no below_minimum_level: required).
    await publish(await binaryRelease(channel, 530, { update_policy: { minimum_build_number: 450, below_minimum_level: "optional" } }));
    expect(await checkBody(tester.token, { channel, build_number: 400 })).toMatchObject({ level: "optional", min_supported_build: 450 });
    await publish(await binaryRelease(channel, 540, { update_policy: { minimum_build_number: 450 } }));
    expect(await checkBody(tester.token, { channel, build_number: 400 })).toMatchObject({ level: "required", min_supported_build: 450 });
  });

  it("answers the fields api-v1.md fixes — update, level, min_supported_build, server_time — and release, update's deprecated name", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 300, { update_policy: { minimum_build_number: 150 } }));
    await publish(await binaryRelease(channel, 300, { platform: "android" }));
    const [before] = await adminSql<{ now: string }[]>`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`;

    // A required minimum: below it, the build is required and the answer names the minimum.
    const below = await check(tester.token, { channel, build_number: 100 });
    expect(below.status, below.text).toBe(200);
    expect(Object.keys(below.body).sort()).toEqual(["level", "min_supported_build", "release", "server_time", "update"]);
    expect(below.body).toMatchObject({ update: { id, build_number: 300 }, level: "required", min_supported_build: 150 });
    expect(below.body.release).toEqual(below.body.update);
    // server_time: the database's clock in the one wire format, as a push's and a pull's.
    const [after] = await adminSql<{ now: string }[]>`select to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`;
    expect(below.body.server_time).toMatch(WIRE_TIME);
    expect(below.body.server_time >= before.now && below.body.server_time <= after.now).toBe(true);
    // At or above the minimum: optional, the same minimum; nothing newer: none, the minimum still said.
    expect(await checkBody(tester.token, { channel, build_number: 150 })).toMatchObject({ update: { id }, level: "optional", min_supported_build: 150 });
    expect(await checkBody(tester.token, { channel, build_number: 300 })).toEqual(nothing(150));
    // No minimum on the channel's other platform: min_supported_build is null.
    const android = await check(tester.token, { channel, build_number: 100, platform: "android" });
    expect(Object.keys(android.body).sort()).toEqual(["level", "min_supported_build", "release", "server_time", "update"]);
    expect(android.body).toMatchObject({ update: { build_number: 300 }, level: "optional", min_supported_build: null });
    expect(android.body.release).toEqual(android.body.update);
    // The OpenAPI document says release is deprecated.
    const openapi = await call("/v1/openapi.json");
    const schema = openapi.body.components.schemas.UpdateCheck;
    expect(schema.required.sort()).toEqual(["level", "min_supported_build", "release", "server_time", "update"]);
    expect(schema.properties.release.deprecated).toBe(true);
  });

  it("paused and rolled-back builds are never offered; rolling back the newest offers the previous one again", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const older = await publish(await binaryRelease(channel, 200));
    const newer = await publish(await binaryRelease(channel, 300));
    const paused = await publish(await binaryRelease(channel, 400, { status: "paused" }));
    expect((await checkBody(tester.token, { channel, build_number: 100 })).update?.id).toBe(newer.id);

    await setRelease(newer.id, { status: "rolled_back" });
    expect((await checkBody(tester.token, { channel, build_number: 100 })).update?.id).toBe(older.id);
    await setRelease(older.id, { status: "paused" });
    expect(await checkBody(tester.token, { channel, build_number: 100 })).toEqual(nothing());
    await setRelease(paused.id, { status: "active" });
    expect((await checkBody(tester.token, { channel, build_number: 100 })).update?.id).toBe(paused.id);
  });

  it("a percentage rollout over 1,000 devices: within ±5%, the same answer on every check, raising it only adds devices", async () => {
    const user = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [user.userId]);
    const { id } = await publish(await binaryRelease(channel, 500, { rollout_percentage: 30 }));

    // 1,000 installations of the app: a session each with its registered device.
    const devices = Array.from({ length: 1000 }, () => ({ sessionId: randomUUID(), installationId: randomUUID() }));
    await adminSql`
      insert into auth.sessions ${adminSql(devices.map((d) => ({ id: d.sessionId, user_id: user.userId, aal: "aal1", created_at: new Date(), updated_at: new Date() })))}`;
    await adminSql`
      insert into app_private.devices ${adminSql(devices.map((d) => ({
        user_id: user.userId, installation_id: d.installationId, platform: "ios", app_version: "1.0", build_number: 100, session_id: d.sessionId,
      })))}`;
    const tokens = await Promise.all(devices.map((d) =>
      signEs256(stack.keys.privateJwk, supabaseClaims({ userId: user.userId, sessionId: d.sessionId, email: user.email }))));

    async function offered(): Promise<Set<number>> {
      const result = new Set<number>();
      for (let start = 0; start < tokens.length; start += 8) {
        const answers = await Promise.all(tokens.slice(start, start + 8).map((token) => checkBody(token, { channel, build_number: 100 })));
        answers.forEach((answer, i) => {
          if (answer.update) {
            expect(answer.update.id).toBe(id);
            result.add(start + i);
          }
        });
      }
      return result;
    }

    const first = await offered();
    expect(first.size).toBeGreaterThanOrEqual(250);
    expect(first.size).toBeLessThanOrEqual(350);
    expect([...(await offered())].sort()).toEqual([...first].sort());

    await setRelease(id, { rollout_percentage: 60 });
    const raised = await offered();
    expect(raised.size).toBeGreaterThanOrEqual(550);
    expect(raised.size).toBeLessThanOrEqual(650);
    expect([...first].every((device) => raised.has(device))).toBe(true);
  }, 240_000);

  it("download links are refused once tampered with, for another object, or expired", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const release = await binaryRelease(channel, 200);
    await publish(release);
    const other = await binaryRelease(channel, 201, { status: "paused" });
    await publish(other);
    const link = new URL((await checkBody(tester.token, { channel, build_number: 100 })).update!.download.url);
    expect((await fetch(link)).status).toBe(200);

    const token = link.searchParams.get("token")!;
    const [header, payload, signature] = token.split(".");
    const flipped = `${signature.slice(0, -2)}${signature.endsWith("AA") ? "BB" : "AA"}`;
    const tamperedSignature = new URL(link);
    tamperedSignature.searchParams.set("token", `${header}.${payload}.${flipped}`);
    const tamperedPayload = new URL(link);
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), exp: 4102444800 })).toString("base64url");
    tamperedPayload.searchParams.set("token", `${header}.${forged}.${signature}`);
    const otherObject = new URL(link);
    otherObject.pathname = otherObject.pathname.replace(/200\.ipa$/, "201.ipa");
    for (const refused of [tamperedSignature, tamperedPayload, otherObject]) {
      const response = await fetch(refused);
      expect(response.status, refused.toString()).toBe(400);
      expect(await response.json()).toMatchObject({ statusCode: "400" });
    }

    // A link of a server configured for 1-second links, used after its second.
    const shortLived = await startFunctionsServer({ ...stack.functionsEnv, TIDESYNC_DOWNLOAD_LINK_TTL_S: "1" }, { name: `${stack.database}-short-links` });
    started.push(shortLived);
    const answer = await call(`/v1/releases/check?platform=ios&channel=${channel}&build_number=100`, { token: tester.token, baseUrl: shortLived.apiUrl });
    const shortLink = updateCheckResponseSchema.parse(answer.body).update!.download;
    expect(Date.parse(shortLink.expires_at!) - Date.now()).toBeLessThanOrEqual(1000);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const late = await fetch(shortLink.url);
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ error: "InvalidJWT", message: "jwt expired" });

    // The same link with its lifetime over: signed like the store signs, with exp in the past.
    const objectUrl = decodeURIComponent(link.pathname.split("/object/sign/")[1]);
    const past = Math.floor(Date.now() / 1000) - 10;
    const expiredToken = await new SignJWT({ url: objectUrl }).setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt(past - 3600).setExpirationTime(past).sign(new TextEncoder().encode(stack.functionsEnv.TIDESYNC_LOCAL_STORAGE_SECRET));
    const expired = new URL(link);
    expired.searchParams.set("token", expiredToken);
    const expiredResponse = await fetch(expired);
    expect(expiredResponse.status).toBe(400);
    expect(await expiredResponse.json()).toMatchObject({ error: "InvalidJWT", message: "jwt expired" });
  });

  it("401 without a token, 400 in the envelope for a bad query", async () => {
    expectEnvelope(await call("/v1/releases/check?platform=ios&channel=beta&build_number=1"), 401, "UNAUTHENTICATED");
    const user = await createTestUser();
    const bad = await call("/v1/releases/check?platform=symbian&channel=BETA!&build_number=-1", { token: user.token });
    expect(expectEnvelope(bad, 400, "VALIDATION_FAILED").details?.map((d) => d.field).sort()).toEqual(["/build_number", "/channel", "/platform"]);
    // A missing parameter is required, an enum's too (errors.md).
    const missing = await call("/v1/releases/check?channel=beta&build_number=1", { token: user.token });
    expect(expectEnvelope(missing, 400, "VALIDATION_FAILED").details).toEqual([{ field: "/platform", code: "required", message: "is required" }]);
  });
});

// docs/test-builds.md, Limits: a rollout spreads a release's arrival, it does not restrict who gets
// it: the key is the device's to choose, and the bucket anyone's to compute.
describe("a rollout and a key the caller chooses", () => {
  it("a session registered with an installation_id inside a 1% rollout is offered that build", async () => {
    const user = await createTestUser();
    const channel = freshChannel("prod");
    await testerGroup([channel], [user.userId]);
    const { id } = await publish(await binaryRelease(channel, 500, { rollout_percentage: 1 }));
    let installation = randomUUID();
    while (await rolloutBucket(id, installation) >= 100) installation = randomUUID();
    await startSession(user.token, phone({ installation_id: installation }));
    expect((await check(user.token, { channel, build_number: 100 })).body.update?.build_number).toBe(500);
  });
});

describe("GET /v1/meta", () => {
  it("publishes the test-build settings a team configures CI and Expo apps with", async () => {
    const meta = await call("/v1/meta");
    expect(meta.body.releases).toEqual({
      download_link_ttl_seconds: 3600,
      webhook_tolerance_seconds: 300,
      expo_updates_url_path: "/v1/expo-updates/manifest",
      expo_code_signing: { keyid: "main", alg: "rsa-v1_5-sha256" },
      max_feedback_per_user_and_release: 50,
    });
  });
});

describe("the client: checkForUpdate() and sendReleaseFeedback()", () => {
  it("asks the real server for the caller's update, then sends feedback on it", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 300, { update_policy: { minimum_build_number: 200 } }));
    const client = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => tester.token });
    const update = await client.checkForUpdate({ platform: "ios", channel, buildNumber: 150 });
    expect(update).toMatchObject({ level: "required", update: { id, build_number: 300 }, min_supported_build: 200 });
    expect(await client.checkForUpdate({ platform: "ios", channel, buildNumber: 300 })).toEqual(nothing(200));
    const feedback = await client.sendReleaseFeedback(id, { body: "Works on my phone", platform: "ios", build_number: 300 });
    expect(feedback).toMatchObject({ release_id: id, build_number: 300 });
  });
});

describe("POST /v1/releases/{id}/feedback", () => {
  it("a tester's feedback is stored with their device's platform and build; a non-member gets the 404 of an unknown id", async () => {
    const tester = await createTestUser();
    const outsider = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 200));
    const device = await startSession(tester.token, phone({ platform: "ios", build_number: 200 }));

    const sent = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: "The login button does nothing" } });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body).toMatchObject({ release_id: id, platform: "ios", build_number: 200, device_id: device.body.device.id });
    const rows = await adminSql`select user_id, body from app_private.release_feedback where release_id = ${id}`;
    expect(rows).toEqual([{ user_id: tester.userId, body: "The login button does nothing" }]);

    const hidden = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: outsider.token, body: { body: "found it", platform: "ios", build_number: 1 } });
    const unknown = await call(`/v1/releases/${randomUUID()}/feedback`, { method: "POST", token: outsider.token, body: { body: "found it", platform: "ios", build_number: 1 } });
    expectEnvelope(hidden, 404, "NOT_FOUND");
    expect(withoutRequestId(hidden.body)).toEqual(withoutRequestId(unknown.body));
    expect((await adminSql`select count(*)::int as n from app_private.release_feedback where release_id = ${id}`)[0].n).toBe(1);

    // Whoever manages releases reads it, signed like CI; a tester's token is no way to.
    const read = await signedCall(`/v1/releases/${id}/feedback`, undefined, { method: "GET" });
    expect(read.status, read.text).toBe(200);
    expect(read.body.feedback).toEqual([expect.objectContaining({ user_id: tester.userId, body: "The login button does nothing", build_number: 200 })]);
    expectEnvelope(await call(`/v1/releases/${id}/feedback`, { token: tester.token }), 401, "UNAUTHENTICATED");
    expectEnvelope(await signedCall(`/v1/releases/${randomUUID()}/feedback`, undefined, { method: "GET" }), 404, "NOT_FOUND");
    expectEnvelope(await signedCall(`/v1/releases/${id}/feedback`, undefined, { method: "GET", headers: { "webhook-signature": "v1,AAAA" } }), 401, "UNAUTHENTICATED");
  });

  it("a tester's account deleted by Supabase Auth takes their feedback and memberships with it; the release stays", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    const group = await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 200));
    await startSession(tester.token, phone({ platform: "ios", build_number: 200 }));
    expect((await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: "bye" } })).status).toBe(201);

    await adminSql`delete from auth.users where id = ${tester.userId}`;
    const [left] = await adminSql`
      select (select count(*)::int from app_private.release_feedback where release_id = ${id}) as feedback,
             (select count(*)::int from app_private.tester_group_members where group_id = ${group}) as members,
             (select count(*)::int from app_private.releases where id = ${id}) as releases`;
    expect(left).toEqual({ feedback: 0, members: 0, releases: 1 });
  });

  it("a release the owner deletes (published by mistake) takes its deliveries and feedback with it and is never offered", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const webhookId = `msg_${randomUUID()}`;
    const release = await binaryRelease(channel, 200);
    const published = await signedCall("/v1/releases", release, { webhookId });
    expect(published.status).toBe(201);
    const { id } = published.body;
    await signedCall(`/v1/releases/${id}`, { rollout_percentage: 50 }, { method: "PATCH" });
    await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: "oops", platform: "ios", build_number: 1 } });

    await adminSql`delete from app_private.releases where id = ${id}`;
    const [left] = await adminSql`
      select (select count(*)::int from app_private.release_webhook_deliveries where release_id = ${id}) as deliveries,
             (select count(*)::int from app_private.release_feedback where release_id = ${id}) as feedback`;
    expect(left).toEqual({ deliveries: 0, feedback: 0 });
    expect(await checkBody(tester.token, { channel, build_number: 100 })).toEqual(nothing());
    // Its delivery id is free again: CI re-running that delivery publishes the build anew.
    expect((await signedCall("/v1/releases", release, { webhookId })).status).toBe(201);
  });

  it("feedback goes with the tester's account: deleting the user (what the account purge does) leaves none of theirs", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 200));
    await startSession(tester.token, phone({ platform: "ios", build_number: 200 }));
    const sent = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: "Crashes on launch" } });
    expect(sent.status, sent.text).toBe(201);

    await adminSql`delete from auth.users where id = ${tester.userId}`;
    expect((await adminSql`select count(*)::int as n from app_private.release_feedback where release_id = ${id}`)[0].n).toBe(0);
    expect(await releaseCount(channel)).toBe(1);
  });

  it("without a registered device the tester names platform and build", async () => {
    const tester = await createTestUser();
    const channel = freshChannel();
    await testerGroup([channel], [tester.userId]);
    const { id } = await publish(await binaryRelease(channel, 200));
    const missing = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: "hi" } });
    expect(expectEnvelope(missing, 400, "VALIDATION_FAILED").details?.map((d) => d.field).sort()).toEqual(["/build_number", "/platform"]);
    const sent = await call(`/v1/releases/${id}/feedback`, { method: "POST", token: tester.token, body: { body: "hi", platform: "android", build_number: 7 } });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ platform: "android", build_number: 7, device_id: null });
  });
});
