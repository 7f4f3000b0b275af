// Opens a client on a FakeServer for unit tests: in-memory store unless one
// is given, deterministic ids, and sleeps recorded instead of waited (the
// client's clocks move by them, as they would when they are really waited: the
// Retry-After gate measures time with the monotonic one).
import { TidesyncApi } from "../api-client.ts";
import { MemoryStorage, type SyncStorage } from "../storage.ts";
import { TidesyncClient, type TidesyncClientOptions } from "../sync-client.ts";
import { BASE_URL, type FakeServer, idSequence, INSTALLATION_ID } from "./fake-server.ts";

export interface TestClient {
  client: TidesyncClient;
  storage: SyncStorage;
  /** Every backoff delay the client asked for, ms (nothing really waits). */
  sleeps: number[];
}

export async function openClient(server: FakeServer, overrides: Partial<TidesyncClientOptions> & { storage?: SyncStorage; idPrefix?: number } = {}): Promise<TestClient> {
  const storage = overrides.storage ?? new MemoryStorage();
  const sleeps: number[] = [];
  let clock = Date.now();
  const client = await TidesyncClient.open({
    api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
    storage,
    installationId: INSTALLATION_ID,
    generateId: idSequence(overrides.idPrefix ?? 1),
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
    now: () => new Date(clock),
    monotonicNow: () => clock,
    backoff: { baseMs: 100, maxMs: 10_000, maxAttempts: 5 },
    ...overrides,
  });
  return { client, storage, sleeps };
}
