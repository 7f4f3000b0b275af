// The RxDB adapter (client/adapters/rxdb) with the real rxdb (memory storage)
// and live replicateRxCollection, through the shared adapter scenario
// (tests/adapters/scenario.ts) against the real function and Postgres.
import { it } from "vitest";
import { runAdapterScenario } from "../adapters/scenario.ts";
import { rxdbDevice } from "../adapters/rxdb-device.ts";

it("RxDB devices of two users end with exactly what each user may see on the server", async () => {
  await runAdapterScenario(rxdbDevice);
}, 180_000);
