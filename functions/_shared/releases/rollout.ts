// Deterministic percentage rollouts: each (release, device) pair gets a fixed
// bucket in [0, 10000); the device is offered the release when its bucket is
// below percentage × 100. The same device always gets the same answer, and
// raising the percentage only adds devices (no bucket moves).
import { sha256 } from "../sha256.ts";

export const ROLLOUT_BUCKETS = 10_000;

/** The bucket of `rolloutKey` (a device's installation id) for `releaseId`: the first 32 bits of SHA-256, mod 10000. */
export async function rolloutBucket(releaseId: string, rolloutKey: string): Promise<number> {
  const digest = await sha256(`${releaseId}:${rolloutKey}`);
  return new DataView(digest.buffer).getUint32(0) % ROLLOUT_BUCKETS;
}

export function inRollout(bucket: number, percentage: number): boolean {
  return bucket < percentage * (ROLLOUT_BUCKETS / 100);
}
