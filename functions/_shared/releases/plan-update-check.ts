// What GET /v1/releases/check answers, decided from what the caller may see
// (RLS already removed every release of a channel they may not receive).
// Pure: the store reads, this decides, the route links.
import type { UpdateCheckResponse } from "../schemas/releases.ts";
import { inRollout } from "./rollout.ts";

export interface CheckCandidate {
  id: string;
  build_number: number;
  status: "active" | "paused" | "rolled_back";
  rollout_percentage: number;
  /** This device's bucket for this release (rollout.ts). */
  rollout_bucket: number;
}

export interface UpdatePolicy {
  minimum_build_number: number;
  below_minimum_level: "optional" | "required";
}

export interface UpdateCheckPlan<T extends CheckCandidate> {
  level: UpdateCheckResponse["level"];
  release: T | null;
}

/**
 * The newest active release above the caller's build whose rollout includes
 * the device. Paused and rolled-back releases are skipped (so rolling back the
 * newest offers the previous one again). With nothing to offer the answer is
 * `none`, whatever the policy says (there is nothing to install). Below the
 * minimum, the policy's level applies only when the build offered meets the
 * minimum: `required` blocks the app until the user installs it, which must
 * lift the block. A build offered below the minimum (the one that meets it is
 * staged and has not reached this device) is `optional`: forcing it would
 * force a build the policy calls unsupported, and the requirement reaches
 * each device with the rollout of a build that meets it. The answer's
 * min_supported_build is the policy as the caller sees it: RLS hides the
 * policy of a channel they may not receive, so such a channel looks like one
 * without builds or policy.
 */
export function planUpdateCheck<T extends CheckCandidate>(
  candidates: readonly T[],
  callerBuild: number,
  policy: UpdatePolicy | null,
): UpdateCheckPlan<T> {
  const offered = candidates
    .filter((r) => r.status === "active" && r.build_number > callerBuild && inRollout(r.rollout_bucket, r.rollout_percentage))
    .reduce<T | null>((best, r) => (best === null || r.build_number > best.build_number ? r : best), null);
  if (!offered) return { level: "none", release: null };
  const enforced = policy !== null && callerBuild < policy.minimum_build_number && offered.build_number >= policy.minimum_build_number;
  return { level: enforced ? policy.below_minimum_level : "optional", release: offered };
}
