// What the Expo Updates manifest endpoint answers (protocol v1,
// docs.expo.dev/technical-specs/expo-updates-1): an update's manifest, or a
// directive. Pure; the candidates are the OTA releases of one (platform,
// channel, runtime version) the caller may see, in any order.
//
// expo-updates takes a manifest only when its createdAt (commitTime) is after
// the one of the update it runs, and a rollBackToEmbedded only when its
// commitTime is (expo/expo, LoaderSelectionPolicyFilterAware). An older update
// offered again after a rollback is therefore served as of the rollback, under
// an id of its own (what `eas update:rollback` does by republishing it);
// otherwise a device that took the rolled-back update would keep running it.
import { sha256, toHex } from "../sha256.ts";
import type { CheckCandidate } from "./plan-update-check.ts";
import { inRollout } from "./rollout.ts";

export interface ExpoCandidate extends CheckCandidate {
  created_at: Date;
  updated_at: Date;
  /** Its id when served as of republishTime (republishedUpdateId); set when there was a rollback. */
  republished_id?: string;
}

export type ExpoPlan<T extends ExpoCandidate> =
  | { kind: "manifest"; release: T; id: string; createdAt: Date }
  | { kind: "noUpdateAvailable" }
  | { kind: "rollBackToEmbedded"; commitTime: Date };

function newestFirst(a: ExpoCandidate, b: ExpoCandidate): number {
  return b.build_number - a.build_number || b.created_at.getTime() - a.created_at.getTime();
}

/**
 * One millisecond after the latest rollback among the candidates (its
 * updated_at), or null when none was rolled back: later than the commitTime
 * of every update a device took before that rollback (manifests carry
 * milliseconds, so the same millisecond would not be "after").
 */
export function republishTime(candidates: readonly Pick<ExpoCandidate, "status" | "updated_at">[]): Date | null {
  let latest: number | null = null;
  for (const r of candidates) if (r.status === "rolled_back") latest = Math.max(latest ?? 0, r.updated_at.getTime());
  return latest === null ? null : new Date(latest + 1);
}

/** The id of release `releaseId` served as of `at`: a UUID (version 8) from SHA-256, the same for every device. */
export async function republishedUpdateId(releaseId: string, at: Date): Promise<string> {
  const bytes = (await sha256(`tidesync.expo-republish:${releaseId}@${at.toISOString()}`)).slice(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The newest active update in the device's rollout, unless the device already
 * runs it (noUpdateAvailable). When a rollback came after that update was
 * published, it is served as of the rollback (republishTime, its
 * republished_id), so that a device on a rolled-back update takes it. With
 * none to offer, a device whose update was rolled back (or that runs one this
 * runtime's candidates do not name) gets rollBackToEmbedded as of the latest
 * rollback. A device running an update that was not rolled back (paused, or
 * outside a narrowed rollout) keeps it: it gets the offered update as
 * published, or noUpdateAvailable.
 */
export function planExpoUpdate<T extends ExpoCandidate>(candidates: readonly T[], currentUpdateId: string | undefined): ExpoPlan<T> {
  const sorted = [...candidates].sort(newestFirst);
  const wanted = currentUpdateId?.toLowerCase();
  const current = wanted === undefined ? undefined : sorted.find((r) => r.id === wanted || r.republished_id === wanted);
  const offered = sorted.find((r) => r.status === "active" && inRollout(r.rollout_bucket, r.rollout_percentage));
  const rolledBackAt = republishTime(sorted);
  const keepsCurrent = current !== undefined && current !== offered && current.status !== "rolled_back";
  if (offered) {
    if (current === offered) return { kind: "noUpdateAvailable" };
    if (rolledBackAt && rolledBackAt > offered.created_at && offered.republished_id && !keepsCurrent) {
      return { kind: "manifest", release: offered, id: offered.republished_id, createdAt: rolledBackAt };
    }
    return { kind: "manifest", release: offered, id: offered.id, createdAt: offered.created_at };
  }
  if (keepsCurrent || !rolledBackAt) return { kind: "noUpdateAvailable" };
  return { kind: "rollBackToEmbedded", commitTime: rolledBackAt };
}
