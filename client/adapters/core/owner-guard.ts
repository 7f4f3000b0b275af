// What an adapter sends with: the app's API guarded as the core client's is
// (TidesyncApi.guarded, client/api-client.ts). Each authenticated request
// checks the database's owner and account first (client/store-owner.ts: the
// account whose token its first request went out with, kept in the database
// next to the adapter's outbox), so a sync still running when the user
// switches sends nothing under the new user's token and takes no answer meant
// for them, and an earlier account's unsent writes never go out as a later
// account's with the same id; and nothing is sent once `signal` aborts
// (WatermelonTidesync.close(), RxDB's cancel()), a request under way is
// abandoned and the retry waits end (their timers stopped).
import type { TidesyncApi } from "../../api-client.ts";
import { unlessAborted } from "../../abortable.ts";
import { TidesyncAbortedError } from "../../api-error.ts";
import { Mutex } from "../../mutex.ts";
import { type RetryOptions, retryOptions } from "../../retry.ts";
import { type StoreBinding, StoreGuard } from "../../store-owner.ts";
import type { KeyValueStore } from "./key-value.ts";
import type { AdapterOptions } from "./options.ts";

/** The user whose data the database holds. */
export const OWNER_KEY = "tidesync.owner";
/** Which account of the owner's id (its account_created_at; absent in databases from before it). */
export const OWNER_ACCOUNT_KEY = "tidesync.owner_account";

/** The adapter's API and retry options: bound to the owner `store` records, and given up when `signal` aborts. */
export function ownerGuarded(options: AdapterOptions, store: KeyValueStore, signal: AbortSignal): { api: TidesyncApi; retry: RetryOptions } {
  /** This adapter object's copy (a new one per sync in Watermelon): read from the database until it holds an owner. */
  let binding: StoreBinding = { owner: null, account: null };
  const read = async (): Promise<StoreBinding> =>
    (binding = { owner: (await store.get<string>(OWNER_KEY)) ?? null, account: (await store.get<string>(OWNER_ACCOUNT_KEY)) ?? null });
  const claims = new Mutex();
  const guard = new StoreGuard({
    api: options.api,
    binding: () => binding.owner === null ? read() : binding,
    read,
    write: async (changed) => {
      if (signal.aborted) throw new TidesyncAbortedError();
      if (changed.owner !== undefined) await store.set(OWNER_KEY, changed.owner);
      if (changed.account !== undefined) await store.set(OWNER_ACCOUNT_KEY, changed.account);
      binding = { ...binding, ...changed };
    },
    lock: (work) => claims.run(work),
  });
  const retry = retryOptions(options);
  const { sleep } = retry;
  return {
    api: options.api.guarded({ beforeSend: (user, token, session) => guard.check(user, token, session), signal }),
    retry: { ...retry, sleep: (ms, ended) => unlessAborted(sleep(ms, ended), signal) },
  };
}
