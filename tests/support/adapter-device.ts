// A phone of a test user for an adapter (tests/adapters: WatermelonDB, RxDB,
// or the core client behind the same interface): a session bound to a new
// installation, the device opened on it and synced once, and the events it
// emits, in order.
import { randomUUID } from "node:crypto";
import { type FetchFunction, TidesyncApi } from "../../client/api-client.ts";
import type { SyncEvent } from "../../client/events.ts";
import type { AdapterDevice, DeviceSetup } from "../adapters/scenario.ts";
import { stack, type TestUser } from "./harness.ts";
import { settled } from "./shared-lists.ts";

export interface AdapterPhoneOptions {
  /** The device's name prefix (a uuid follows). */
  name: string;
  /** The fetch its API sends with (a test's faults or hooks); the global one when absent. */
  fetch?: FetchFunction;
  /** More of the adapter's setup (pull limit, tables, batch caps). */
  setup?: Partial<DeviceSetup>;
}

/** Opens `factory`'s device for `user` on a new registered installation, synced once. */
export async function openDevice<D extends AdapterDevice>(factory: (setup: DeviceSetup) => Promise<D>, user: TestUser, options: AdapterPhoneOptions): Promise<{ device: D; events: SyncEvent[] }> {
  const api = new TidesyncApi({ baseUrl: stack.apiUrl, getAccessToken: () => user.token, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  const events: SyncEvent[] = [];
  const device = await factory({ name: `${options.name}-${randomUUID()}`, api, installationId, onEvent: (event) => events.push(event), ...options.setup });
  await device.sync();
  return { device, events };
}

/** A sync, then another that sees everything committed meanwhile (settled: the server's commits visible to a pull). */
export async function syncTwice(device: { sync(): Promise<void> }): Promise<void> {
  await device.sync();
  await settled();
  await device.sync();
}
