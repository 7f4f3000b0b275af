// The convergence suite: many simulated devices of several users, each the
// REAL client against real Deno + Postgres, through a network that drops,
// loses, duplicates and reorders requests, with offline periods, the function
// process killed -9 mid-batch and its database connections terminated. Users
// share lists, and membership churns while the devices work: members are
// invited, demoted, promoted, removed (or leave) and invited again. Devices
// delete their users' own lists, also amid moves between two syncs, and
// rename records back and forth (tests/convergence/sim-device.ts). At the end
// every device must hold exactly what RLS lets its user see on the server,
// field for field; the ledger must show every op processed exactly once with
// its effect present; no write may be lost without the device being told, nor
// refused for a reason the run does not explain; and no user may have
// received rows of a list that was never theirs.
//
// Size and seed: SEED, USERS, DEVICES (per user), OPS (writes per device);
// see tests/convergence/config.ts. `npm run test:convergence`.
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";
import { adminSql, createTestUser, stack, type TestUser } from "../support/harness.ts";
import { settled } from "../support/shared-lists.ts";
import { ServerChaos } from "../convergence/chaos.ts";
import { checkConvergence } from "../convergence/checks.ts";
import { writeFailureHistories } from "../convergence/failure-histories.ts";
import { loadConvergenceConfig } from "../convergence/config.ts";
import { FaultNetwork } from "../convergence/fault-network.ts";
import { MembershipChurn } from "../convergence/membership-churn.ts";
import { Prng } from "../convergence/prng.ts";
import { SimDevice, type SimUser } from "../convergence/sim-device.ts";

const config = loadConvergenceConfig();
let chaos: ServerChaos | null = null;

afterAll(async () => {
  await chaos?.stop();
});

it(`converges under faults (seed ${config.seed}, ${config.users} users × ${config.devicesPerUser} devices × ${config.opsPerDevice} writes)`, async () => {
  const started = Date.now();
  const network = new FaultNetwork("", config);
  // Our own server, so killing it does not disturb other test files. A low
  // batch limit makes the client meet real 413s and split its batches.
  chaos = await ServerChaos.start(network, adminSql, stack.database, { ...stack.functionsEnv, TIDESYNC_MAX_OPS_PER_BATCH: "16" }, `${stack.database}-convergence`);

  const users: SimUser[] = [];
  const testUsers = new Map<SimUser, TestUser>();
  const devices: SimDevice[] = [];
  const installationIds = new Map<SimDevice, string>();
  for (let u = 0; u < config.users; u++) {
    const testUser = await createTestUser();
    const user: SimUser = { index: u, userId: testUser.userId, ownLists: new Set() };
    users.push(user);
    testUsers.set(user, testUser);
    for (let d = 0; d < config.devicesPerUser; d++) {
      const token = d === 0 ? testUser.token : (await testUser.newSession()).token;
      const installationId = new Prng(config.seed, `u${u}d${d}/installation`).uuid();
      const device = await SimDevice.create({ seed: config.seed, user, index: d, token, network, installationId });
      devices.push(device);
      installationIds.set(device, installationId);
    }
  }

  const churn = new MembershipChurn(users, testUsers, new Prng(config.seed, "membership"));
  await churn.createLists(config.sharedLists);

  // Server-side faults and membership changes at seeded points of the run's progress.
  const plan = new Prng(config.seed, "chaos");
  const events = [
    ...Array.from({ length: config.serverRestarts }, () => ({ at: 0.1 + plan.next() * 0.75, kind: "restart" as const })),
    ...Array.from({ length: config.dbKills }, () => ({ at: 0.05 + plan.next() * 0.85, kind: "db" as const })),
    ...Array.from({ length: config.membershipChanges }, () => ({ at: 0.05 + plan.next() * 0.9, kind: "membership" as const })),
  ].sort((a, b) => a.at - b.at);
  let membershipSteps = 0;
  const totalWrites = config.users * config.devicesPerUser * config.opsPerDevice;
  let written = 0;
  let dbBackendsKilled = 0;
  let running = true;
  const chaosRun = (async () => {
    for (const event of events) {
      while (running && written / totalWrites < event.at) await new Promise((r) => setTimeout(r, 5));
      if (!running) return;
      if (event.kind === "restart") await chaos!.restartMidBatch();
      else if (event.kind === "membership") await churn.step(membershipSteps++);
      else dbBackendsKilled += await chaos!.killDatabaseConnections();
    }
  })();

  try {
    await Promise.all(devices.map((device) => device.run(config.opsPerDevice, config.goOffline, network, () => written++)));
  } finally {
    running = false;
    await chaosRun;
  }
  // Membership changes the run ended before reach the devices in the final syncs.
  while (membershipSteps < config.membershipChanges) await churn.step(membershipSteps++);
  await network.settle();
  await chaos.ready();
  const runSeconds = (Date.now() - started) / 1000;

  // Faults off: sync every device until a whole round pushes nothing. Each
  // round starts once every transaction open before it has ended (the pull's
  // bound is the cluster-wide xmin, which other test files' transactions hold
  // back too), so its pulls see everything committed before it.
  let rounds = 0;
  for (;;) {
    rounds++;
    await settled();
    let acknowledged = 0;
    for (const device of devices) acknowledged += (await device.finalSync()).acknowledged;
    if (acknowledged === 0 && devices.every((d) => d.client.pendingOps().length === 0)) break;
    if (rounds > 10) throw new Error("devices still had ops to push after 10 fault-free rounds");
  }

  const { failures, totals } = await checkConvergence(adminSql, users, testUsers, devices, network, installationIds, churn);
  failures.push(...(await chaos.crashes()));
  if (failures.length > 0) {
    const file = path.join(ROOT, ".cache", "test-logs", `convergence-seed-${config.seed}-trace.txt`);
    await writeFailureHistories(file, failures, devices, churn);
    console.log(`convergence: the failing records' histories are in ${file}`);
  }
  const faults = Object.values(network.faults).reduce((a, b) => a + b, 0);
  const syncErrors = new Map<string, number>();
  for (const device of devices) for (const [code, n] of device.syncErrors) syncErrors.set(code, (syncErrors.get(code) ?? 0) + n);
  const steps = new Map<string, number>();
  for (const device of devices) for (const [step, n] of device.steps) steps.set(step, (steps.get(step) ?? 0) + n);
  const survived = await chaos.survivedUncaughtErrors();
  const result = failures.length === 0 ? "PASS" : "FAIL";
  console.log(
    `convergence: seed=${config.seed} devices=${devices.length} users=${users.length} ops=${devices.reduce((n, d) => n + d.writes, 0)} ` +
      `faults=${faults} duplicates_suppressed=${network.duplicatesSuppressed} conflicts=${totals.conflicts} shared_lists=${churn.lists.length} ` +
      `membership_changes=${membershipSteps} result=${result}`,
  );
  console.log(
    `convergence details: faults=${JSON.stringify(network.faults)} db_backends_killed=${dbBackendsKilled} requests=${network.requests} error_statuses=${JSON.stringify(network.errorStatuses)} ` +
      `ledger_ops=${totals.ledgerOps} applied=${totals.applied} rejected=${totals.rejected} records=${totals.records} discarded_writes_told=${totals.discardedWrites} ` +
      `membership=${JSON.stringify(churn.counts)} steps=${JSON.stringify(Object.fromEntries(steps))} ` +
      `sync_errors=${JSON.stringify(Object.fromEntries(syncErrors))} server_uncaught_errors_survived=${survived.reduce((n, e) => n + e.count, 0)} final_rounds=${rounds} ` +
      `seconds=${((Date.now() - started) / 1000).toFixed(1)} (devices ${runSeconds.toFixed(1)})`,
  );
  for (const { origin, count, logFile } of survived) console.log(`convergence: server ${origin} (×${count}, first in ${logFile})`);
  expect(failures).toEqual([]);
  // The run must actually have exercised what it claims to.
  expect(network.faults.serverRestarts).toBe(config.serverRestarts);
  expect(network.faults.dbKillRounds).toBe(config.dbKills);
  expect(network.duplicatesSuppressed).toBeGreaterThan(0);
  expect(membershipSteps).toBe(config.membershipChanges);
  if (config.membershipChanges >= 4) {
    const { added, readded, demoted, promoted, removed, left } = churn.counts;
    expect({ added: added > 0, readded: readded > 0, demoted: demoted > 0, promoted: promoted > 0, removedOrLeft: removed + left > 0 })
      .toEqual({ added: true, readded: true, demoted: true, promoted: true, removedOrLeft: true });
  }
  // Killed processes and connections are 503s or network errors, never a 500.
  expect(network.errorStatuses[500] ?? 0).toBe(0);
  // Nothing thrown outside a request: each such error, printed above with where it was thrown, is a bug to find.
  expect(survived.map((e) => e.origin)).toEqual([]);
  // Only transient failures may have interrupted a sync.
  expect([...syncErrors.keys()].filter((code) => !["NETWORK", "TIMEOUT", "UNAVAILABLE", "BAD_RESPONSE"].includes(code))).toEqual([]);
}, 900_000);
