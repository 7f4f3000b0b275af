// The one small interface between releases and where their artifacts live.
// Production: a private Supabase Storage bucket through @supabase/storage-js,
// links are Storage signed URLs. The local stack: local-artifact-store.ts,
// links signed the same way and served by scripts/serve-functions.ts.
import { StorageClient } from "@supabase/storage-js";
import { ApiError } from "../../_shared/errors.ts";
import { createLocalArtifactStore } from "./local-artifact-store.ts";
import type { ReleaseConfig } from "./release-config.ts";

export interface SignedLink {
  url: string;
  expiresAt: Date;
}

export interface ArtifactStore {
  /** One expiring link per object path (in the artifact bucket), in the same order. */
  signedLinks(paths: readonly string[], expiresInSeconds: number): Promise<SignedLink[]>;
}

/** Storage calls are bounded: a hung Storage must not hang the update check. */
export const STORAGE_TIMEOUT_MS = 5000;
const STORAGE_ATTEMPTS = 2;

function storageUnavailable(cause: unknown): ApiError {
  return new ApiError("UNAVAILABLE", "artifact storage is unavailable right now; retry shortly", { headers: { "Retry-After": "2" }, cause });
}

export function createSupabaseArtifactStore(options: {
  supabaseUrl: string;
  serviceRoleKey: string;
  bucket: string;
  /** Per Storage request (default STORAGE_TIMEOUT_MS). */
  timeoutMs?: number;
}): ArtifactStore {
  const timeoutMs = options.timeoutMs ?? STORAGE_TIMEOUT_MS;
  const timedFetch = (input: RequestInfo | URL, init?: RequestInit) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  const storage = new StorageClient(`${options.supabaseUrl}/storage/v1`, {
    apikey: options.serviceRoleKey,
    Authorization: `Bearer ${options.serviceRoleKey}`,
  }, timedFetch);
  return {
    async signedLinks(paths, expiresInSeconds) {
      if (paths.length === 0) return [];
      let lastError: unknown;
      for (let attempt = 1; attempt <= STORAGE_ATTEMPTS; attempt++) {
        const expiresAt = new Date(Date.now() + expiresInSeconds * 1000);
        const { data, error } = await storage.from(options.bucket).createSignedUrls([...paths], expiresInSeconds);
        if (error || !data) {
          // Storage unreachable, slow or failing: worth one more try.
          lastError = error;
          continue;
        }
        const missing = data.find((entry) => !entry.signedUrl);
        // An object CI named but never uploaded: retrying will not make it appear.
        if (missing) throw storageUnavailable(new Error(`no object ${missing.path} in bucket ${options.bucket}: ${missing.error}`));
        return data.map((entry) => ({ url: entry.signedUrl as string, expiresAt }));
      }
      throw storageUnavailable(lastError);
    },
  };
}

/** The store the configuration names, or one that refuses (503) when none is configured. */
export function createArtifactStore(config: ReleaseConfig): ArtifactStore {
  const store = config.store;
  if (store?.kind === "supabase") {
    return createSupabaseArtifactStore({ supabaseUrl: store.supabaseUrl, serviceRoleKey: store.serviceRoleKey, bucket: config.bucket });
  }
  if (store?.kind === "local") return createLocalArtifactStore({ publicUrl: store.publicUrl, secret: store.secret, bucket: config.bucket });
  return {
    signedLinks(paths) {
      if (paths.length === 0) return Promise.resolve([]);
      return Promise.reject(storageUnavailable(new Error("no artifact store configured (TIDESYNC_ARTIFACT_STORE)")));
    },
  };
}
