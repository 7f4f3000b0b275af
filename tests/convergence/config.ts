// Size, fault mix and sharing of a convergence run, from the environment. The
// defaults fit CI (a few seconds); `SEED=7 USERS=6 DEVICES=5 OPS=180 npm run
// test:convergence` is ten times that.

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return value;
}

export interface ConvergenceConfig {
  seed: string;
  users: number;
  /** Devices per user. */
  devicesPerUser: number;
  /** Local writes per device (each write of a step that makes several counts). */
  opsPerDevice: number;
  /** Per request: drop it before it leaves. */
  dropRequest: number;
  /** Per request: deliver it, apply it, lose the answer. */
  loseResponse: number;
  /** Per request: deliver it twice at once. */
  duplicate: number;
  /** Per request: deliver it now and an identical stale copy later. */
  replayLater: number;
  /** Per request: hold it, let the client time out and retry, deliver the original after the retry. */
  reorder: number;
  /** Per step: go offline for a while (writes keep queueing). */
  goOffline: number;
  /** Function process kill -9 mid-batch, spread over the run. */
  serverRestarts: number;
  /** Rounds of terminating the function's database connections. */
  dbKills: number;
  /** Shared lists (list k owned by user k, shared with every other user); none with a single user. */
  sharedLists: number;
  /** Membership changes during the run (invites, demotions, promotions, removals, re-invites). */
  membershipChanges: number;
}

export function loadConvergenceConfig(): ConvergenceConfig {
  const users = intFromEnv("USERS", 3, 1);
  const devicesPerUser = intFromEnv("DEVICES", 3, 1);
  const opsPerDevice = intFromEnv("OPS", 60, 1);
  const scale = (users * devicesPerUser * opsPerDevice) / 540;
  return {
    seed: process.env.SEED && process.env.SEED !== "" ? process.env.SEED : "1",
    users,
    devicesPerUser,
    opsPerDevice,
    dropRequest: 0.05,
    loseResponse: 0.05,
    duplicate: 0.04,
    replayLater: 0.04,
    reorder: 0.03,
    goOffline: 0.02,
    serverRestarts: intFromEnv("SERVER_RESTARTS", Math.max(1, Math.round(scale / 4)), 0),
    dbKills: intFromEnv("DB_KILLS", Math.max(2, Math.round(scale)), 0),
    sharedLists: users < 2 ? 0 : intFromEnv("SHARED_LISTS", Math.ceil(users / 2), 0),
    membershipChanges: users < 2 ? 0 : intFromEnv("MEMBERSHIP_CHANGES", Math.max(8, Math.round(8 * scale)), 0),
  };
}
