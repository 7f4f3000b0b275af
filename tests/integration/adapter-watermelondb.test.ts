// The WatermelonDB adapter (client/adapters/watermelondb) with the real
// @nozbe/watermelondb on LokiJS, through the shared adapter scenario
// (tests/adapters/scenario.ts) against the real function and Postgres.
import { it } from "vitest";
import { runAdapterScenario } from "../adapters/scenario.ts";
import { watermelonDevice } from "../adapters/watermelon-device.ts";

it("WatermelonDB devices of two users end with exactly what each user may see on the server", async () => {
  await runAdapterScenario(watermelonDevice);
}, 180_000);
