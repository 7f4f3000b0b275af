// What an adapter sends with: the app's API guarded as the core client's is
// (TidesyncApi.guarded, client/api-client.ts). Each authenticated request
// checks the database's owner first (client/store-owner.ts: the user whose
// token its first request went out with, kept in the database next to the
// adapter's outbox), so a sync still running when the user switches sends
// nothing under the new user's token and takes no answer meant for them; and
// nothing is sent once `signal` aborts (WatermelonTidesync.close(), RxDB's
// cancel()), a request under way is abandoned and the retry waits end.
import type { TidesyncApi } from "../../api-client.ts";
import { unlessAborted } from "../../abortable.ts";
import { TidesyncAbortedError } from "../../api-error.ts";
import { Mutex } from "../../mutex.ts";
import { type RetryOptions, retryOptions } from "../../retry.ts";
import { checkStoreOwner } from "../../store-owner.ts";
import type { KeyValueStore } from "./key-value.ts";
import type { AdapterOptions } from "./options.ts";

/** The user whose data the database holds. */
export const OWNER_KEY = "tidesync.owner";

/** The adapter's API and retry options: bound to the owner `store` records, and given up when `signal` aborts. */
export function ownerGuarded(options: AdapterOptions, store: KeyValueStore, signal: AbortSignal): { api: TidesyncApi; retry: RetryOptions } {
  let owner: string | null = null;
  /** A first claim is read and written whole (a pull and a push may ask at once). */
  const claims = new Mutex();
  const claim = (user: string) =>
    claims.run(async () => {
      owner = (await store.get<string>(OWNER_KEY)) ?? null;
      if (owner !== null) return owner;
      if (signal.aborted) throw new TidesyncAbortedError();
      await store.set(OWNER_KEY, user);
      return (owner = user);
    });
  const retry = retryOptions(options);
  const { sleep } = retry;
  return {
    api: options.api.guarded({ beforeSend: (user) => checkStoreOwner(user, owner, claim), signal }),
    retry: { ...retry, sleep: (ms) => unlessAborted(sleep(ms), signal) },
  };
}
