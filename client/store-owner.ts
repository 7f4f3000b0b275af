// Whose data a store holds: the user whose token its first sync request went
// out with. Each request of its sync is checked against that user before it is
// sent (RequestGuard.beforeSend, client/api-client.ts) and refused under
// another user's token, so every answer the store takes is one to its owner's
// token, and the owner's queued writes never go out as someone else's. The one
// rule of TidesyncClient and of the WatermelonDB / RxDB adapters.
import { TidesyncStoreOwnerError } from "./api-error.ts";

/**
 * Checks a request about to go out under `user`'s token (null: no token, or not a JWT: the
 * server refuses it anyway) against the store's `owner`. A store without one is claimed by it:
 * `claim` stores `user` unless an owner was stored meanwhile, and returns the owner then.
 * Throws TidesyncStoreOwnerError for another user's token.
 */
export async function checkStoreOwner(user: string | null, owner: string | null, claim: (user: string) => Promise<string>): Promise<void> {
  if (user === null) return;
  const stored = owner ?? (await claim(user));
  if (stored !== user) throw new TidesyncStoreOwnerError(stored, user);
}
