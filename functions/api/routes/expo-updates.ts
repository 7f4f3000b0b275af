// GET /v1/expo-updates/manifest: the Expo Updates protocol v1 server
// (docs.expo.dev/technical-specs/expo-updates-1) over the OTA releases an app
// may receive. An app points `updates.url` here (docs/test-builds.md). With a
// bearer token the caller's tester groups decide (RLS, as for the update
// check); without one, or with one that opens no session (expired, invalid,
// signed out: optionalUser), only `everyone` channels exist.
import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../_shared/errors.ts";
import { expoCandidates, planExpoUpdate, unnamedUpdate } from "../../_shared/releases/plan-expo-update.ts";
import { ROLLOUT_BUCKETS, rolloutBucket } from "../../_shared/releases/rollout.ts";
import { channelNameSchema, EXPO_PLATFORMS, expoRuntimeVersionSchema } from "../../_shared/schemas/releases.ts";
import type { App, Deps } from "../lib/app-env.ts";
import type { Tx } from "../lib/db.ts";
import { IGNORED_TOKENS, optionalUser, TOKEN_IGNORED_HEADER } from "../lib/middleware.ts";
import { errorResponses } from "../lib/openapi-helpers.ts";
import { createArtifactStore } from "../releases/artifact-store.ts";
import { downloadLinks } from "../releases/download-links.ts";
import { EXPO_SIGNATURE_ALGORITHM, type ExpoPart, expoManifest, expoSignature, importSigningKey, multipartMixed } from "../releases/expo-response.ts";
import {
  expoClientOf,
  hiddenUpdateWithIds,
  sessionDevice,
  visibleDeletionsWithIds,
  visibleReleases,
  visibleReleasesWithIds,
  visibleRollbacks,
} from "../releases/release-store.ts";

export const EXPO_MANIFEST_PATH = "/v1/expo-updates/manifest";
/** OTA updates of one runtime version weighed per request (newest first), and the one the device runs (expoCandidates). */
export const MAX_EXPO_CANDIDATES = 50;

const expoHeadersSchema = z.object({
  "expo-protocol-version": z.enum(["0", "1"]).optional().describe("1 for directives (expo-updates SDK 46+); default 0"),
  "expo-platform": z.enum(EXPO_PLATFORMS),
  "expo-runtime-version": expoRuntimeVersionSchema,
  "expo-channel-name": channelNameSchema,
  "expo-current-update-id": z.string().max(64).optional().describe("the update the app runs: the same one again is noUpdateAvailable; one rolled back, deleted or no longer the caller's to see is replaced; any other (one the server never had, another channel's) is not withdrawn"),
  "expo-embedded-update-id": z.string().max(64).optional().describe("the update built into the app: running it (expo-current-update-id the same) is running no update of this server's"),
  "expo-expect-signature": z.string().max(256).optional().describe("sig, keyid=\"…\", alg=\"rsa-v1_5-sha256\": sign each part"),
  "eas-client-id": z.string().max(64).optional().describe("a stable id of the installation; the rollout key of a request without a token"),
});

function signatureRequest(header: string, configured: { keyId: string } | null): { keyId: string } {
  const keyId = /keyid="([^"]*)"/.exec(header)?.[1];
  const alg = /alg="([^"]*)"/.exec(header)?.[1];
  const refuse = (code: string, message: string) =>
    new ApiError("VALIDATION_FAILED", `expo-expect-signature: ${message}`, { details: [{ field: "/headers/expo-expect-signature", code, message }] });
  if (!configured) throw refuse("signing_not_configured", "code signing is not configured on this server (TIDESYNC_EXPO_SIGNING_KEY)");
  if (alg !== undefined && alg !== EXPO_SIGNATURE_ALGORITHM) throw refuse("unsupported_algorithm", `only ${EXPO_SIGNATURE_ALGORITHM} is supported`);
  if (keyId !== undefined && keyId !== configured.keyId) throw refuse("unknown_key", `no signing key with keyid ${JSON.stringify(keyId)}`);
  return configured;
}

const tokenIgnoredHeader = {
  [TOKEN_IGNORED_HEADER]: {
    description: "the request's token opened no session and was ignored, and why: this is the answer without a token",
    schema: { type: "string" as const, enum: [...IGNORED_TOKENS] },
  },
};

export function registerExpoUpdatesRoutes(app: App, deps: Deps): void {
  const store = createArtifactStore(deps.config.releases);
  const signing = deps.config.releases.expoSigning;
  let signingKey: Promise<CryptoKey> | null = null;

  const manifest = createRoute({
    method: "get",
    path: EXPO_MANIFEST_PATH,
    summary: "Expo Updates protocol v1: the update for this app (multipart/mixed)",
    description: "Set `updates.url` of an Expo app to this URL and `updates.requestHeaders` to {\"expo-channel-name\": …}. " +
      "Answers multipart/mixed with a `manifest` part (the newest active OTA update of the channel for this platform and " +
      "runtime version that the caller may receive and whose rollout includes the installation) or a `directive` part " +
      "(noUpdateAvailable; rollBackToEmbedded when the caller's update was rolled back, deleted or is no longer the caller's to see, and none " +
      "is offered; an update id the server never had is not withdrawn). After a rollback an older update is served as of the rollback, to a " +
      "device on a deleted update as of the deletion, under an id of its own (extra.tidesync.release_id names the release). Protocol 0 gets 204 instead of a " +
      "directive. With expo-expect-signature each part carries an expo-signature (rsa-v1_5-sha256). A bearer token is optional: " +
      "a token that opens no session (expired, invalid, signed out) is ignored, never refused, and the answer is the one without a token, " +
      `with ${TOKEN_IGNORED_HEADER} saying why.`,
    middleware: [optionalUser(deps, "releases")] as const,
    // The query is the app's: `updates.url` is set in the app's config, which may carry
    // parameters of its own (a CDN's, a proxy's); the protocol speaks in headers only.
    request: { headers: expoHeadersSchema, query: z.looseObject({}) },
    responses: {
      200: { description: "multipart/mixed: manifest or directive, and extensions", headers: tokenIgnoredHeader, content: { "multipart/mixed": { schema: z.string() } } },
      204: { description: "Protocol 0: no update (a directive needs protocol 1)", headers: tokenIgnoredHeader },
      // No 401/403: a token that opens no session is ignored (optionalUser). 429: a live session's budget.
      ...errorResponses("RATE_LIMITED", "VALIDATION_FAILED"),
    },
  });

  app.openapi(manifest, async (c) => {
    const headers = c.req.valid("header");
    const protocol = Number(headers["expo-protocol-version"] ?? "0");
    const expect = headers["expo-expect-signature"];
    const signWith = expect === undefined ? null : signatureRequest(expect, signing);
    const user = c.get("user");
    const filter = { platform: headers["expo-platform"], channel: headers["expo-channel-name"], kind: "ota" as const, runtimeVersion: headers["expo-runtime-version"] };
    const updateIds = { currentUpdateId: headers["expo-current-update-id"], embeddedUpdateId: headers["expo-embedded-update-id"] };
    // One transaction: the candidates, what is known of an update they do not name, the rollbacks and, once planned, the served update's config.
    const decide = async (tx: Tx) => {
      // The function's clock: within milliseconds of the database's, which stamps created_at and updated_at.
      // A republished id dated later than it is one the server never had (plan-expo-update.ts).
      const request = { ...updateIds, now: new Date() };
      const device = user ? await sessionDevice(tx, user.session_id) : null;
      const releases = await expoCandidates(await visibleReleases(tx, filter, MAX_EXPO_CANDIDATES), MAX_EXPO_CANDIDATES, request, (ranges) =>
        visibleReleasesWithIds(tx, filter, ranges));
      // With the token ignored the candidates are only the everyone channels': an update they do not name may be the tester's.
      const unnamed = await unnamedUpdate(releases, { ...request, complete: c.get("tokenIgnored") === undefined }, {
        deletions: (ranges) => visibleDeletionsWithIds(tx, filter, ranges),
        hidden: (ranges) => hiddenUpdateWithIds(tx, filter, ranges),
      });
      // After the releases (visibleRollbacks says why).
      const rollbacks = await visibleRollbacks(tx, filter);
      // Without any stable id, only a release rolled out to 100% is offered.
      const rolloutKey = device?.installation_id ?? headers["eas-client-id"] ?? user?.sub;
      const candidates = await Promise.all(releases.map(async (r) => ({
        ...r,
        rollout_bucket: rolloutKey ? await rolloutBucket(r.id, rolloutKey) : ROLLOUT_BUCKETS - 1,
      })));
      const plan = await planExpoUpdate(candidates, { ...request, unnamed, ...rollbacks });
      // Of the served release only: the candidates leave their configs out (release-store.ts).
      return { plan, expoClient: plan.kind === "manifest" ? await expoClientOf(tx, plan.release.id) : null };
    };
    const { plan, expoClient } = user ? await deps.db.withUser(user, decide) : await deps.db.asAnon(decide);
    Object.assign(c.get("logFields"), { expo_answer: plan.kind, release_id: plan.kind === "manifest" ? plan.release.id : undefined });

    // Cache-Control is the middleware's no-store, as on every answer: the protocol asks for "an appropriately short"
    // time and recommends private, max-age=0; no-store is shorter still, and keeps the signed download links out of caches.
    const protocolHeaders = { "expo-protocol-version": String(protocol), "expo-sfv-version": "0" };
    let parts: ExpoPart[];
    if (plan.kind === "manifest") {
      const release = plan.release;
      const links = await downloadLinks(store, deps.config.releases.linkTtlSeconds, [
        { path: release.artifact_path, url: release.artifact_url },
        ...release.assets,
      ]);
      parts = [{ name: "manifest", json: expoManifest(release, links, plan, expoClient) }, { name: "extensions", json: { assetRequestHeaders: {} } }];
    } else {
      if (protocol === 0) return c.body(null, 204, protocolHeaders);
      const directive = plan.kind === "rollBackToEmbedded"
        ? { type: "rollBackToEmbedded", parameters: { commitTime: plan.commitTime.toISOString() } }
        : { type: "noUpdateAvailable" };
      parts = [{ name: "directive", json: directive }];
    }
    let signer: ((body: string) => Promise<string>) | null = null;
    if (signWith && signing) {
      signingKey ??= importSigningKey(signing.privateKeyPem);
      const key = await signingKey;
      signer = (body) => expoSignature(key, signWith.keyId, body);
    }
    const multipart = await multipartMixed(parts, signer);
    return c.body(multipart.body, 200, { ...protocolHeaders, "Content-Type": multipart.contentType });
  });
}
