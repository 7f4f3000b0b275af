// Supabase Auth's JSON Web Key Set, fetched from the project's endpoint: jose's
// remote key set (cache, cooldown, one fetch at a time) with two things added.
// A failed fetch (no answer, an HTTP error or redirect, a body that is not a
// JWK set) is a KeySetUnavailable, which the caller answers 503 (a dependency
// failure, never the token's fault). And the last key set fetched keeps
// serving when a refresh fails (stale-if-error), so a token that verified
// minutes ago does not start failing because the endpoint hiccups after the
// cache expired.
import {
  type CompactJWSHeaderParameters,
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors as joseErrors,
  type FlattenedJWSInput,
  type JWTVerifyGetKey,
} from "jose";

export const REMOTE_KEY_SET = {
  timeoutMs: 3_000,
  /** A fresh set is refetched for an unknown kid at most this often (jose's cooldown). */
  cooldownMs: 30_000,
  /** How long a fetched set counts as current. */
  maxAgeMs: 600_000,
  /** After a failed refresh, the last good set is used without refetching for this long (without one, every request tries). */
  retryAfterFailureMs: 5_000,
  /** The last good set serves while refreshes fail, until it is this old. */
  staleIfErrorMs: 86_400_000,
} as const;

/** The key set could not be fetched: the endpoint's fault, not the token's. */
export class KeySetUnavailable extends Error {
  override name = "KeySetUnavailable";
}

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;

export function createRemoteKeySet(url: URL): JWTVerifyGetKey {
  let lastGood: { keySet: LocalKeySet; fetchedAt: number } | undefined;
  let lastFailure: { error: KeySetUnavailable; at: number } | undefined;

  // Every way the fetch can fail becomes a KeySetUnavailable here, where it is
  // known to be the fetch: jose itself throws the same JOSEError class for a
  // non-200 answer as for other failures.
  async function checkedFetch(input: string, init: RequestInit): Promise<Response> {
    const response = await fetch(input, init).catch((cause) => {
      throw new KeySetUnavailable(`the JWKS endpoint did not answer: ${cause}`, { cause });
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new KeySetUnavailable(`the JWKS endpoint answered ${response.status}`);
    }
    const text = await response.text().catch((cause) => {
      throw new KeySetUnavailable("the JWKS endpoint's answer broke off", { cause });
    });
    let keySet: LocalKeySet;
    try {
      keySet = createLocalJWKSet(JSON.parse(text));
    } catch (cause) {
      throw new KeySetUnavailable("the JWKS endpoint's answer is not a JSON Web Key Set", { cause });
    }
    lastGood = { keySet, fetchedAt: Date.now() };
    return new Response(text, { status: 200, headers: { "content-type": "application/json" } });
  }

  const remote = createRemoteJWKSet(url, {
    timeoutDuration: REMOTE_KEY_SET.timeoutMs,
    cooldownDuration: REMOTE_KEY_SET.cooldownMs,
    cacheMaxAge: REMOTE_KEY_SET.maxAgeMs,
    [customFetch]: checkedFetch,
  });

  // A key the last good set does not hold may have been added since: unknowable
  // while the endpoint fails, so the failure stands (503), not a refusal.
  async function fromLastGood(header: CompactJWSHeaderParameters, token: FlattenedJWSInput, failure: KeySetUnavailable) {
    if (!lastGood || Date.now() - lastGood.fetchedAt > REMOTE_KEY_SET.staleIfErrorMs) throw failure;
    try {
      return await lastGood.keySet(header, token);
    } catch (error) {
      if (error instanceof joseErrors.JWKSNoMatchingKey) throw failure;
      throw error;
    }
  }

  return async (header, token) => {
    // With a key set at hand, the endpoint is spared a fetch per request while it fails; without one,
    // every request tries, so the first after the endpoint is back verifies.
    if (lastGood && lastFailure && Date.now() - lastFailure.at < REMOTE_KEY_SET.retryAfterFailureMs) {
      return fromLastGood(header, token, lastFailure.error);
    }
    try {
      return await remote(header, token);
    } catch (error) {
      if (!(error instanceof KeySetUnavailable)) throw error;
      lastFailure = { error, at: Date.now() };
      return fromLastGood(header, token, error);
    }
  };
}
