// Opens a client on a FakeServer for unit tests: in-memory store unless one
// is given, deterministic ids, and sleeps recorded instead of waited.
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
  const client = await TidesyncClient.open({
    api: new TidesyncApi({ baseUrl: BASE_URL, getAccessToken: () => "test-token", fetch: server.fetch }),
    storage,
    installationId: INSTALLATION_ID,
    generateId: idSequence(overrides.idPrefix ?? 1),
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    backoff: { baseMs: 100, maxMs: 10_000, maxAttempts: 5 },
    ...overrides,
  });
  return { client, storage, sleeps };
}
