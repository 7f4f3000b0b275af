// GET /v1/expo-updates/manifest speaks the Expo Updates protocol v1 the way
// expo-updates reads it: the multipart/mixed answer is parsed with
// @expo/multipart-body-parser, and each part's expo-signature is verified
// against a code-signing certificate made with @expo/code-signing-certificates
// (what `npx expo-updates codesigning:generate` writes) for the server's key.
import { createPublicKey, createHash, verify, X509Certificate } from "node:crypto";
import { randomUUID } from "node:crypto";
import {
  convertCertificateToCertificatePEM,
  convertKeyPairPEMToKeyPair,
  generateSelfSignedCodeSigningCertificate,
  validateSelfSignedCertificate,
} from "@expo/code-signing-certificates";
import { isMultipartPartWithName, type MultipartPart, parseMultipartMixedResponseAsync } from "@expo/multipart-body-parser";
import { parseDictionary } from "structured-headers";
import { beforeAll, describe, expect, it } from "vitest";
import { republishedUpdateId } from "../../functions/_shared/releases/plan-expo-update.ts";
import type { PublishRelease } from "../../functions/_shared/schemas/releases.ts";
import { MAX_EXPO_CANDIDATES } from "../../functions/api/routes/expo-updates.ts";
import { adminSql, call, createTestUser, expectEnvelope, stack } from "../support/harness.ts";
import { signHs256, supabaseClaims } from "../support/tokens.ts";
import { freshChannel, publish, putArtifact, setRelease, testerGroup } from "../support/releases.ts";

const MANIFEST_PATH = "/v1/expo-updates/manifest";

/** The certificate an Expo app embeds (app.json updates.codeSigningCertificate) for the server's signing key. */
function codeSigningCertificate(): X509Certificate {
  const privateKeyPEM = stack.functionsEnv.TIDESYNC_EXPO_SIGNING_KEY;
  const publicKeyPEM = createPublicKey(privateKeyPEM).export({ type: "spki", format: "pem" }).toString();
  const keyPair = convertKeyPairPEMToKeyPair({ privateKeyPEM, publicKeyPEM });
  const certificate = generateSelfSignedCodeSigningCertificate({
    keyPair,
    validityNotBefore: new Date(Date.now() - 60_000),
    validityNotAfter: new Date(Date.now() + 365 * 24 * 3600_000),
    commonName: "tidesync test app",
  });
  validateSelfSignedCertificate(certificate, keyPair);
  return new X509Certificate(convertCertificateToCertificatePEM(certificate));
}

/** What expo-updates checks of a signed part: the rsa-v1_5-sha256 signature over the part body, for keyid main. */
function signatureIsValid(part: MultipartPart, certificate: X509Certificate): boolean {
  const header = part.headers.get("expo-signature");
  if (typeof header !== "string") return false;
  const dictionary = parseDictionary(header);
  const field = (name: string) => (dictionary.get(name) as [unknown, unknown] | undefined)?.[0];
  expect(field("keyid")).toBe("main");
  expect(field("alg")).toBe("rsa-v1_5-sha256");
  const signature = Buffer.from(String(field("sig")), "base64");
  return verify("sha256", Buffer.from(part.body, "utf8"), certificate.publicKey, signature);
}

interface ExpoRequest {
  channel: string;
  runtimeVersion?: string;
  platform?: "ios" | "android";
  protocol?: "0" | "1";
  token?: string;
  /** The Authorization header as sent (instead of `Bearer <token>`). */
  authorization?: string;
  currentUpdateId?: string;
  /** expo-embedded-update-id: expo-updates sends it with expo-current-update-id, the same id while the app runs its embedded update. */
  embeddedUpdateId?: string;
  expectSignature?: string;
  clientId?: string;
}

async function manifestRequest(request: ExpoRequest) {
  const headers: Record<string, string> = {
    "expo-protocol-version": request.protocol ?? "1",
    "expo-platform": request.platform ?? "ios",
    "expo-runtime-version": request.runtimeVersion ?? "1.0",
    "expo-channel-name": request.channel,
    "eas-client-id": request.clientId ?? randomUUID(),
  };
  if (request.currentUpdateId) headers["expo-current-update-id"] = request.currentUpdateId;
  if (request.embeddedUpdateId) headers["expo-embedded-update-id"] = request.embeddedUpdateId;
  if (request.expectSignature) headers["expo-expect-signature"] = request.expectSignature;
  const response = await fetch(`${stack.apiUrl}${MANIFEST_PATH}`, {
    headers: { ...headers, ...(request.token ? { authorization: `Bearer ${request.token}` } : {}), ...(request.authorization !== undefined ? { authorization: request.authorization } : {}) },
  });
  const body = Buffer.from(await response.arrayBuffer());
  const parts = response.status === 200 ? await parseMultipartMixedResponseAsync(response.headers.get("content-type")!, body) : [];
  const json = (name: string) => {
    const part = parts.find((p) => isMultipartPartWithName(p, name));
    return part ? JSON.parse(part.body) : undefined;
  };
  return { response, parts, manifest: json("manifest"), directive: json("directive"), extensions: json("extensions") };
}

async function otaRelease(channel: string, buildNumber: number, overrides: Partial<PublishRelease> = {}): Promise<PublishRelease> {
  const bundle = await putArtifact(`ota/${channel}/${buildNumber}/bundle.js`, `console.log(${JSON.stringify(`${channel} ${buildNumber} ${randomUUID()}`)});`);
  const logo = await putArtifact(`ota/${channel}/${buildNumber}/logo.png`, new Uint8Array([137, 80, 78, 71, buildNumber % 256]));
  return {
    platform: "ios",
    channel,
    kind: "ota",
    version: `1.0.${buildNumber}`,
    build_number: buildNumber,
    runtime_version: "1.0",
    artifact: { ...bundle, content_type: "application/javascript" },
    assets: [{ path: logo.path, sha256: logo.sha256, content_type: "image/png", file_extension: ".png" }],
    ...overrides,
  };
}

const base64url = (bytes: Buffer) => bytes.toString("base64url");

describe("GET /v1/expo-updates/manifest (Expo Updates protocol v1)", () => {
  let channel: string;
  beforeAll(async () => {
    channel = freshChannel("prod");
    await testerGroup([channel], [], { everyone: true });
  });

  it("answers multipart/mixed with the manifest of the newest update; every asset's hash matches what its URL serves", async () => {
    const release = await otaRelease(channel, 1);
    const { id } = await publish(release);
    const { response, manifest, extensions, directive } = await manifestRequest({ channel });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^multipart\/mixed; boundary=/);
    expect(response.headers.get("expo-protocol-version")).toBe("1");
    expect(response.headers.get("expo-sfv-version")).toBe("0");
    // The protocol wants "an appropriately short" cache time (it recommends private, max-age=0): none at all, as every answer.
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(directive).toBeUndefined();
    expect(extensions).toEqual({ assetRequestHeaders: {} });
    expect(manifest).toMatchObject({ id, runtimeVersion: "1.0", metadata: {}, extra: { tidesync: { release_id: id, channel } } });
    expect(Date.parse(manifest.createdAt)).not.toBeNaN();
    expect(manifest.launchAsset).toMatchObject({ contentType: "application/javascript", key: release.artifact.sha256 });
    expect(manifest.assets).toHaveLength(1);
    expect(manifest.assets[0]).toMatchObject({ contentType: "image/png", fileExtension: ".png" });
    for (const asset of [manifest.launchAsset, ...manifest.assets]) {
      const download = await fetch(asset.url);
      expect(download.status).toBe(200);
      expect(asset.hash).toBe(base64url(createHash("sha256").update(Buffer.from(await download.arrayBuffer())).digest()));
      expect(asset.hash).not.toMatch(/[+/=]/);
    }

    // The app already runs it: noUpdateAvailable.
    const again = await manifestRequest({ channel, currentUpdateId: id });
    expect(again.directive).toEqual({ type: "noUpdateAvailable" });
    expect(again.manifest).toBeUndefined();
  });

  it("code signing: with expo-expect-signature every part is signed, verifiable with the app's certificate", async () => {
    const certificate = codeSigningCertificate();
    const signed = await manifestRequest({ channel, expectSignature: 'sig, keyid="main", alg="rsa-v1_5-sha256"' });
    expect(signed.response.status).toBe(200);
    expect(signed.parts.map((p) => p.name).sort()).toEqual(["extensions", "manifest"]);
    for (const part of signed.parts) expect(signatureIsValid(part, certificate)).toBe(true);
    // The verification can fail: a changed body does not verify.
    const manifestPart = signed.parts.find((p) => p.name === "manifest")!;
    expect(signatureIsValid({ ...manifestPart, body: manifestPart.body.replace("1.0", "2.0") }, certificate)).toBe(false);

    const directive = await manifestRequest({ channel, runtimeVersion: "9.9", expectSignature: "sig" });
    expect(directive.parts.map((p) => p.name)).toEqual(["directive"]);
    expect(signatureIsValid(directive.parts[0], certificate)).toBe(true);

    const unsigned = await manifestRequest({ channel });
    expect(unsigned.parts.every((p) => !p.headers.has("expo-signature"))).toBe(true);

    const unknownKey = await call(MANIFEST_PATH, {
      headers: { "expo-platform": "ios", "expo-runtime-version": "1.0", "expo-channel-name": channel, "expo-expect-signature": 'sig, keyid="other"' },
    });
    expectEnvelope(unknownKey, 400, "VALIDATION_FAILED");
  });

  it("extra.expoClient is the app config published with the update (expo-constants' Constants.expoConfig), inside the signed manifest", async () => {
    const certificate = codeSigningCertificate();
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    // What `npx expo config --json --type public` prints, in part.
    const expoClient = { name: "Tide", slug: "tide", version: "1.0.0", runtimeVersion: "1.0", sdkVersion: "54.0.0", extra: { eas: { projectId: randomUUID() }, apiUrl: "https://api.example.com" } };
    const withConfig = await publish(await otaRelease(track, 1, { expo_client: expoClient }));
    const signed = await manifestRequest({ channel: track, expectSignature: 'sig, keyid="main", alg="rsa-v1_5-sha256"' });
    expect(signed.manifest.id).toBe(withConfig.id);
    expect(signed.manifest.extra).toEqual({ expoClient, tidesync: expect.objectContaining({ release_id: withConfig.id }) });
    // expo-updates verifies the manifest part as sent, expoClient included: a changed config does not verify.
    const manifestPart = signed.parts.find((p) => p.name === "manifest")!;
    expect(signatureIsValid(manifestPart, certificate)).toBe(true);
    expect(signatureIsValid({ ...manifestPart, body: manifestPart.body.replace("api.example.com", "evil.example.com") }, certificate)).toBe(false);

    // An update published without one has no expoClient (as before).
    const without = await publish(await otaRelease(track, 2));
    const plain = await manifestRequest({ channel: track });
    expect(plain.manifest.id).toBe(without.id);
    expect(Object.keys(plain.manifest.extra)).toEqual(["tidesync"]);
  });

  it("a wrong runtime version or platform gets no update (noUpdateAvailable; 204 for protocol 0)", async () => {
    const other = freshChannel("prod");
    await testerGroup([other], [], { everyone: true });
    await publish(await otaRelease(other, 1));
    expect((await manifestRequest({ channel: other, runtimeVersion: "2.0" })).directive).toEqual({ type: "noUpdateAvailable" });
    expect((await manifestRequest({ channel: other, platform: "android" })).directive).toEqual({ type: "noUpdateAvailable" });
    const legacy = await manifestRequest({ channel: other, runtimeVersion: "2.0", protocol: "0" });
    expect(legacy.response.status).toBe(204);
    expect(legacy.response.headers.get("expo-protocol-version")).toBe("0");
    expect(legacy.response.headers.get("cache-control")).toBe("no-store");
  });

  it("every runtime version a publish takes reaches the update through the header; one no publish takes is 400 on /headers/expo-runtime-version", async () => {
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    for (const [i, runtimeVersion] of ["2.0 beta (rc1)", "exposdk:51.0.0", "1.0.0(14)", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"].entries()) {
      const { id } = await publish(await otaRelease(track, 1 + i, { runtime_version: runtimeVersion }));
      const { manifest } = await manifestRequest({ channel: track, runtimeVersion });
      expect({ runtimeVersion, id: manifest?.id, served: manifest?.runtimeVersion }).toEqual({ runtimeVersion, id, served: runtimeVersion });
    }
    // Bytes beyond ASCII arrive as Latin-1 characters (what Deno reads): no publish has such a runtime version.
    const latin1 = await call(MANIFEST_PATH, { headers: { "expo-platform": "ios", "expo-runtime-version": "6.2\u00e9", "expo-channel-name": track } });
    expect(expectEnvelope(latin1, 400, "VALIDATION_FAILED").details).toEqual([
      { field: "/headers/expo-runtime-version", code: "invalid_format", message: expect.any(String) },
    ]);
  });

  it("rolling back the newest update offers the previous; rolling back the last one is rollBackToEmbedded", async () => {
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    const first = await publish(await otaRelease(track, 1));
    const second = await publish(await otaRelease(track, 2));
    expect((await manifestRequest({ channel: track })).manifest.id).toBe(second.id);

    await setRelease(second.id, { status: "rolled_back" });
    // The previous update, served as of the rollback: expo-updates takes it over the rolled-back one.
    const previous = (await manifestRequest({ channel: track, currentUpdateId: second.id })).manifest;
    expect(previous.extra.tidesync.release_id).toBe(first.id);

    const rolledBack = await setRelease(first.id, { status: "rolled_back" });
    await setRelease(second.id, { status: "rolled_back" });
    const answer = await manifestRequest({ channel: track, currentUpdateId: first.id });
    expect(answer.manifest).toBeUndefined();
    expect(answer.directive).toMatchObject({ type: "rollBackToEmbedded", parameters: { commitTime: expect.any(String) } });
    expect(Date.parse(answer.directive.parameters.commitTime)).toBeGreaterThanOrEqual(Date.parse(rolledBack.updated_at) - 1000);

    // A paused update is held back without sending anyone to the embedded bundle.
    const paused = freshChannel("prod");
    await testerGroup([paused], [], { everyone: true });
    await publish(await otaRelease(paused, 1, { status: "paused" }));
    expect((await manifestRequest({ channel: paused })).directive).toEqual({ type: "noUpdateAvailable" });
  });

  it("after a rollback a device on the rolled-back update moves, as expo-updates decides (a newer commitTime only)", async () => {
    // LoaderSelectionPolicyFilterAware (expo/expo): a manifest or a rollBackToEmbedded is taken only when
    // its createdAt / commitTime is after the commitTime (createdAt) of the update the device runs.
    const after = (time: string, running: { createdAt: string }) => Date.parse(time) > Date.parse(running.createdAt);

    // B: the newest rolled back; the device that took it gets A again, as of the rollback, under an id of its own.
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    const a = await publish(await otaRelease(track, 1));
    const b = await publish(await otaRelease(track, 2));
    const tookB = (await manifestRequest({ channel: track })).manifest;
    expect(tookB.id).toBe(b.id);
    await setRelease(b.id, { status: "rolled_back" });
    const again = (await manifestRequest({ channel: track, currentUpdateId: tookB.id })).manifest;
    expect(again.extra.tidesync.release_id).toBe(a.id);
    expect(again.id).not.toBe(a.id);
    expect(after(again.createdAt, tookB)).toBe(true);
    // The same answer for every device; one that runs it, or A itself, has nothing to take.
    expect((await manifestRequest({ channel: track })).manifest).toMatchObject({ id: again.id, createdAt: again.createdAt });
    expect((await manifestRequest({ channel: track, currentUpdateId: again.id })).directive).toEqual({ type: "noUpdateAvailable" });
    expect((await manifestRequest({ channel: track, currentUpdateId: a.id.toUpperCase() })).directive).toEqual({ type: "noUpdateAvailable" });
    // A rolled back in turn: the device on the republished A goes to the embedded bundle.
    await setRelease(a.id, { status: "rolled_back" });
    const embedded = (await manifestRequest({ channel: track, currentUpdateId: again.id })).directive;
    expect(embedded).toMatchObject({ type: "rollBackToEmbedded" });
    expect(after(embedded.parameters.commitTime, again)).toBe(true);

    // C: A rolled back, a newer C outside this device's rollout: the device on A still leaves it.
    const outside = freshChannel("prod");
    await testerGroup([outside], [], { everyone: true });
    const rolled = await publish(await otaRelease(outside, 1));
    const tookRolled = (await manifestRequest({ channel: outside })).manifest;
    await setRelease(rolled.id, { status: "rolled_back" });
    await publish(await otaRelease(outside, 2, { rollout_percentage: 0 }));
    const toEmbedded = (await manifestRequest({ channel: outside, currentUpdateId: rolled.id })).directive;
    expect(toEmbedded).toMatchObject({ type: "rollBackToEmbedded" });
    expect(after(toEmbedded.parameters.commitTime, tookRolled)).toBe(true);

    // C': A rolled back, a newer C paused: the device on A leaves it; one that took C before the pause keeps C.
    const held = freshChannel("prod");
    await testerGroup([held], [], { everyone: true });
    const a3 = await publish(await otaRelease(held, 1));
    const tookA3 = (await manifestRequest({ channel: held })).manifest;
    await setRelease(a3.id, { status: "rolled_back" });
    const c3 = await publish(await otaRelease(held, 2));
    expect((await manifestRequest({ channel: held, currentUpdateId: a3.id })).manifest.id).toBe(c3.id);
    await setRelease(c3.id, { status: "paused" });
    const leaves = (await manifestRequest({ channel: held, currentUpdateId: a3.id })).directive;
    expect(leaves).toMatchObject({ type: "rollBackToEmbedded" });
    expect(after(leaves.parameters.commitTime, tookA3)).toBe(true);
    expect((await manifestRequest({ channel: held, currentUpdateId: c3.id })).directive).toEqual({ type: "noUpdateAvailable" });
  });

  it("a device on a newer update that was paused or narrowed keeps it, also over a lower build published after it (an old CI run re-run), as expo-updates decides", async () => {
    const after = (time: string, running: { createdAt: string }) => Date.parse(time) > Date.parse(running.createdAt);
    const embeddedUpdateId = randomUUID();
    for (const narrowed of [{ status: "paused" }, { rollout_percentage: 0 }]) {
      const track = freshChannel("prod");
      await testerGroup([track], [], { everyone: true });
      const clientId = randomUUID();
      const onEmbedded = { channel: track, currentUpdateId: embeddedUpdateId, embeddedUpdateId };
      const n = await publish(await otaRelease(track, 10));
      const tookN = (await manifestRequest({ ...onEmbedded, clientId })).manifest;
      expect(tookN.id).toBe(n.id);
      // Build 9 published in a later millisecond than build 10 (manifests carry milliseconds).
      while (Date.now() <= Date.parse(tookN.createdAt) + 1) await new Promise((resolve) => setTimeout(resolve, 2));
      const o = await publish(await otaRelease(track, 9));
      await setRelease(n.id, narrowed);
      // A device without build 10 gets build 9 as published, which expo-updates would take over build 10 ...
      const nine = (await manifestRequest(onEmbedded)).manifest;
      expect(nine).toMatchObject({ id: o.id, extra: { tidesync: { build_number: 9 } } });
      expect(after(nine.createdAt, tookN), JSON.stringify(narrowed)).toBe(true);
      // ... so the device on build 10 is not sent it: it keeps build 10.
      const kept = await manifestRequest({ ...onEmbedded, clientId, currentUpdateId: n.id });
      expect(kept.directive, JSON.stringify(narrowed)).toEqual({ type: "noUpdateAvailable" });
    }
  });

  it("a device that followed a rollback takes an older release made active again, or rolled out to it since, as expo-updates decides", async () => {
    const after = (offered: { createdAt: string }, running: { createdAt: string }) => Date.parse(offered.createdAt) > Date.parse(running.createdAt);

    // B rolled back, the device follows it to A (republished), then B is made active again.
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    await publish(await otaRelease(track, 1));
    const b = await publish(await otaRelease(track, 2));
    const tookB = (await manifestRequest({ channel: track })).manifest;
    await setRelease(b.id, { status: "rolled_back" });
    const followed = (await manifestRequest({ channel: track, currentUpdateId: tookB.id })).manifest;
    await setRelease(b.id, { status: "active" });
    const back = (await manifestRequest({ channel: track, currentUpdateId: followed.id })).manifest;
    expect(back.extra.tidesync.release_id).toBe(b.id);
    expect(after(back, followed)).toBe(true);
    expect((await manifestRequest({ channel: track, currentUpdateId: followed.id })).manifest).toMatchObject({ id: back.id, createdAt: back.createdAt });
    expect((await manifestRequest({ channel: track, currentUpdateId: back.id })).directive).toEqual({ type: "noUpdateAvailable" });

    // B staged at 0%, C rolled back: the device follows it to A, then B is widened to everyone.
    const staged = freshChannel("prod");
    await testerGroup([staged], [], { everyone: true });
    await publish(await otaRelease(staged, 1));
    const b2 = await publish(await otaRelease(staged, 2, { rollout_percentage: 0 }));
    const c2 = await publish(await otaRelease(staged, 3));
    await setRelease(c2.id, { status: "rolled_back" });
    const followedA = (await manifestRequest({ channel: staged, currentUpdateId: c2.id })).manifest;
    await setRelease(b2.id, { rollout_percentage: 100 });
    const widened = (await manifestRequest({ channel: staged, currentUpdateId: followedA.id })).manifest;
    expect(widened.extra.tidesync.release_id).toBe(b2.id);
    expect(after(widened, followedA)).toBe(true);
  });

  it("a device that a rollback sent to its embedded bundle takes the update offered again afterwards, as expo-updates decides, also once the rolled-back release is active again or deleted", async () => {
    // expo-updates gives the embedded bundle the rollBackToEmbedded's commitTime; from then on it
    // reports the embedded update's id and takes only a manifest whose createdAt is later.
    const after = (time: string, than: string) => Date.parse(time) > Date.parse(than);
    const certificate = codeSigningCertificate();
    const expectSignature = 'sig, keyid="main", alg="rsa-v1_5-sha256"';
    const embeddedUpdateId = randomUUID();
    const onEmbedded = { currentUpdateId: embeddedUpdateId, embeddedUpdateId, expectSignature };

    // The only update rolled back, then made active again (the rollback was a mistake).
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    const a = await publish(await otaRelease(track, 1));
    expect((await manifestRequest({ channel: track, ...onEmbedded })).manifest.id).toBe(a.id);
    await setRelease(a.id, { status: "rolled_back" });
    const back = await manifestRequest({ channel: track, currentUpdateId: a.id, embeddedUpdateId, expectSignature });
    expect(back.directive).toMatchObject({ type: "rollBackToEmbedded" });
    expect(signatureIsValid(back.parts[0], certificate)).toBe(true);
    await setRelease(a.id, { status: "active" });
    const again = await manifestRequest({ channel: track, ...onEmbedded });
    expect(again.manifest.extra.tidesync.release_id).toBe(a.id);
    expect(after(again.manifest.createdAt, back.directive.parameters.commitTime)).toBe(true);
    for (const part of again.parts) expect(signatureIsValid(part, certificate)).toBe(true);
    // Taken, nothing more to take; a device that never left A keeps it.
    expect((await manifestRequest({ channel: track, currentUpdateId: again.manifest.id, embeddedUpdateId })).directive).toEqual({ type: "noUpdateAvailable" });
    expect((await manifestRequest({ channel: track, currentUpdateId: a.id, embeddedUpdateId })).directive).toEqual({ type: "noUpdateAvailable" });

    // An older update paused, the newer one rolled back and then deleted by the owner; the older one resumed.
    const held = freshChannel("prod");
    await testerGroup([held], [], { everyone: true });
    const older = await publish(await otaRelease(held, 1, { status: "paused" }));
    const newer = await publish(await otaRelease(held, 2));
    expect((await manifestRequest({ channel: held, ...onEmbedded })).manifest.id).toBe(newer.id);
    await setRelease(newer.id, { status: "rolled_back" });
    const toEmbedded = (await manifestRequest({ channel: held, currentUpdateId: newer.id, embeddedUpdateId })).directive;
    expect(toEmbedded).toMatchObject({ type: "rollBackToEmbedded" });
    await adminSql`delete from app_private.releases where id = ${newer.id}`;
    await setRelease(older.id, { status: "active" });
    const resumed = (await manifestRequest({ channel: held, ...onEmbedded })).manifest;
    expect(resumed.extra.tidesync.release_id).toBe(older.id);
    expect(after(resumed.createdAt, toEmbedded.parameters.commitTime)).toBe(true);
  });

  it("a device on an update deleted by the database owner (docs/test-builds.md) leaves it, as expo-updates decides; one on its embedded update is left alone", async () => {
    const after = (time: string, running: { createdAt: string }) => Date.parse(time) > Date.parse(running.createdAt);
    const embeddedUpdateId = randomUUID();

    // The good update, then one published by mistake; the device takes the latter, then the owner deletes it.
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    const good = await publish(await otaRelease(track, 1));
    const bad = await publish(await otaRelease(track, 2));
    const tookBad = (await manifestRequest({ channel: track, currentUpdateId: embeddedUpdateId, embeddedUpdateId })).manifest;
    expect(tookBad.id).toBe(bad.id);
    await adminSql`delete from app_private.releases where id = ${bad.id}`;
    // The good update, later than the deleted one (as published it is older: the device would keep the deleted one).
    const back = (await manifestRequest({ channel: track, currentUpdateId: bad.id, embeddedUpdateId })).manifest;
    expect(back.extra.tidesync.release_id).toBe(good.id);
    expect(after(back.createdAt, tookBad)).toBe(true);
    expect(back.id).not.toBe(good.id);
    // Once taken, nothing more to take; a device on its embedded update gets the good one as published.
    expect((await manifestRequest({ channel: track, currentUpdateId: back.id, embeddedUpdateId })).directive).toEqual({ type: "noUpdateAvailable" });
    expect((await manifestRequest({ channel: track, currentUpdateId: embeddedUpdateId.toUpperCase(), embeddedUpdateId })).manifest).toMatchObject({ id: good.id });

    // The only update deleted: back to the embedded update, later than the deleted one; there, nothing more.
    const only = freshChannel("prod");
    await testerGroup([only], [], { everyone: true });
    const mistake = await publish(await otaRelease(only, 1));
    const tookMistake = (await manifestRequest({ channel: only })).manifest;
    await adminSql`delete from app_private.releases where id = ${mistake.id}`;
    const toEmbedded = (await manifestRequest({ channel: only, currentUpdateId: mistake.id, embeddedUpdateId })).directive;
    expect(toEmbedded).toMatchObject({ type: "rollBackToEmbedded" });
    expect(after(toEmbedded.parameters.commitTime, tookMistake)).toBe(true);
    expect((await manifestRequest({ channel: only, currentUpdateId: embeddedUpdateId, embeddedUpdateId })).directive).toEqual({ type: "noUpdateAvailable" });
  });

  // The candidates are a window of the newest (MAX_EXPO_CANDIDATES): the update a device runs may be older than
  // all of them, e.g. below a run of staged updates not started yet. It is read by its id, never taken as deleted.
  describe("a device on an update older than the window of the newest", () => {
    const after = (time: string, than: string) => Date.parse(time) > Date.parse(than);
    const expectSignature = 'sig, keyid="main", alg="rsa-v1_5-sha256"';
    const embeddedUpdateId = randomUUID();
    /** A window's worth of newer updates, staged at 0% (not started); newest last. */
    const staged = async (channel: string, from: number) => {
      const newer: { id: string }[] = [];
      for (let build = from; build < from + MAX_EXPO_CANDIDATES; build++) newer.push(await publish(await otaRelease(channel, build, { rollout_percentage: 0 })));
      return newer;
    };

    it("keeps it, takes the newest once it is rolled out to it, and leaves it once it is deleted", async () => {
      const certificate = codeSigningCertificate();
      const track = freshChannel("prod");
      await testerGroup([track], [], { everyone: true });
      const r0 = await publish(await otaRelease(track, 1));
      const tookR0 = (await manifestRequest({ channel: track, currentUpdateId: embeddedUpdateId, embeddedUpdateId })).manifest;
      expect(tookR0.id).toBe(r0.id);
      const newer = await staged(track, 2);
      const onR0 = { channel: track, currentUpdateId: r0.id, embeddedUpdateId, expectSignature };
      const kept = await manifestRequest(onR0);
      expect(kept.directive).toEqual({ type: "noUpdateAvailable" });
      expect(signatureIsValid(kept.parts[0], certificate)).toBe(true);
      // The newest ramped to everyone: the device takes it (after a rollBackToEmbedded as of the request it would not have).
      const newest = newer[newer.length - 1];
      await setRelease(newest.id, { rollout_percentage: 100 });
      const ramped = await manifestRequest(onR0);
      expect(ramped.manifest.extra.tidesync.release_id).toBe(newest.id);
      expect(after(ramped.manifest.createdAt, tookR0.createdAt)).toBe(true);
      for (const part of ramped.parts) expect(signatureIsValid(part, certificate)).toBe(true);
      // Deleted by the owner, R0 is withdrawn as before: none offered to this device, back to the embedded bundle.
      await setRelease(newest.id, { rollout_percentage: 0 });
      await adminSql`delete from app_private.releases where id = ${r0.id}`;
      const gone = (await manifestRequest(onR0)).directive;
      expect(gone).toMatchObject({ type: "rollBackToEmbedded" });
      expect(after(gone.parameters.commitTime, tookR0.createdAt)).toBe(true);
    });

    // The rolled-back update is older than every update the window holds: the rollback still counts.
    it("rolled back, it sends the device to its embedded bundle; the update offered afterwards is later than that", async () => {
      const track = freshChannel("prod");
      await testerGroup([track], [], { everyone: true });
      const onEmbedded = { channel: track, currentUpdateId: embeddedUpdateId, embeddedUpdateId };
      const r = await publish(await otaRelease(track, 1));
      expect((await manifestRequest(onEmbedded)).manifest.id).toBe(r.id);
      const newer = await staged(track, 2);
      await setRelease(r.id, { status: "rolled_back" });
      const back = (await manifestRequest({ ...onEmbedded, currentUpdateId: r.id })).directive;
      expect(back).toMatchObject({ type: "rollBackToEmbedded" });
      const newest = newer[newer.length - 1];
      await setRelease(newest.id, { rollout_percentage: 100 });
      const offered = (await manifestRequest(onEmbedded)).manifest;
      expect(offered.extra.tidesync.release_id).toBe(newest.id);
      expect(after(offered.createdAt, back.parameters.commitTime)).toBe(true);
      expect((await manifestRequest({ ...onEmbedded, currentUpdateId: offered.id })).directive).toEqual({ type: "noUpdateAvailable" });
      // Nothing offered again: a device that reports no update may run the rolled-back one, and is sent back alike.
      await setRelease(newest.id, { rollout_percentage: 0 });
      expect((await manifestRequest({ channel: track })).directive).toEqual(back);
    });

    it("republished by a rollback, it keeps it, and leaves it as of the rollback of its release", async () => {
      const certificate = codeSigningCertificate();
      const track = freshChannel("prod");
      await testerGroup([track], [], { everyone: true });
      const a = await publish(await otaRelease(track, 1));
      const b = await publish(await otaRelease(track, 2));
      await setRelease(b.id, { status: "rolled_back" });
      const followed = (await manifestRequest({ channel: track, currentUpdateId: b.id, embeddedUpdateId })).manifest;
      expect(followed.extra.tidesync.release_id).toBe(a.id);
      expect(followed.id).not.toBe(a.id);
      await staged(track, 3);
      const onFollowed = { channel: track, currentUpdateId: followed.id.toUpperCase(), embeddedUpdateId, expectSignature };
      const stays = await manifestRequest(onFollowed);
      expect(stays.directive).toEqual({ type: "noUpdateAvailable" });
      expect(signatureIsValid(stays.parts[0], certificate)).toBe(true);
      // A rolled back in turn: that device leaves it as of that rollback (not of the request), later than what it runs.
      const rolledBack = await setRelease(a.id, { status: "rolled_back" });
      const leaves = (await manifestRequest(onFollowed)).directive;
      expect(leaves).toMatchObject({ type: "rollBackToEmbedded" });
      expect(after(leaves.parameters.commitTime, followed.createdAt)).toBe(true);
      expect(Date.parse(leaves.parameters.commitTime)).toBe(Date.parse(rolledBack.updated_at) + 1);
    });
  });

  it("a tester's update that the answer without a token does not show is kept while the token is ignored, and left once deleted", async () => {
    const tester = await createTestUser();
    const beta = freshChannel("beta");
    await testerGroup([beta], [tester.userId]);
    const update = await publish(await otaRelease(beta, 1));
    const embeddedUpdateId = randomUUID();
    const running = { channel: beta, currentUpdateId: update.id, embeddedUpdateId };
    expect((await manifestRequest({ ...running, token: tester.token })).directive).toEqual({ type: "noUpdateAvailable" });
    // The launch's check carries the last run's token, expired after an hour: the update is still there.
    const expired = await tester.tokenWith({ issuedAt: Math.floor(Date.now() / 1000) - 7200, expiresInSeconds: 3600 });
    const ignored = await manifestRequest({ ...running, token: expired });
    expect(ignored.response.headers.get("tidesync-token-ignored")).toBe("expired");
    expect(ignored.directive).toEqual({ type: "noUpdateAvailable" });
    // Without a token (signed out, the override cleared), it is no longer the caller's: the device leaves it.
    expect((await manifestRequest(running)).directive).toMatchObject({ type: "rollBackToEmbedded" });
    await adminSql`delete from app_private.releases where id = ${update.id}`;
    expect((await manifestRequest({ ...running, token: tester.token })).directive).toMatchObject({ type: "rollBackToEmbedded" });
  });

  it("a tester removed from the group leaves the group's update it runs, as when signed out", async () => {
    const tester = await createTestUser();
    const beta = freshChannel("beta");
    const group = await testerGroup([beta], [tester.userId]);
    const update = await publish(await otaRelease(beta, 1));
    const embeddedUpdateId = randomUUID();
    const running = { channel: beta, token: tester.token, currentUpdateId: update.id, embeddedUpdateId };
    expect((await manifestRequest(running)).directive).toEqual({ type: "noUpdateAvailable" });
    await adminSql`delete from app_private.tester_group_members where group_id = ${group} and user_id = ${tester.userId}`;
    const left = (await manifestRequest(running)).directive;
    expect(left).toMatchObject({ type: "rollBackToEmbedded" });
    expect(Date.parse(left.parameters.commitTime)).toBeGreaterThan(Date.parse(update.created_at));
  });

  // docs/security-model.md, Test builds: the update a tester signed out or removed from the group runs is withdrawn,
  // so naming the id of an update of a channel one may not receive (which only a device it was served to knows)
  // tells that it exists, of that platform and runtime version; nothing else of it (the directive is dated now).
  it("an id of an update of a channel the caller may not receive tells that it exists, and its platform and runtime version; a made-up id does not", async () => {
    const tester = await createTestUser();
    const outsider = await createTestUser();
    const beta = freshChannel("beta");
    const prod = freshChannel("prod");
    await testerGroup([beta], [tester.userId]);
    await testerGroup([prod], [], { everyone: true });
    const hidden = await publish(await otaRelease(beta, 1));
    const ask = async (token: string | undefined, currentUpdateId: string, more: Partial<ExpoRequest> = {}) =>
      (await manifestRequest({ channel: prod, token, currentUpdateId, embeddedUpdateId: randomUUID(), ...more })).directive;
    for (const token of [undefined, outsider.token]) {
      const told = await ask(token, hidden.id);
      expect(told).toMatchObject({ type: "rollBackToEmbedded" });
      expect(Object.keys(told)).toEqual(["type", "parameters"]);
      expect(Object.keys(told.parameters)).toEqual(["commitTime"]);
      expect(Date.parse(told.parameters.commitTime)).toBeGreaterThan(Date.parse(hidden.created_at));
      // Not for another runtime version or platform, a made-up id, nor a republished one dated later than now.
      expect(await ask(token, hidden.id, { runtimeVersion: "2.0" })).toEqual({ type: "noUpdateAvailable" });
      expect(await ask(token, hidden.id, { platform: "android" })).toEqual({ type: "noUpdateAvailable" });
      expect(await ask(token, randomUUID())).toEqual({ type: "noUpdateAvailable" });
      expect(await ask(token, await republishedUpdateId(hidden.id, new Date("2100-01-01T00:00:00.000Z")))).toEqual({ type: "noUpdateAvailable" });
    }
    // Its tester, who may receive the channel, keeps it.
    expect(await ask(tester.token, hidden.id)).toEqual({ type: "noUpdateAvailable" });
  });

  // An id the server never had says nothing of the device: it may be another server's update, or
  // made up. A signed rollBackToEmbedded for it would be a fresh one anyone could ask for and replay.
  it("an update id the server never had is never withdrawn: the offered update as published, or noUpdateAvailable (204 for protocol 0)", async () => {
    const certificate = codeSigningCertificate();
    const expectSignature = 'sig, keyid="main", alg="rsa-v1_5-sha256"';
    const track = freshChannel("prod");
    const pausedTrack = freshChannel("prod");
    const rolledBackTrack = freshChannel("prod");
    await testerGroup([track, pausedTrack, rolledBackTrack], [], { everyone: true });
    const offered = await publish(await otaRelease(track, 1));
    await publish(await otaRelease(pausedTrack, 1, { status: "paused" }));
    const rolledBack = await publish(await otaRelease(rolledBackTrack, 1));
    await setRelease(rolledBack.id, { status: "rolled_back" });
    // A random UUID, and one shaped as an update republished by this server (docs/test-builds.md, Rollback).
    const unknownIds = [randomUUID(), `${Date.now().toString(16).padStart(12, "0").replace(/^(.{8})/, "$1-")}-8abc-9def-${offered.id.slice(-12)}`];
    for (const currentUpdateId of unknownIds) {
      for (const channel of [freshChannel("prod"), pausedTrack, rolledBackTrack]) {
        const answer = await manifestRequest({ channel, currentUpdateId, embeddedUpdateId: randomUUID(), expectSignature });
        expect(answer.parts.map((p) => [p.name, JSON.parse(p.body)]), `${channel} ${currentUpdateId}`).toEqual([["directive", { type: "noUpdateAvailable" }]]);
        expect(signatureIsValid(answer.parts[0], certificate)).toBe(true);
        const legacy = await manifestRequest({ channel, currentUpdateId, protocol: "0" });
        expect(legacy.response.status).toBe(204);
      }
      const served = (await manifestRequest({ channel: track, currentUpdateId, expectSignature })).manifest;
      expect(served).toMatchObject({ id: offered.id, createdAt: offered.created_at });
    }
  });

  it("a deleted update is withdrawn as of its deletion: the same signed answer whenever asked, later than what the device runs", async () => {
    const certificate = codeSigningCertificate();
    const expectSignature = 'sig, keyid="main", alg="rsa-v1_5-sha256"';
    const embeddedUpdateId = randomUUID();
    /** Deletes it in a later millisecond than it was published (what the device runs is then older than its deletion). */
    const deleteRelease = async (release: { id: string; created_at: string }) => {
      while (Date.now() <= Date.parse(release.created_at) + 1) await new Promise((resolve) => setTimeout(resolve, 2));
      const [row] = await adminSql<{ deleted_at: Date }[]>`delete from app_private.releases where id = ${release.id} returning now() as deleted_at`;
      return row.deleted_at;
    };
    const asked = async (request: ExpoRequest) => {
      const answer = await manifestRequest(request);
      for (const part of answer.parts) expect(signatureIsValid(part, certificate)).toBe(true);
      return answer;
    };
    /** Asks twice, in two different milliseconds of the server's clock: one directive, byte for byte, or one manifest id and createdAt (its links expire). */
    const twice = async (request: ExpoRequest) => {
      const first = await asked(request);
      const askedAt = Date.now();
      while (Date.now() <= askedAt + 1) await new Promise((resolve) => setTimeout(resolve, 2));
      const second = await asked(request);
      if (first.directive) expect(second.parts.map((p) => p.body)).toEqual(first.parts.map((p) => p.body));
      else expect(second.manifest).toMatchObject({ id: first.manifest.id, createdAt: first.manifest.createdAt });
      return first;
    };

    // The only update: back to the embedded bundle as of the deletion.
    const only = freshChannel("prod");
    await testerGroup([only], [], { everyone: true });
    const mistake = await publish(await otaRelease(only, 1));
    const mistakeDeletedAt = await deleteRelease(mistake);
    const { directive } = await twice({ channel: only, currentUpdateId: mistake.id, embeddedUpdateId, expectSignature });
    expect(directive).toEqual({ type: "rollBackToEmbedded", parameters: { commitTime: mistakeDeletedAt.toISOString() } });
    expect(Date.parse(directive.parameters.commitTime)).toBeGreaterThan(Date.parse(mistake.created_at));

    // An update offered: served as of the deletion, under an id of its own, to a device on the deleted one.
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    const good = await publish(await otaRelease(track, 1));
    const bad = await publish(await otaRelease(track, 2));
    const deletedAt = await deleteRelease(bad);
    const { manifest } = await twice({ channel: track, currentUpdateId: bad.id, embeddedUpdateId, expectSignature });
    expect(manifest).toMatchObject({ createdAt: deletedAt.toISOString(), extra: { tidesync: { release_id: good.id } } });
    expect(manifest.id).not.toBe(good.id);

    // A republished update (a rollback's), deleted: as of the deletion too, later than it was served.
    const republished = freshChannel("prod");
    await testerGroup([republished], [], { everyone: true });
    const a = await publish(await otaRelease(republished, 1));
    const b = await publish(await otaRelease(republished, 2));
    await setRelease(b.id, { status: "rolled_back" });
    const followed = (await manifestRequest({ channel: republished, currentUpdateId: b.id, embeddedUpdateId })).manifest;
    expect(followed.extra.tidesync.release_id).toBe(a.id);
    const aDeletedAt = await deleteRelease({ id: a.id, created_at: followed.createdAt });
    const leaves = (await twice({ channel: republished, currentUpdateId: followed.id, embeddedUpdateId, expectSignature })).directive;
    expect(leaves).toEqual({ type: "rollBackToEmbedded", parameters: { commitTime: aDeletedAt.toISOString() } });
    expect(Date.parse(leaves.parameters.commitTime)).toBeGreaterThan(Date.parse(followed.createdAt));
  });

  // A republished id carries the time it was served at, and anyone who knows an update's id (every device that ran
  // it) can make one for any time: a signed answer dated by it, replayed by a proxy, would send every device back
  // to its embedded bundle and keep them from any update until then (expo-updates takes only a later one).
  it("a republished id dated later than now, or after its deleted release's deletion, is one the server never had: no signed answer is dated by it", async () => {
    const certificate = codeSigningCertificate();
    const expectSignature = 'sig, keyid="main", alg="rsa-v1_5-sha256"';
    const embeddedUpdateId = randomUUID();
    const year2100 = new Date("2100-01-01T00:00:00.000Z");
    const signed = async (request: ExpoRequest) => {
      const answer = await manifestRequest({ embeddedUpdateId, expectSignature, ...request });
      for (const part of answer.parts) expect(signatureIsValid(part, certificate)).toBe(true);
      return answer;
    };
    const neverHad = async (currentUpdateId: string, offered: { channel: string; id: string; created_at: string }) => {
      // Nothing offered (any channel name): noUpdateAvailable (204 for protocol 0); offered: as published.
      expect((await signed({ channel: freshChannel("prod"), currentUpdateId })).parts.map((p) => [p.name, JSON.parse(p.body)]))
        .toEqual([["directive", { type: "noUpdateAvailable" }]]);
      expect((await manifestRequest({ channel: freshChannel("prod"), currentUpdateId, protocol: "0" })).response.status).toBe(204);
      expect((await signed({ channel: offered.channel, currentUpdateId })).manifest).toMatchObject({ id: offered.id, createdAt: offered.created_at });
    };

    // Deleted (an everyone update: its id is anyone's to know).
    const track = freshChannel("prod");
    await testerGroup([track], [], { everyone: true });
    const old = await publish(await otaRelease(track, 1));
    const current = await publish(await otaRelease(track, 2));
    const [{ deleted_at }] = await adminSql<{ deleted_at: Date }[]>`delete from app_private.releases where id = ${old.id} returning now() as deleted_at`;
    const afterDeletion = new Date(deleted_at.getTime() + 1);
    while (Date.now() <= afterDeletion.getTime() + 1) await new Promise((resolve) => setTimeout(resolve, 2));
    for (const at of [afterDeletion, new Date(Date.now() + 60_000), year2100]) await neverHad(await republishedUpdateId(old.id, at), { channel: track, ...current });
    // Dated when it could have been served: withdrawn as of the deletion, a millisecond after it when dated in its very millisecond.
    const withdrawn = async (at: Date) => (await signed({ channel: freshChannel("prod"), currentUpdateId: await republishedUpdateId(old.id, at) })).directive;
    expect(await withdrawn(new Date(deleted_at.getTime() - 1))).toEqual({ type: "rollBackToEmbedded", parameters: { commitTime: deleted_at.toISOString() } });
    expect(await withdrawn(deleted_at)).toEqual({ type: "rollBackToEmbedded", parameters: { commitTime: afterDeletion.toISOString() } });

    // Rolled back, and an older update below the one offered: nothing withdrawn, nothing served later than it.
    const rolledBackTrack = freshChannel("prod");
    const olderTrack = freshChannel("prod");
    await testerGroup([rolledBackTrack, olderTrack], [], { everyone: true });
    const only = await publish(await otaRelease(rolledBackTrack, 1));
    await setRelease(only.id, { status: "rolled_back" });
    const older = await publish(await otaRelease(olderTrack, 1));
    const newer = await publish(await otaRelease(olderTrack, 2));
    for (const at of [new Date(Date.now() + 60_000), year2100]) {
      expect((await signed({ channel: rolledBackTrack, currentUpdateId: await republishedUpdateId(only.id, at) })).directive).toEqual({ type: "noUpdateAvailable" });
      expect((await signed({ channel: olderTrack, currentUpdateId: await republishedUpdateId(older.id, at) })).manifest).toMatchObject({ id: newer.id, createdAt: newer.created_at });
      // The offered update's own: as published (expo-updates declines what it runs, or an older one).
      expect((await signed({ channel: olderTrack, currentUpdateId: await republishedUpdateId(newer.id, at) })).manifest).toMatchObject({ id: newer.id, createdAt: newer.created_at });
    }
  });

  // docs/test-builds.md, Deleted: a release deleted and then restored by the owner with its id exists again.
  it("a deleted update restored with its id is kept again, on its channel and on another; deleted again, it is withdrawn as of that deletion", async () => {
    const track = freshChannel("prod");
    const other = freshChannel("prod");
    await testerGroup([track, other], [], { everyone: true });
    const r = await publish(await otaRelease(track, 1));
    const [{ row }] = await adminSql<{ row: unknown }[]>`select to_jsonb(r) as row from app_private.releases r where id = ${r.id}`;
    await adminSql`delete from app_private.releases where id = ${r.id}`;
    await adminSql`insert into app_private.releases select * from jsonb_populate_record(null::app_private.releases, ${adminSql.json(row as never)})`;
    const onR = { currentUpdateId: r.id, embeddedUpdateId: randomUUID() };
    for (const channel of [track, other]) expect((await manifestRequest({ channel, ...onR })).directive, channel).toEqual({ type: "noUpdateAvailable" });
    const [{ deleted_at }] = await adminSql<{ deleted_at: Date }[]>`delete from app_private.releases where id = ${r.id} returning now() as deleted_at`;
    for (const channel of [track, other]) {
      expect((await manifestRequest({ channel, ...onR })).directive, channel).toEqual({ type: "rollBackToEmbedded", parameters: { commitTime: deleted_at.toISOString() } });
    }
  });

  it("a beta channel: a member with their token gets the update; a non-member and a caller without a token get exactly noUpdateAvailable", async () => {
    const tester = await createTestUser();
    const outsider = await createTestUser();
    const beta = freshChannel("beta");
    await testerGroup([beta], [tester.userId]);
    const { id } = await publish(await otaRelease(beta, 1));
    expect((await manifestRequest({ channel: beta, token: tester.token })).manifest.id).toBe(id);
    const hidden = await manifestRequest({ channel: beta, token: outsider.token });
    const anonymous = await manifestRequest({ channel: beta });
    const nothing = await manifestRequest({ channel: freshChannel("beta"), token: outsider.token });
    for (const answer of [hidden, anonymous, nothing]) {
      expect(answer.response.status).toBe(200);
      expect(answer.parts.map((p) => [p.name, p.body])).toEqual([["directive", JSON.stringify({ type: "noUpdateAvailable" })]]);
    }
  });

  it("a token that opens no session (expired, forged, malformed, signed out, an MFA user's aal1) is ignored: the answer without a token, never a 401 that would cut the app off every update", async () => {
    // expo-updates keeps sending the Authorization it was given (setUpdateRequestHeadersOverride
    // persists), and access tokens expire hourly: a 401 left such an app without even the public fix.
    const tester = await createTestUser();
    // A tester too, at the password step of an MFA sign-in: aal1 while a verified factor waits.
    const mfaPending = await createTestUser();
    await adminSql`
      insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at)
      values (${randomUUID()}, ${mfaPending.userId}, 'authenticator', 'totp', 'verified', now(), now())`;
    const beta = freshChannel("beta");
    const everyone = freshChannel("prod");
    await testerGroup([beta], [tester.userId, mfaPending.userId]);
    await testerGroup([everyone], [], { everyone: true });
    const betaUpdate = await publish(await otaRelease(beta, 1));
    const fix = await publish(await otaRelease(everyone, 1));
    const hourAgo = Math.floor(Date.now() / 1000) - 7200;
    const expired = await tester.tokenWith({ issuedAt: hourAgo, expiresInSeconds: 3600 });
    const signedOut = await createTestUser();
    await adminSql`delete from auth.sessions where id = ${signedOut.sessionId}`;
    const tokens: [string, Partial<ExpoRequest>][] = [
      ["expired", { token: expired }],
      // Signed with a key the project does not have (expired too: the signature is checked first).
      ["invalid", { token: await signHs256("not-the-project-secret-not-the-project-secret", supabaseClaims({ userId: tester.userId, sessionId: tester.sessionId, issuedAt: hourAgo })) }],
      ["invalid", { token: await tester.tokenWith({ claims: { aud: "someone-else" } }) }],
      // Not a user's session (the project's anon key has role anon).
      ["invalid", { token: await tester.tokenWith({ claims: { role: "anon" } }) }],
      ["invalid", { token: "not-a-token" }],
      ["invalid", { authorization: "Basic dXNlcjpwYXNz" }],
      ["signed_out", { token: signedOut.token }],
      ["aal2_required", { token: mfaPending.token }],
    ];
    for (const [reason, auth] of tokens) {
      const label = `${reason} ${JSON.stringify(auth).slice(0, 60)}`;
      // The public channel's update arrives, as without a token.
      const publicAnswer = await manifestRequest({ channel: everyone, ...auth });
      expect(publicAnswer.response.status, label).toBe(200);
      expect(publicAnswer.manifest?.id, label).toBe(fix.id);
      expect(publicAnswer.response.headers.get("tidesync-token-ignored"), label).toBe(reason);
      // It never widens access: the tester's channel is what a caller without a token sees.
      const betaAnswer = await manifestRequest({ channel: beta, ...auth });
      expect(betaAnswer.parts.map((p) => [p.name, p.body]), label).toEqual([["directive", JSON.stringify({ type: "noUpdateAvailable" })]]);
      expect(betaAnswer.response.headers.get("tidesync-token-ignored"), label).toBe(reason);
    }
    // The same tester with a fresh token gets the beta update; a token-less or empty header is no token, not an ignored one.
    expect((await manifestRequest({ channel: beta, token: await tester.tokenWith() })).manifest.id).toBe(betaUpdate.id);
    for (const auth of [{}, { authorization: "" }]) {
      const answer = await manifestRequest({ channel: everyone, ...auth });
      expect(answer.manifest.id).toBe(fix.id);
      expect(answer.response.headers.get("tidesync-token-ignored")).toBeNull();
    }
    // Only here: any other route still refuses the expired token.
    const check = await call("/v1/releases/check?platform=ios&channel=" + beta + "&build_number=1", { token: expired });
    expect(expectEnvelope(check, 401, "UNAUTHENTICATED").message).toMatch(/expired/);
  });

  it("400 in the envelope without the protocol's headers, each detail on /headers/<name> (docs/errors.md)", async () => {
    const missing = await call(MANIFEST_PATH, { headers: { "expo-protocol-version": "1" } });
    expect(expectEnvelope(missing, 400, "VALIDATION_FAILED").details?.map((d) => [d.field, d.code])).toEqual([
      ["/headers/expo-platform", "required"],
      ["/headers/expo-runtime-version", "required"],
      ["/headers/expo-channel-name", "required"],
    ]);
    const unknownProtocol = await call(MANIFEST_PATH, { headers: { "expo-protocol-version": "7", "expo-platform": "ios", "expo-runtime-version": "1.0", "expo-channel-name": channel } });
    expect(expectEnvelope(unknownProtocol, 400, "VALIDATION_FAILED").details?.map((d) => d.field)).toEqual(["/headers/expo-protocol-version"]);
    // The route's own header refusal names its header the same way.
    const unsigned = await call(MANIFEST_PATH, { headers: { "expo-protocol-version": "1", "expo-platform": "ios", "expo-runtime-version": "1.0", "expo-channel-name": channel, "expo-expect-signature": 'sig, alg="ed25519"' } });
    expect(expectEnvelope(unsigned, 400, "VALIDATION_FAILED").details?.map((d) => d.field)).toEqual(["/headers/expo-expect-signature"]);
  });
});

// docs/test-builds.md, Deleted: only a deletion the server recorded, or an update the caller may no
// longer see, withdraws the update a device runs. An update of another channel is neither: an app
// that switches channel at run time (Updates.setUpdateRequestHeadersOverride) keeps it.
describe("an app switching channel while it runs an update of its first one", () => {
  it("keeps it until the new channel has a newer one, and keeps it back on its first channel; once it is deleted it leaves it on either", async () => {
    const after = (time: string, than: string) => Date.parse(time) > Date.parse(than);
    const tester = await createTestUser();
    const production = freshChannel("prod");
    const beta = freshChannel("beta");
    const empty = freshChannel("beta");
    await testerGroup([production], [], { everyone: true });
    await testerGroup([beta, empty], [tester.userId]);
    const expectSignature = 'sig, keyid="main", alg="rsa-v1_5-sha256"';
    const embeddedUpdateId = randomUUID();
    // A beta update published before the production one the app takes.
    const early = await publish(await otaRelease(beta, 1));
    const live = await publish(await otaRelease(production, 1));
    const took = (await manifestRequest({ channel: production, token: tester.token, currentUpdateId: embeddedUpdateId, embeddedUpdateId })).manifest;
    expect(took.id).toBe(live.id);
    const onLive = { token: tester.token, currentUpdateId: live.id, embeddedUpdateId, expectSignature };

    // A channel without updates: nothing to take, the update is kept (protocol 0: 204).
    expect((await manifestRequest({ channel: empty, ...onLive })).directive).toEqual({ type: "noUpdateAvailable" });
    expect((await manifestRequest({ channel: empty, ...onLive, protocol: "0", expectSignature: undefined })).response.status).toBe(204);
    // The beta update, as published: older than what the app runs, so expo-updates declines it.
    const older = (await manifestRequest({ channel: beta, ...onLive })).manifest;
    expect(older).toMatchObject({ id: early.id, createdAt: early.created_at });
    expect(after(older.createdAt, took.createdAt)).toBe(false);
    // A newer beta update (published in a later millisecond) is taken; back on production the app keeps its update.
    while (Date.now() <= Date.parse(live.created_at) + 1) await new Promise((resolve) => setTimeout(resolve, 2));
    const fresh = await publish(await otaRelease(beta, 2));
    const newer = (await manifestRequest({ channel: beta, ...onLive })).manifest;
    expect(newer.id).toBe(fresh.id);
    expect(after(newer.createdAt, took.createdAt)).toBe(true);
    expect((await manifestRequest({ channel: production, ...onLive })).directive).toEqual({ type: "noUpdateAvailable" });

    // Deleted by the owner: withdrawn on the channel it switched to as on its own, as of the deletion.
    const [{ deleted_at }] = await adminSql<{ deleted_at: Date }[]>`delete from app_private.releases where id = ${live.id} returning now() as deleted_at`;
    for (const channel of [empty, production]) {
      const gone = (await manifestRequest({ channel, ...onLive })).directive;
      expect(gone, channel).toEqual({ type: "rollBackToEmbedded", parameters: { commitTime: deleted_at.toISOString() } });
    }
  });
});
