// The settings of test-build distribution, read once at start-up with the
// rest of the configuration (lib/config.ts). Every variable is listed in
// docs/configuration.md; docs/test-builds.md shows how to create each secret.
import { type IntRange, intSetting } from "../../_shared/int-setting.ts";
import { decodeWebhookSecret } from "../../_shared/releases/webhook-signature.ts";

export type ArtifactStoreConfig =
  /** Supabase Storage through @supabase/storage-js (production). */
  | { kind: "supabase"; supabaseUrl: string; serviceRoleKey: string }
  /** The local stack's stand-in: links signed like Storage's, served by scripts/serve-functions.ts. */
  | { kind: "local"; publicUrl: string; secret: string };

export interface ReleaseConfig {
  /** HMAC key of TIDESYNC_RELEASES_WEBHOOK_SECRET; null: publishing is off (every CI call is 401). */
  webhookKey: Uint8Array | null;
  /** The private bucket holding artifacts (TIDESYNC_ARTIFACT_BUCKET). */
  bucket: string;
  /** Lifetime of a download link (TIDESYNC_DOWNLOAD_LINK_TTL_S). */
  linkTtlSeconds: number;
  /** Null: no artifact storage configured; releases with a bucket path cannot be linked (503). */
  store: ArtifactStoreConfig | null;
  /** Code signing of Expo Updates manifests (TIDESYNC_EXPO_SIGNING_KEY, PKCS#8 PEM); null: signing off. */
  expoSigning: { privateKeyPem: string; keyId: string } | null;
}

export const DEFAULT_ARTIFACT_BUCKET = "test-builds";
export const DEFAULT_LINK_TTL_SECONDS = 3600;
/** Storage signs links for at most a week; longer-lived links defeat their purpose. */
export const MAX_LINK_TTL_SECONDS = 7 * 24 * 3600;

/** What each numeric setting of test-build distribution accepts (docs/configuration.md lists the ranges). */
export const RELEASE_SETTING_RANGES = {
  TIDESYNC_DOWNLOAD_LINK_TTL_S: { min: 1, max: MAX_LINK_TTL_SECONDS },
} as const satisfies Record<string, IntRange>;
export const MIN_LOCAL_STORAGE_SECRET_LENGTH = 32;

export function loadReleaseConfig(env: Record<string, string | undefined>): ReleaseConfig {
  let webhookKey: Uint8Array | null = null;
  if (env.TIDESYNC_RELEASES_WEBHOOK_SECRET) {
    try {
      webhookKey = decodeWebhookSecret(env.TIDESYNC_RELEASES_WEBHOOK_SECRET);
    } catch (error) {
      throw new Error(`TIDESYNC_RELEASES_WEBHOOK_SECRET: ${(error as Error).message}`);
    }
  }

  const bucket = env.TIDESYNC_ARTIFACT_BUCKET || DEFAULT_ARTIFACT_BUCKET;
  if (!/^[a-z0-9][a-z0-9._-]{1,62}$/.test(bucket)) throw new Error(`TIDESYNC_ARTIFACT_BUCKET is not a bucket name: ${JSON.stringify(bucket)}`);

  const linkTtlSeconds = intSetting(env, "TIDESYNC_DOWNLOAD_LINK_TTL_S", DEFAULT_LINK_TTL_SECONDS, RELEASE_SETTING_RANGES.TIDESYNC_DOWNLOAD_LINK_TTL_S);

  const supabaseUrl = env.SUPABASE_URL?.replace(/\/+$/, "");
  const kind = env.TIDESYNC_ARTIFACT_STORE || (env.SUPABASE_SERVICE_ROLE_KEY && supabaseUrl ? "supabase" : "");
  let store: ArtifactStoreConfig | null = null;
  if (kind === "supabase") {
    if (!supabaseUrl || !env.SUPABASE_SERVICE_ROLE_KEY) {
      throw new Error("TIDESYNC_ARTIFACT_STORE=supabase needs SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY (the edge runtime provides both)");
    }
    store = { kind, supabaseUrl, serviceRoleKey: env.SUPABASE_SERVICE_ROLE_KEY };
  } else if (kind === "local") {
    const publicUrl = env.TIDESYNC_LOCAL_STORAGE_URL?.replace(/\/+$/, "");
    const secret = env.TIDESYNC_LOCAL_STORAGE_SECRET ?? "";
    if (!publicUrl) throw new Error("TIDESYNC_ARTIFACT_STORE=local needs TIDESYNC_LOCAL_STORAGE_URL (where the local gateway serves /storage/v1)");
    if (secret.length < MIN_LOCAL_STORAGE_SECRET_LENGTH) {
      throw new Error(`TIDESYNC_ARTIFACT_STORE=local needs TIDESYNC_LOCAL_STORAGE_SECRET of at least ${MIN_LOCAL_STORAGE_SECRET_LENGTH} characters`);
    }
    store = { kind, publicUrl, secret };
  } else if (kind !== "") {
    throw new Error(`TIDESYNC_ARTIFACT_STORE must be supabase or local, got ${JSON.stringify(kind)}`);
  }

  let expoSigning: ReleaseConfig["expoSigning"] = null;
  if (env.TIDESYNC_EXPO_SIGNING_KEY) {
    const pem = env.TIDESYNC_EXPO_SIGNING_KEY.replaceAll("\\n", "\n");
    if (!/-----BEGIN (RSA )?PRIVATE KEY-----[\s\S]+-----END (RSA )?PRIVATE KEY-----/.test(pem)) {
      throw new Error("TIDESYNC_EXPO_SIGNING_KEY must be an RSA private key in PEM (PKCS#8 BEGIN PRIVATE KEY, or PKCS#1 BEGIN RSA PRIVATE KEY)");
    }
    const keyId = env.TIDESYNC_EXPO_SIGNING_KEY_ID || "main";
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(keyId)) throw new Error("TIDESYNC_EXPO_SIGNING_KEY_ID must be 1-64 of A-Z a-z 0-9 . _ -");
    expoSigning = { privateKeyPem: pem, keyId };
  }

  return { webhookKey, bucket, linkTtlSeconds, store, expoSigning };
}
