// The WatermelonDB adapter (client/adapters/watermelondb) with the real
// @nozbe/watermelondb on LokiJS, through the shared adapter scenario
// (tests/adapters/scenario.ts) against the real function and Postgres.
import { it } from "vitest";
import { runAdapterScenario, runMidPullResyncScenario } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";

it("WatermelonDB devices of two users end with exactly what each user may see on the server", async () => {
  await runAdapterScenario(watermelonDevice);
}, 180_000);

it("a WatermelonDB device whose cursor is refused on a later page of a pull (410, INVALID_CURSOR) drops what the full sync it starts does not list", async () => {
  await runMidPullResyncScenario(watermelonDevice);
}, 120_000);
