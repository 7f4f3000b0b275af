// Download links for what a caller was just offered: artifacts in the bucket
// get signed, expiring links (one per object, for that object only); an https
// URL CI gave is handed out as it is.
import type { ArtifactStore } from "./artifact-store.ts";

export interface Located {
  path?: string | null;
  url?: string | null;
}

export interface DownloadLink {
  url: string;
  /** Null for a URL CI gave (its own rules apply). */
  expiresAt: Date | null;
}

export async function downloadLinks(store: ArtifactStore, ttlSeconds: number, items: readonly Located[]): Promise<DownloadLink[]> {
  const paths = items.flatMap((item) => (item.path ? [item.path] : []));
  const signed = await store.signedLinks(paths, ttlSeconds);
  let next = 0;
  return items.map((item) => {
    if (item.path) return signed[next++];
    return { url: item.url as string, expiresAt: null };
  });
}
