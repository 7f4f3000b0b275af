// The RxDB adapter (client/adapters/rxdb) with the real rxdb (memory storage)
// and live replicateRxCollection, through the shared adapter scenario
// (tests/adapters/scenario.ts) against the real function and Postgres.
import { it } from "vitest";
import { runAdapterScenario, runMidPullResyncScenario } from "../adapters/scenario.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";

it("RxDB devices of two users end with exactly what each user may see on the server", async () => {
  await runAdapterScenario(rxdbDevice);
}, 180_000);

it("a RxDB device whose cursor is refused on a later page of a pull (410, INVALID_CURSOR) drops what the full sync it starts does not list", async () => {
  await runMidPullResyncScenario(rxdbDevice);
}, 120_000);
