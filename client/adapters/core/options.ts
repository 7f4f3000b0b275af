// What every adapter is configured with, besides its library's own objects.
import type { TidesyncApi } from "../../api-client.ts";
import type { BackoffOptions } from "../../backoff.ts";
import type { SyncEventListener } from "../../events.ts";
import type { ConflictHandler } from "../../rebase.ts";
import type { Sleep } from "../../retry.ts";

export interface AdapterOptions {
  api: TidesyncApi;
  /** The installation id registered with POST /v1/auth/session (sent as device_id). */
  installationId: string;
  /** Conflicts, rejected ops (`op_rejected`: show them), discarded writes, resyncs. What it throws is reported (console.error), not passed on. */
  onEvent?: SyncEventListener;
  /** How a conflict is rebased (default serverWinsPerField: the fields that clashed take the server's values, the rest is sent again). */
  onConflict?: ConflictHandler;
  /** Caps below the server's published batch limits. */
  maxOpsPerBatch?: number;
  maxBodyBytes?: number;
  backoff?: Partial<BackoffOptions>;
  random?: () => number;
  /** The retries' wait (default a timer); `ended` aborts when the wait is cut short: stop the timer then. */
  sleep?: Sleep;
  /** Op ids (default crypto.randomUUID); lower-cased. */
  generateId?: () => string;
}

/** The op id generator of `options`, lower-case whatever the platform's uuids look like. */
export function opIds(options: Pick<AdapterOptions, "generateId">): () => string {
  const generate = options.generateId ?? (() => globalThis.crypto.randomUUID());
  return () => generate().toLowerCase();
}
