// What the Expo Updates manifest endpoint answers (protocol v1,
// docs.expo.dev/technical-specs/expo-updates-1): an update's manifest, or a
// directive. Pure; the candidates are the OTA releases of one (platform,
// channel, runtime version) the caller may see, in any order.
import type { CheckCandidate } from "./plan-update-check.ts";
import { inRollout } from "./rollout.ts";

export interface ExpoCandidate extends CheckCandidate {
  created_at: Date;
  updated_at: Date;
}

export type ExpoPlan<T extends ExpoCandidate> =
  | { kind: "manifest"; release: T }
  | { kind: "noUpdateAvailable" }
  | { kind: "rollBackToEmbedded"; commitTime: Date };

function newestFirst(a: ExpoCandidate, b: ExpoCandidate): number {
  return b.build_number - a.build_number || b.created_at.getTime() - a.created_at.getTime();
}

/**
 * The newest active update in the device's rollout, unless the device already
 * runs it (noUpdateAvailable). With none to offer: rollBackToEmbedded when the
 * newest update of this runtime was rolled back (devices that took it go back
 * to the build's embedded bundle), else noUpdateAvailable.
 */
export function planExpoUpdate<T extends ExpoCandidate>(candidates: readonly T[], currentUpdateId: string | undefined): ExpoPlan<T> {
  const sorted = [...candidates].sort(newestFirst);
  const offered = sorted.find((r) => r.status === "active" && inRollout(r.rollout_bucket, r.rollout_percentage));
  if (offered) {
    return currentUpdateId?.toLowerCase() === offered.id ? { kind: "noUpdateAvailable" } : { kind: "manifest", release: offered };
  }
  const newest = sorted[0];
  if (newest?.status === "rolled_back") return { kind: "rollBackToEmbedded", commitTime: newest.updated_at };
  return { kind: "noUpdateAvailable" };
}
