// Whose data a store holds: the account whose token its first sync request
// went out with. An account is a user id and, since an account may be deleted
// and created again with the same id (auth.admin.createUser({ id })), which
// account of that id: its creation time, as GET /v1/whoami tells it. Each
// request of a store's sync is checked against that binding before it is sent
// (RequestGuard.beforeSend, client/api-client.ts) and refused under another
// user's token (TidesyncStoreOwnerError) or another account's
// (TidesyncStoreAccountError), so every answer the store takes is one to its
// owner's token, and the owner's queued writes never go out as someone
// else's, nor as a later account's with the same id. The one rule of
// TidesyncClient and of the WatermelonDB / RxDB adapters.
import type { TidesyncApi } from "./api-client.ts";
import { TidesyncStoreAccountError, TidesyncStoreOwnerError } from "./api-error.ts";
import { tokenIdentity } from "./token-subject.ts";

/**
 * What a store is bound to: its owner's user id, and which account of that id (its
 * `account_created_at`; null: not known yet, in a store from before it or one never synced).
 */
export interface StoreBinding {
  owner: string | null;
  account: string | null;
}

export interface StoreGuardOptions {
  /** The app's API, unguarded: asks GET /v1/whoami about the token being checked. */
  api: TidesyncApi;
  /** The binding as this client knows it (its copy, once it has one), read without the lock. */
  binding: () => StoreBinding | Promise<StoreBinding>;
  /** The binding as stored, read under the lock (another client of the store may have bound it meanwhile). */
  read: () => Promise<StoreBinding>;
  /** Stores the parts of the binding that change (under the lock). */
  write: (changed: { owner?: string; account?: string }) => Promise<void>;
  /** Runs a first binding's read and write whole (a pull and a push may ask at once). */
  lock: <T>(work: () => Promise<T>) => Promise<T>;
}

/**
 * The account of each session asked about, by API base URL (two deployments may serve one
 * process), a token's user and `session_id` (or the token itself without one): a Supabase session
 * belongs to one account for good, so GET /v1/whoami is asked once per session in this process,
 * whatever the number of clients and adapter objects, also by checks at once (they share the ask;
 * a failed one is forgotten, and the next check asks again).
 */
const sessionAccounts = new Map<string, Promise<string | null>>();
/** Sessions remembered at most (the oldest go first): a process sees few. */
const MAX_SESSIONS = 100;

/** Checks each request about to go out against the store's binding; a store without one is bound by it. */
export class StoreGuard {
  /** The sessions found to be of the store's account (by this guard: nothing left to check). */
  private readonly checked = new Set<string>();

  constructor(private readonly options: StoreGuardOptions) {}

  /**
   * Checks a request about to go out under `token` (whose `sub` is `user` and `session_id`
   * `session`; user null: no token, or not a JWT: the server refuses it anyway). Throws
   * TidesyncStoreOwnerError for another user's token and TidesyncStoreAccountError for another
   * account's with the same id.
   */
  async check(user: string | null, token: string | null, session: string | null): Promise<void> {
    if (user === null || token === null) return;
    // Another user's token is refused without a request.
    const { owner } = await this.options.binding();
    if (owner !== null && owner !== user) throw new TidesyncStoreOwnerError(owner, user);
    const key = `${this.options.api.baseUrl} ${user}:${session ?? token}`;
    if (this.checked.has(key)) return;
    let asked = sessionAccounts.get(key);
    if (asked === undefined) {
      // A server before account_created_at: the user id is all there is to check.
      asked = this.options.api.whoamiWith(token).then((whoami) => whoami.account_created_at ?? null);
      if (sessionAccounts.size >= MAX_SESSIONS) sessionAccounts.delete(sessionAccounts.keys().next().value!);
      sessionAccounts.set(key, asked);
      asked.catch(() => {
        if (sessionAccounts.get(key) === asked) sessionAccounts.delete(key);
      });
    }
    const account = await asked;
    const stored = await this.bind(user, account);
    if (stored.owner !== user) throw new TidesyncStoreOwnerError(stored.owner ?? user, user);
    if (account !== null && stored.account !== null && stored.account !== account) {
      throw new TidesyncStoreAccountError(user, stored.account, account);
    }
    this.checked.add(key);
  }

  /**
   * Stores `user` and `account` where the store has none yet (nothing stored meanwhile by another
   * client of the store), and returns what the store is bound to then. Once stored, neither part
   * changes: only a store's first check (or its account's) takes the lock and writes.
   */
  private async bind(user: string, account: string | null): Promise<StoreBinding> {
    const known = await this.options.binding();
    const bound = boundOver(known, user, account);
    if (bound.owner === known.owner && bound.account === known.account) return known;
    return await this.options.lock(async () => {
      const stored = await this.options.read();
      const next = boundOver(stored, user, account);
      if (next.owner !== stored.owner || next.account !== stored.account) {
        await this.options.write({ ...(next.owner === stored.owner ? {} : { owner: next.owner! }), ...(next.account === stored.account ? {} : { account: next.account! }) });
      }
      return next;
    });
  }

  /** Checks the current token of `api` (the guarded one): at the start of a sync, before anything is sent. */
  async checkCurrent(api: TidesyncApi): Promise<void> {
    const token = await api.accessToken();
    const identity = token === null ? null : tokenIdentity(token);
    await this.check(identity?.user ?? null, token, identity?.session ?? null);
  }
}

/** The binding to store over `stored`: each part set once, the account only with its owner. */
function boundOver(stored: StoreBinding, user: string, account: string | null): StoreBinding {
  const owner = stored.owner ?? user;
  return { owner, account: stored.account ?? (owner === user ? account : null) };
}
