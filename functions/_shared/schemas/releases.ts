// Test-build distribution on the wire: what CI publishes (POST/PATCH
// /v1/releases), what an app asks (GET /v1/releases/check) and is answered,
// and tester feedback. docs/test-builds.md tells the model.
import { z } from "zod";
import { digitsParam } from "./digits.ts";
import { type JsonValue, jsonValueProblems } from "../json-value.ts";
import { storableText } from "../storable-text.ts";
import { PLATFORMS } from "./devices.ts";
import { serverTimeSchema } from "./server-time.ts";
import { uuidSchema } from "../uuid.ts";

export const RELEASE_KINDS = ["binary", "ota"] as const;
export const RELEASE_STATUSES = ["active", "paused", "rolled_back"] as const;
export const UPDATE_LEVELS = ["none", "optional", "required"] as const;
export const BELOW_MINIMUM_LEVELS = ["optional", "required"] as const;
/** Most assets one OTA update may list besides its launch asset. */
export const MAX_OTA_ASSETS = 500;
/** Most bytes of an OTA update's expo_client, as JSON in UTF-8: it rides in every manifest of the update. */
export const MAX_EXPO_CLIENT_BYTES = 64 * 1024;

/** The platforms of the Expo Updates protocol (expo-platform): an OTA update is for one of them. */
export const EXPO_PLATFORMS = ["ios", "android"] as const;

const MAX_BUILD_NUMBER = 2_147_483_647;
const buildNumber = z.number().int().min(0).max(MAX_BUILD_NUMBER);
const timestamp = z.string().datetime({ offset: true });

/**
 * A runtime version an Expo Updates request can name: expo-updates sends the app's as the
 * expo-runtime-version header, which must equal an OTA update's for the update to be served. So
 * visible ASCII (0x21-0x7E), spaces only between them: HTTP drops whitespace at either end of a
 * header value, Deno reads a value's bytes beyond ASCII as Latin-1 (so "6.0-β" arrives as another
 * string) and OkHttp, expo-updates' Android client, sends none; a tab or line break is no runtime
 * version Expo writes. What Expo's runtime version policies give fits: "1.0.0", "1.0.0(14)"
 * (nativeVersion), "exposdk:51.0.0" (sdkVersion), a fingerprint's hex. The one rule for both
 * sides: an OTA publish (publishReleaseSchema) and the manifest's header (expo-updates.ts).
 */
const EXPO_RUNTIME_VERSION = /^[!-~](?:[ -~]*[!-~])?$/;
const MAX_RUNTIME_VERSION = 64;
const EXPO_RUNTIME_VERSION_MESSAGE =
  "must be visible ASCII characters, spaces only between them: expo-updates sends it as the expo-runtime-version header, which carries no other";

export const expoRuntimeVersionSchema = z.string().min(1).max(MAX_RUNTIME_VERSION).regex(EXPO_RUNTIME_VERSION, { message: EXPO_RUNTIME_VERSION_MESSAGE });

export const channelNameSchema = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, {
  message: "must be 1-32 characters: lower-case letters, digits, - and _, starting with a letter or digit",
}).describe("a release channel, e.g. internal, beta, production");

/** Lower-case hex SHA-256; upper-case input is normalised here, once. */
const sha256Hex = z.string().regex(/^[0-9a-fA-F]{64}$/, { message: "must be the SHA-256 as 64 hex digits" })
  .transform((value) => value.toLowerCase());

/** An object path inside the artifact bucket: relative, no `.`/`..` segments, no empty segments. */
export const artifactPathSchema = storableText(1024, 1).refine(
  (path) => !/(^\/|(^|\/)\.\.?(\/|$)|\/\/|\\)/.test(path),
  { message: "must be a relative object path without . or .. segments", params: { code: "invalid_path" } },
);

/**
 * An https URL as it is stored and handed out: spelled `https://` (lower case, two slashes: what the
 * database's check releases_artifact_url_https asks; a URL parser also takes `HTTPS://` and
 * `https:host`), no whitespace, and one a URL parser takes.
 */
const httpsUrl = storableText(2048, 1).refine((value) => {
  if (!/^https:\/\/\S+$/.test(value)) return false;
  try {
    return new URL(value).protocol === "https:";
  } catch {
    return false;
  }
}, { message: "must be an https URL (starting https://)", params: { code: "invalid_url" } });

const contentType = z.string().regex(/^[A-Za-z0-9!#$&^_.+-]{1,127}\/[A-Za-z0-9!#$&^_.+-]{1,127}$/, { message: "must be a media type, e.g. application/javascript" });

function exactlyOneLocation(value: { path?: string; url?: string }, ctx: z.RefinementCtx): void {
  if ((value.path === undefined) === (value.url === undefined)) {
    ctx.addIssue({ code: "custom", path: ["path"], message: "give exactly one of path (in the artifact bucket) or url (https)", params: { code: "one_of" } });
  }
}

export const artifactSchema = z.strictObject({
  path: artifactPathSchema.optional().describe("object path in the private artifact bucket (Supabase Storage)"),
  url: httpsUrl.optional().describe("an https URL CI provides instead (EAS, TestFlight, Play internal sharing); handed out as is"),
  sha256: sha256Hex,
  size: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe("bytes"),
  content_type: contentType.optional().describe("default application/octet-stream (an OTA launch asset: application/javascript)"),
}).superRefine(exactlyOneLocation);
export type Artifact = z.infer<typeof artifactSchema>;

export const otaAssetSchema = z.strictObject({
  path: artifactPathSchema.optional(),
  url: httpsUrl.optional(),
  sha256: sha256Hex,
  content_type: contentType,
  file_extension: z.string().regex(/^\.[A-Za-z0-9]{1,16}$/, { message: "must look like .png" }).optional(),
}).superRefine(exactlyOneLocation);
export type OtaAsset = z.infer<typeof otaAssetSchema>;

export const updatePolicySchema = z.strictObject({
  minimum_build_number: buildNumber.describe("callers below this build get level `below_minimum_level`"),
  below_minimum_level: z.enum(BELOW_MINIMUM_LEVELS).optional().describe("default required: the app blocks until updated"),
});

/**
 * The app's public Expo config, served as the manifest's extra.expoClient: what expo-constants'
 * Constants.expoConfig reads while the app runs a downloaded update. A JSON object taken as it is
 * (z.custom, not z.record(), which rebuilds it key by key and drops a "__proto__" key), that jsonb
 * can store (json-value.ts), at most MAX_EXPO_CLIENT_BYTES. Its numbers are the body's: one JSON.parse
 * read as another is refused before this schema runs (not_exact: functions/api/lib/middleware.ts acceptJsonBody).
 */
const expoClientSchema = z.custom<{ [key: string]: JsonValue }>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { message: "must be a JSON object (the app config: npx expo config --json --type public)", params: { code: "invalid_type" } },
).superRefine((value, ctx) => {
  const problems = jsonValueProblems(value);
  for (const problem of problems) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message, params: { code: problem.code } });
  if (problems.length === 0 && new TextEncoder().encode(JSON.stringify(value)).byteLength > MAX_EXPO_CLIENT_BYTES) {
    ctx.addIssue({ code: "custom", message: `must be at most ${MAX_EXPO_CLIENT_BYTES} bytes as JSON`, params: { code: "too_large" } });
  }
}).meta({ type: "object", additionalProperties: {} });

export const publishReleaseSchema = z.strictObject({
  platform: z.enum(PLATFORMS).describe(`an ota update's is ${EXPO_PLATFORMS.join(" or ")} (the Expo Updates protocol has no other)`),
  channel: channelNameSchema,
  kind: z.enum(RELEASE_KINDS).describe("binary: an installable build; ota: an Expo Updates JS update for runtime_version"),
  version: storableText(64, 1).describe("the version people read, e.g. 2.4.0"),
  build_number: buildNumber.describe(
    "one whole number, higher is newer: Android versionCode, iOS CFBundleVersion when it is one integer (\"512\"; a dotted " +
      "\"2.4.1\" is refused: give iOS builds an increasing integer, e.g. EAS Build autoIncrement, or map yours to one)",
  ),
  runtime_version: storableText(MAX_RUNTIME_VERSION, 1).optional().describe(
    "required for ota: the Expo runtime version the update runs on, as expo-updates sends it (expo-runtime-version): visible ASCII, " +
      "spaces only between them. A binary's is stored as sent and decides nothing",
  ),
  release_notes: storableText(4000).optional(),
  artifact: artifactSchema.describe("for ota: the launch asset (the JS bundle)"),
  assets: z.array(otaAssetSchema).max(MAX_OTA_ASSETS).optional().describe("ota only: the update's other assets"),
  status: z.enum(["active", "paused"]).optional().describe("default active"),
  rollout_percentage: z.number().int().min(0).max(100).optional().describe("default 100"),
  update_policy: updatePolicySchema.optional().describe(
    "binary only: also set this (platform, channel)'s minimum supported build (the update check's), replacing its policy " +
      "whole (no below_minimum_level: required). The policy in force is the one the highest build published with one carries: " +
      "a lower build published later leaves it as it is (the build is still published), a higher one may lower the minimum. " +
      "An ota update's build numbers are another sequence, per runtime version",
  ),
  expo_client: expoClientSchema.optional().describe(
    `ota only: the app's public Expo config (npx expo config --json --type public), served as the manifest's ` +
      `extra.expoClient (expo-constants' Constants.expoConfig); a JSON object, at most ${MAX_EXPO_CLIENT_BYTES} bytes as JSON, ` +
      "served as sent: a number a double does not hold as written (12345678901234567890, 1e-400) is refused (not_exact)",
  ),
}).superRefine((release, ctx) => {
  if (release.kind === "ota" && release.runtime_version === undefined) {
    ctx.addIssue({ code: "custom", path: ["runtime_version"], message: "is required for an ota release", params: { code: "required" } });
  }
  // What no Expo Updates request could name would be published and never served.
  if (release.kind === "ota" && release.runtime_version !== undefined && !EXPO_RUNTIME_VERSION.test(release.runtime_version)) {
    ctx.addIssue({ code: "custom", path: ["runtime_version"], message: EXPO_RUNTIME_VERSION_MESSAGE, params: { code: "invalid_format" } });
  }
  if (release.kind === "ota" && !(EXPO_PLATFORMS as readonly string[]).includes(release.platform)) {
    ctx.addIssue({
      code: "custom",
      path: ["platform"],
      message: `an ota update is for ${EXPO_PLATFORMS.join(" or ")}: the Expo Updates protocol has no other platform`,
      params: { code: "invalid_value" },
    });
  }
  if (release.kind !== "ota" && release.assets !== undefined && release.assets.length > 0) {
    ctx.addIssue({ code: "custom", path: ["assets"], message: "only an ota release has assets", params: { code: "unexpected_field" } });
  }
  if (release.kind !== "ota" && release.expo_client !== undefined) {
    ctx.addIssue({ code: "custom", path: ["expo_client"], message: "only an ota release has an Expo config", params: { code: "unexpected_field" } });
  }
  // The policy is the binaries' (the update check compares it with installed builds); an OTA update's
  // build number counts updates of its runtime version, and the Expo endpoint reads no policy.
  if (release.kind === "ota" && release.update_policy !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["update_policy"],
      message: "only a binary release sets the minimum supported build (an ota update's build numbers are another sequence)",
      params: { code: "unexpected_field" },
    });
  }
});
export type PublishRelease = z.infer<typeof publishReleaseSchema>;

export const changeReleaseSchema = z.strictObject({
  status: z.enum(RELEASE_STATUSES).optional(),
  rollout_percentage: z.number().int().min(0).max(100).optional(),
}).refine((change) => change.status !== undefined || change.rollout_percentage !== undefined, {
  message: "give status, rollout_percentage or both",
  params: { code: "required" },
});
export type ChangeRelease = z.infer<typeof changeReleaseSchema>;

/** A release as its manager (CI) sees it. */
export const releaseSchema = z.object({
  id: uuidSchema,
  platform: z.enum(PLATFORMS),
  channel: z.string(),
  kind: z.enum(RELEASE_KINDS),
  version: z.string(),
  build_number: z.number().int(),
  runtime_version: z.string().nullable(),
  release_notes: z.string(),
  artifact: z.object({
    path: z.string().nullable(),
    url: z.string().nullable(),
    sha256: z.string(),
    size: z.number().int(),
    content_type: z.string(),
  }),
  assets: z.array(z.object({
    path: z.string().optional(),
    url: z.string().optional(),
    sha256: z.string(),
    content_type: z.string(),
    file_extension: z.string().optional(),
  })),
  status: z.enum(RELEASE_STATUSES),
  rollout_percentage: z.number().int(),
  expo_client: z.record(z.string(), z.unknown()).nullable().describe("ota: the Expo config published with it (extra.expoClient); null when none"),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Release = z.infer<typeof releaseSchema>;

export const releaseIdParamsSchema = z.object({
  id: z.string().describe("a release id; an unknown id (or one of a channel the caller may not receive) is 404"),
});

const queryBuildNumber = digitsParam(10)
  .transform(Number).pipe(buildNumber);

export const updateCheckQuerySchema = z.object({
  platform: z.enum(PLATFORMS),
  channel: channelNameSchema,
  build_number: queryBuildNumber.describe("the build the app runs, the whole number its builds are published with (not a dotted CFBundleVersion)"),
});
export type UpdateCheckQuery = z.infer<typeof updateCheckQuerySchema>;

/** The build an update check offers: what to show and where to download it. */
const offeredBuildSchema = z.object({
  id: uuidSchema,
  version: z.string(),
  build_number: z.number().int(),
  release_notes: z.string(),
  created_at: timestamp,
  download: z.object({
    url: z.string().describe("a signed link to this build's artifact (or the https URL CI gave)"),
    expires_at: timestamp.nullable().describe("when a signed link stops working; null for a URL CI gave"),
    sha256: z.string().describe("the SHA-256 published with the build: verify the download against it (the bytes at the link are the bucket's, and may have been replaced since)"),
    size: z.number().int(),
  }),
});

// api-v1.md fixes { update, level, min_supported_build, server_time }; `release`
// is the name `update` had before, kept (deprecated) for clients built then.
export const updateCheckResponseSchema = z.object({
  update: offeredBuildSchema.nullable().describe("the newest build for you above build_number; null when level is none"),
  level: z.enum(UPDATE_LEVELS).describe(
    "none: nothing newer for you; optional: offer it; required: block until updated (build_number is below the minimum build " +
      "and update meets it)",
  ),
  min_supported_build: z.number().int().nullable().describe(
    "the channel's minimum supported build (its update policy: a build below it gets level required, or optional where " +
      "the policy says so, when the build offered meets it; a build offered below it is optional); null when the channel " +
      "has none, or is not one you may receive",
  ),
  server_time: serverTimeSchema,
  release: offeredBuildSchema.nullable().meta({ deprecated: true }).describe(
    "deprecated: the same object as update (its name before api-v1.md's); read update. Still sent to clients built before",
  ),
});
export type UpdateCheckResponse = z.infer<typeof updateCheckResponseSchema>;

export const feedbackRequestSchema = z.strictObject({
  body: storableText(4000, 1).refine((text) => text.trim().length > 0, { message: "must not be blank", params: { code: "blank" } }),
  platform: z.enum(PLATFORMS).optional().describe("default: the calling device's"),
  build_number: buildNumber.optional().describe("the build the tester runs; default: the calling device's"),
});
export type FeedbackRequest = z.infer<typeof feedbackRequestSchema>;

export const feedbackSchema = z.object({
  id: uuidSchema,
  release_id: uuidSchema,
  device_id: uuidSchema.nullable(),
  platform: z.enum(PLATFORMS),
  build_number: z.number().int(),
  body: z.string(),
  created_at: timestamp,
});
export type Feedback = z.infer<typeof feedbackSchema>;

/** Most feedback items one GET /v1/releases/{id}/feedback returns. */
export const MAX_FEEDBACK_PAGE = 500;

/**
 * Where a page of feedback ends: its last entry's created_at, in microseconds since 1970 (a
 * timestamptz's whole precision, which a JS Date would cut to milliseconds), and id. Entries are
 * ordered by (created_at, id) descending, so the next page starts strictly below it.
 */
const FEEDBACK_CURSOR = /^(\d{1,16})_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
export interface FeedbackCursor {
  /** Microseconds since 1970, as decimal digits (at most Number.MAX_SAFE_INTEGER: exact in the database's arithmetic). */
  createdAtMicros: string;
  id: string;
}

export const feedbackListQuerySchema = z.object({
  limit: digitsParam(3).transform(Number)
    .pipe(z.number().int().min(1).max(MAX_FEEDBACK_PAGE)).optional().describe(`default 100, at most ${MAX_FEEDBACK_PAGE}`),
  before: z.string()
    .refine((value) => {
      const match = FEEDBACK_CURSOR.exec(value);
      return match !== null && Number(match[1]) <= Number.MAX_SAFE_INTEGER;
    }, { message: "must be a next_before this read answered", params: { code: "invalid_cursor" } })
    .transform((value): FeedbackCursor => {
      const [, createdAtMicros, id] = FEEDBACK_CURSOR.exec(value)!;
      return { createdAtMicros, id };
    })
    .optional()
    .describe("only entries older than this (the previous page's next_before): the next page"),
});

/** Feedback as the release manager reads it: with who sent it. */
export const managedFeedbackListSchema = z.object({
  feedback: z.array(feedbackSchema.extend({ user_id: uuidSchema })).describe("newest first (by created_at, then id)"),
  has_more: z.boolean().describe("whether older entries follow this page"),
  next_before: z.string().nullable().describe("pass as `before` for the next (older) page; null on the last page"),
});
export type ManagedFeedbackList = z.infer<typeof managedFeedbackListSchema>;
