// What the Expo Updates manifest endpoint answers (protocol v1,
// docs.expo.dev/technical-specs/expo-updates-1): an update's manifest, or a
// directive. Pure; the candidates are the OTA releases of one (platform,
// channel, runtime version) the caller may see, in any order: the newest, and
// the one the device runs if it still exists (expoCandidates), and the times
// of the latest rollbacks of the whole runtime version (ExpoRequest).
//
// expo-updates takes a manifest only when its createdAt (commitTime) is after
// the one of the update it runs, and a rollBackToEmbedded only when its
// commitTime is (expo/expo, LoaderSelectionPolicyFilterAware). An older update
// offered again after a rollback is therefore served as of the rollback, under
// an id of its own (what `eas update:rollback` does by republishing it);
// otherwise a device that took the rolled-back update would keep running it.
// A device sent back to its embedded bundle gave it the commitTime of that
// rollBackToEmbedded: an update published before the rollback and offered
// after it is served later than that, also once no release is rolled back
// any more (the database remembers when: app_private.release_past_rollbacks),
// and also when the rolled-back update is older than the candidates.
// Likewise an update offered to a device that runs such a republished one is
// served later than that, or the device would stay on it. An update the
// candidates do not name is withdrawn only when the server knows it was
// deleted (as of its recorded deletion: every request about it gets the same
// answer) or is one the caller may no longer see (as of the request); an id
// the server never had, or an update of another channel the caller may see
// (an app that switched channel), is kept (unnamedUpdate).
//
// A republished id says when it was served, and anyone who knows the
// release's id can make one for any time (its hash has no secret). Its time
// is trusted only when the server could have served it then: not later than
// now, and for a deleted release not after its deletion (republication,
// unnamedUpdate). Any other such id is one the server never had: nothing is
// withdrawn for it, nor served later than it. So no answer is dated by a time
// the caller picks, only by the request's or one the database stamped (a
// rollback, a deletion), and never more than a few milliseconds after now.
import { sha256, toHex } from "../sha256.ts";
import type { CheckCandidate } from "./plan-update-check.ts";
import { inRollout } from "./rollout.ts";

export interface ExpoCandidate extends CheckCandidate {
  created_at: Date;
  updated_at: Date;
}

/** What a manifest request says of the device, and when it is answered. */
export interface ExpoRequest {
  /** expo-current-update-id: the update the app runs (its embedded update's id when it runs that one). */
  currentUpdateId?: string;
  /** expo-embedded-update-id: the update built into the app. */
  embeddedUpdateId?: string;
  /**
   * The latest rollback of a release of this (platform, channel, runtime
   * version) that is still rolled back (its updated_at), or null: of every
   * release, as the candidates are only the newest and may leave it out
   * (visibleRollbacks).
   */
  rolledBackAt: Date | null;
  /**
   * The latest rollback of this (platform, channel, runtime version) that no
   * release shows as rolled back any more (that release made active or paused
   * again, or deleted), or null (visibleRollbacks).
   */
  pastRollbackAt: Date | null;
  /** What the server knows of the update the device runs when no candidate names it (unnamedUpdate). */
  unnamed?: UnnamedUpdate;
  /** When the request is answered: a republished id dated later is one the server never had (republication). */
  now: Date;
}

/** A recorded deletion of an OTA update (app_private.release_deletions): the release's id and created_at, and when it was deleted. */
export interface ExpoDeletion {
  id: string;
  created_at: Date;
  deleted_at: Date;
}

/**
 * The update a device runs that no candidate names, as the server knows it:
 * deleted (its deletion recorded; served to the device as of `since`), or
 * hidden (an update the server has or had that the caller may no longer see:
 * a tester signed out, or removed from the group). Anything else (an id the
 * server never had, an update of another channel or runtime version the
 * caller may see) is not withdrawn, and has no UnnamedUpdate.
 */
export type UnnamedUpdate = { kind: "deleted"; deletedAt: Date; since: Date } | { kind: "hidden" };

export type ExpoPlan<T extends ExpoCandidate> =
  | { kind: "manifest"; release: T; id: string; createdAt: Date }
  | { kind: "noUpdateAvailable" }
  | { kind: "rollBackToEmbedded"; commitTime: Date };

function newestFirst(a: ExpoCandidate, b: ExpoCandidate): number {
  return b.build_number - a.build_number || b.created_at.getTime() - a.created_at.getTime();
}

const later = (time: Date) => new Date(time.getTime() + 1);

const latest = (...times: (Date | null)[]): Date | null =>
  times.reduce<Date | null>((a, b) => (b !== null && (a === null || b > a) ? b : a), null);

/**
 * One millisecond after the latest rollback of the runtime version, or null
 * when there was none: of a release still rolled back (rolledBackAt, or a
 * rolled-back candidate's updated_at) or of one no release shows any more
 * (pastRollbackAt). Later than the commitTime of every update a device took
 * before that rollback (manifests carry milliseconds, so the same millisecond
 * would not be "after"). The rollBackToEmbedded of that rollback carries it;
 * an update offered after it is served one millisecond later still.
 */
export function republishTime(
  candidates: readonly Pick<ExpoCandidate, "status" | "updated_at">[],
  rollbacks: Pick<ExpoRequest, "rolledBackAt" | "pastRollbackAt">,
): Date | null {
  const rolledBack = candidates.filter((r) => r.status === "rolled_back").map((r) => r.updated_at);
  const at = latest(rollbacks.rolledBackAt, rollbacks.pastRollbackAt, ...rolledBack);
  return at && later(at);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REPUBLISHED = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The bytes of a release's id that an id republishedUpdateId derives from it begins with (its last bytes). */
const RELEASE_PREFIX_BYTES = 7;

const hexOf = (uuid: string) => uuid.toLowerCase().replaceAll("-", "");
const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/**
 * The id of release `releaseId` served as of `at`: a UUID (version 8), the
 * same for every device. Its first 48 bits are `at` in milliseconds (as in a
 * version 7 UUID), its last 7 bytes the first 7 of the release's id (so the
 * release is found by an index range, releaseIdRanges, whatever changed
 * since), the bits between from SHA-256 of the release and the time. A device
 * that reports it is known to run that release since `at` (servedAs).
 */
export async function republishedUpdateId(releaseId: string, at: Date): Promise<string> {
  const digest = await sha256(`tidesync.expo-republish:${releaseId}@${at.toISOString()}`);
  const bytes = new Uint8Array(16);
  const ms = at.getTime();
  for (let i = 0; i < 6; i++) bytes[i] = Math.floor(ms / 2 ** (8 * (5 - i))) % 256;
  bytes.set(digest.subarray(0, 16 - 6 - RELEASE_PREFIX_BYTES), 6);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  return uuidOf(toHex(bytes).slice(0, 2 * (16 - RELEASE_PREFIX_BYTES)) + hexOf(releaseId).slice(0, 2 * RELEASE_PREFIX_BYTES));
}

/**
 * What a republished id says: when it was served, and how the id of its
 * release begins (hex). Nothing when it is dated later than `now`: the server
 * never served it (a clock a few milliseconds behind the one that served it
 * only answers as to an id it never had, which expo-updates then declines or
 * the device already runs).
 */
function republication(updateId: string, now: Date): { since: Date; releasePrefix: string } | undefined {
  if (!REPUBLISHED.test(updateId)) return undefined;
  const hex = hexOf(updateId);
  const since = new Date(parseInt(hex.slice(0, 12), 16));
  return since > now ? undefined : { since, releasePrefix: hex.slice(2 * (16 - RELEASE_PREFIX_BYTES)) };
}

/** The release a device runs and the createdAt it was served with, when its update id names one of the releases (as of `now`: republication). */
async function servedAs<T extends Pick<ExpoCandidate, "id" | "created_at">>(releases: readonly T[], updateId: string | undefined, now: Date): Promise<{ release: T; since: Date } | undefined> {
  const wanted = updateId?.toLowerCase();
  if (wanted === undefined) return undefined;
  const asPublished = releases.find((r) => r.id === wanted);
  if (asPublished) return { release: asPublished, since: asPublished.created_at };
  const republished = republication(wanted, now);
  if (!republished) return undefined;
  const { since, releasePrefix } = republished;
  for (const r of releases) {
    if (hexOf(r.id).startsWith(releasePrefix) && await republishedUpdateId(r.id, since) === wanted) return { release: r, since };
  }
  return undefined;
}

/** expo-updates reports its embedded update's id as the current one while it runs that one. */
const runsEmbedded = ({ currentUpdateId, embeddedUpdateId }: Pick<ExpoRequest, "currentUpdateId" | "embeddedUpdateId">) =>
  currentUpdateId !== undefined && currentUpdateId.toLowerCase() === embeddedUpdateId?.toLowerCase();

/** Inclusive bounds in the order of uuids (bytewise, as Postgres compares them). */
export type IdRange = readonly [first: string, last: string];

/**
 * The ids among which a device's update id names a release: itself, and for a
 * republished id (not dated later than `now`: republication) the ids that
 * begin as its release's did (one index range each). None when it is no UUID,
 * so names no release.
 */
export function releaseIdRanges(updateId: string, now: Date): IdRange[] {
  const wanted = updateId.toLowerCase();
  if (!UUID.test(wanted)) return [];
  const prefix = republication(wanted, now)?.releasePrefix;
  if (prefix === undefined) return [[wanted, wanted]];
  const pad = (digit: string) => uuidOf(prefix + digit.repeat(32 - prefix.length));
  return [[wanted, wanted], [pad("0"), pad("f")]];
}

/**
 * The candidates planExpoUpdate weighs: `window`, the newest releases of the
 * runtime version (at most `limit`), and the one the device runs when the
 * window does not name it although it may have left it out (full): read by
 * its id with `readIds` (one index read, in the transaction of the window;
 * only then). Without it, a rollback of an update older than the window (below
 * a run of staged updates, say) would not withdraw it from the devices that
 * run it, nor would the time a republished one was served count.
 */
export async function expoCandidates<T extends Pick<ExpoCandidate, "id" | "created_at">>(
  window: readonly T[],
  limit: number,
  request: Pick<ExpoRequest, "currentUpdateId" | "embeddedUpdateId" | "now">,
  readIds: (ranges: IdRange[]) => Promise<readonly T[]>,
): Promise<T[]> {
  const { currentUpdateId: current, now } = request;
  if (current === undefined || runsEmbedded(request) || window.length < limit || await servedAs(window, current, now)) return [...window];
  const ranges = releaseIdRanges(current, now);
  const running = ranges.length === 0 ? undefined : await servedAs(await readIds(ranges), current, now);
  return running ? [...window, running.release] : [...window];
}

/**
 * What the server knows of the update the device runs when no candidate names
 * it: its deletion, when one is recorded for this platform and runtime version
 * on a channel the caller may see (`deletions` reads them by id range, as
 * releaseIdRanges gives them); else whether the server has or had such an
 * update that the caller may not see (`hidden`, which answers only that).
 * Nothing (undefined) for an id the server never had, nor for an update of
 * another channel the caller may see, nor when the device runs a candidate or
 * its embedded update (expo-updates reports that one's id then) or reports
 * none. Nor, when the caller's token was ignored (not `complete`: the request
 * sees only what anyone sees), for an update hidden from it: a tester's
 * update is still there, and hidden is not asked. A republished id of a
 * deleted release dated after its deletion is one the server never had (it
 * served the release while it existed); one dated in the millisecond of the
 * deletion may have been served then, by a request that still read it.
 */
export async function unnamedUpdate(
  candidates: readonly Pick<ExpoCandidate, "id" | "created_at">[],
  request: Pick<ExpoRequest, "currentUpdateId" | "embeddedUpdateId" | "now"> & { complete: boolean },
  reads: { deletions: (ranges: IdRange[]) => Promise<readonly ExpoDeletion[]>; hidden: (ranges: IdRange[]) => Promise<boolean> },
): Promise<UnnamedUpdate | undefined> {
  const { currentUpdateId: current, now } = request;
  if (current === undefined || runsEmbedded(request) || await servedAs(candidates, current, now)) return undefined;
  const ranges = releaseIdRanges(current, now);
  if (ranges.length === 0) return undefined;
  const deleted = await servedAs(await reads.deletions(ranges), current, now);
  if (deleted) {
    const { release, since } = deleted;
    const republishedAfterDeletion = release.id !== current.toLowerCase() && since > release.deleted_at;
    return republishedAfterDeletion ? undefined : { kind: "deleted", deletedAt: release.deleted_at, since };
  }
  return request.complete && await reads.hidden(ranges) ? { kind: "hidden" } : undefined;
}

/**
 * The time the update a device runs was withdrawn as of, or null when it was
 * not: a rolled-back update, as of the latest rollback; a deleted one, as of
 * its deletion (a millisecond after it when it was served in that
 * millisecond: later than the time it was served with); a hidden one
 * (unnamedUpdate), as of now.
 */
function withdrawnAt(running: { release: ExpoCandidate } | undefined, afterRollback: Date | null, request: ExpoRequest): Date | null {
  if (running) return running.release.status === "rolled_back" ? afterRollback : null;
  const unnamed = request.unnamed;
  if (unnamed?.kind === "deleted") return unnamed.deletedAt > unnamed.since ? unnamed.deletedAt : later(unnamed.since);
  return unnamed?.kind === "hidden" ? request.now : null;
}

/**
 * The newest active update in the device's rollout, unless the device already
 * runs it (noUpdateAvailable). A device that runs nothing the candidates name
 * and nothing withdrawn gets it as published (as of the latest rollback):
 * expo-updates takes it if it is newer than what the device runs. A device is
 * meant to take it when it runs a withdrawn update (withdrawnAt) or an older
 * release: then it is served later than the latest rollback (republishTime:
 * what the rolled-back update's devices run is older), than the withdrawal of
 * its own update, and than the createdAt the device's own update was served
 * with (a republished one's is the time of its rollback, later than a release
 * published before that rollback and re-activated or rolled out since), under
 * an id of its own (republishedUpdateId) whenever that is not the release's
 * own createdAt. With none to offer, a device on a withdrawn update gets
 * rollBackToEmbedded as of that withdrawal; one that reports no update
 * gets it as of the latest rollback while a release is rolled back (it may
 * run that one). A device running its embedded update keeps it: it gets the
 * offered update as published (as of the latest rollback), or
 * noUpdateAvailable. One running a newer update (a higher build) that was not
 * withdrawn (paused, or outside a narrowed rollout) keeps it: noUpdateAvailable,
 * as a lower build published after it (an old CI run re-run) would be taken.
 */
export async function planExpoUpdate<T extends ExpoCandidate>(candidates: readonly T[], request: ExpoRequest): Promise<ExpoPlan<T>> {
  const sorted = [...candidates].sort(newestFirst);
  const running = await servedAs(sorted, request.currentUpdateId, request.now);
  const current = running?.release;
  const offered = sorted.find((r) => r.status === "active" && inRollout(r.rollout_bucket, r.rollout_percentage));
  const afterRollback = republishTime(sorted, request);
  const withdrawn = withdrawnAt(running, afterRollback, request);
  const afterRunning = (time: Date) => (running && time <= running.since ? later(running.since) : time);
  if (offered) {
    const keepsCurrent = current !== undefined && !withdrawn && newestFirst(current, offered) < 0;
    if (current === offered || keepsCurrent) return { kind: "noUpdateAvailable" };
    // Later than the rollBackToEmbedded a device may have taken as of the rollback (afterRollback):
    // expo-updates gives its embedded bundle that commitTime and takes only a later createdAt.
    const createdAt = afterRunning(latest(offered.created_at, afterRollback && later(afterRollback), withdrawn)!);
    const id = createdAt.getTime() === offered.created_at.getTime() ? offered.id : await republishedUpdateId(offered.id, createdAt);
    return { kind: "manifest", release: offered, id, createdAt };
  }
  const mayRunRolledBack = request.currentUpdateId === undefined && (request.rolledBackAt !== null || sorted.some((r) => r.status === "rolled_back"));
  const commitTime = withdrawn ?? (mayRunRolledBack ? afterRollback : null);
  return commitTime ? { kind: "rollBackToEmbedded", commitTime: afterRunning(commitTime) } : { kind: "noUpdateAvailable" };
}
