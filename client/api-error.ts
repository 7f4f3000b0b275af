// The errors the client raises. Apps branch on `code` (stable) and
// `retryable`, never on messages:
//   TidesyncApiError      the server answered with the error envelope (api-v1.md)
//   TidesyncNetworkError  no answer: offline, connection reset, timeout — the
//                         request may or may not have reached the server
//   TidesyncResponseError an answer that is not the contract (e.g. a proxy's
//                         HTML 502 page, or a body the zod schema refuses)
//   TidesyncValidationError a local write refused before it is queued (the
//                         same collection schemas the server validates with)
//   TidesyncStoreOwnerError sync() refused: the device's store holds another
//                         user's data (signed out, someone else signed in)
//   TidesyncStoreAccountError sync() refused: the store holds an earlier
//                         account's data (the same user id, created again)
//   TidesyncAbortedError  cancelled: client.close() (sign-out), or the signal
//                         a TidesyncApi was given
//   TidesyncStoreWrittenElsewhereError a WholeStateStorage refused a write:
//                         another instance (a second tab) wrote the store since
// CLIENT_FAILURE (status only) is anything else, e.g. the storage adapter failing.
import type { ErrorCode, FieldDetail } from "../functions/_shared/errors.ts";

/** The codes the client gives besides the server's (client/README.md lists each). */
export const CLIENT_ONLY_CODES = ["NETWORK", "TIMEOUT", "BAD_RESPONSE", "CLIENT_FAILURE", "STORE_OF_ANOTHER_USER", "STORE_OF_EARLIER_ACCOUNT", "STORE_WRITTEN_ELSEWHERE", "ABORTED"] as const;
export type ClientErrorCode = ErrorCode | typeof CLIENT_ONLY_CODES[number];

export abstract class TidesyncError extends Error {
  abstract readonly code: ClientErrorCode;
  abstract readonly retryable: boolean;
}

export class TidesyncApiError extends TidesyncError {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  /** Seconds from the Retry-After header (429, 503), if sent. */
  readonly retryAfter: number | undefined;
  readonly details: FieldDetail[] | undefined;
  /** X-Request-Id of the failed request: quote it when reporting a problem. */
  readonly requestId: string | undefined;

  constructor(init: { code: ErrorCode; message: string; status: number; retryable: boolean; retryAfter?: number; details?: FieldDetail[]; requestId?: string }) {
    super(init.message);
    this.name = "TidesyncApiError";
    this.code = init.code;
    this.status = init.status;
    this.retryable = init.retryable;
    this.retryAfter = init.retryAfter;
    this.details = init.details;
    this.requestId = init.requestId;
  }
}

export class TidesyncNetworkError extends TidesyncError {
  readonly code: "NETWORK" | "TIMEOUT";
  readonly retryable = true;

  constructor(code: "NETWORK" | "TIMEOUT", message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "TidesyncNetworkError";
    this.code = code;
  }
}

export class TidesyncResponseError extends TidesyncError {
  readonly code = "BAD_RESPONSE" as const;
  readonly status: number;
  /** A gateway's 5xx/429 page is worth retrying; a malformed 2xx body is not. */
  readonly retryable: boolean;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;

  constructor(init: { message: string; status: number; retryAfter?: number; requestId?: string; cause?: unknown }) {
    super(init.message, { cause: init.cause });
    this.name = "TidesyncResponseError";
    this.status = init.status;
    this.retryable = init.status === 429 || init.status >= 500;
    this.retryAfter = init.retryAfter;
    this.requestId = init.requestId;
  }
}

/** Seconds the server asked to wait, where the error carries it. */
export function retryAfterOf(error: unknown): number | undefined {
  if (error instanceof TidesyncApiError || error instanceof TidesyncResponseError) return error.retryAfter;
  return undefined;
}

export function isRetryable(error: unknown): boolean {
  return error instanceof TidesyncError && error.retryable;
}

/** A write the client refuses before queueing it: it would be rejected by the server anyway. */
export class TidesyncValidationError extends TidesyncError {
  readonly code = "VALIDATION_FAILED" as const;
  readonly retryable = false;

  constructor(message: string, readonly details: FieldDetail[]) {
    super(message);
    this.name = "TidesyncValidationError";
  }
}

/**
 * sync() refused: the store holds the data of the user who first synced it (`storeUserId`), not
 * of the one whose token a request was about to carry (at the start of a sync, or at any request
 * of one under way when the user switched). Nothing was sent under that token, and the owner's
 * queued writes stay for them; open a store of the signed-in user's own (client/README.md,
 * "Signing out").
 */
export class TidesyncStoreOwnerError extends TidesyncError {
  readonly code = "STORE_OF_ANOTHER_USER" as const;
  readonly retryable = false;

  constructor(readonly storeUserId: string, readonly userId: string) {
    super(`this store holds the data of user ${storeUserId}, not of the signed-in user ${userId}: open a store of their own`);
    this.name = "TidesyncStoreOwnerError";
  }
}

/**
 * sync() refused: the store holds the data of an earlier account with the same user id (deleted,
 * then created again: auth.admin.createUser({ id })), bound to it by its creation time
 * (`storeAccountCreatedAt`; the signed-in one's is `accountCreatedAt`). Nothing was sent under the
 * new account's token: the earlier account's queued writes (pendingOps()) stay in the store for
 * the app to export, before it deletes the store (SyncStorage.destroy) or opens another one for
 * the new account (client/README.md, "Signing out").
 */
export class TidesyncStoreAccountError extends TidesyncError {
  readonly code = "STORE_OF_EARLIER_ACCOUNT" as const;
  readonly retryable = false;

  constructor(readonly userId: string, readonly storeAccountCreatedAt: string, readonly accountCreatedAt: string) {
    super(`this store holds the data of the account ${userId} created at ${storeAccountCreatedAt}, not of the signed-in account with that id created at ${accountCreatedAt}: open a new store`);
    this.name = "TidesyncStoreAccountError";
  }
}

/**
 * A WholeStateStorage refused a change, writing nothing: the stored state is no longer the one this
 * instance read or last wrote, because another instance on the same data (a second browser tab, a
 * second JS context) wrote it since. Each instance keeps the whole state in memory and writes it
 * whole, so writing would have overwritten the other's writes. This instance refuses every change
 * from then on: open the store again, in one instance only (client/README.md, "Your own store").
 */
export class TidesyncStoreWrittenElsewhereError extends TidesyncError {
  readonly code = "STORE_WRITTEN_ELSEWHERE" as const;
  readonly retryable = false;

  /** `unsaved`: the store holds no stamp though this instance wrote one, which is what a `persist` that does not save it leaves too. */
  constructor(why: "overwritten" | "unsaved" = "overwritten") {
    super(why === "unsaved"
      ? "the stored state has no stamp though this instance wrote one: either its persist() does not save the stamp (save next.stamp, or change.stamp for a store that saves only what changed) or another instance (a second tab or JS context) wrote the store without one; nothing was written"
      : "another instance (a second tab or JS context) wrote this store since this one read it; nothing was written: a WholeStateStorage takes one writer at a time, open the store again in one instance only");
    this.name = "TidesyncStoreWrittenElsewhereError";
  }
}

/**
 * Cancelled: no request is sent once its signal is aborted (client.close() on sign-out), and one
 * under way is abandoned, its answer unread: a batch's ops stay queued as sent and go out again,
 * unchanged, on the next sync of the store.
 */
export class TidesyncAbortedError extends TidesyncError {
  readonly code = "ABORTED" as const;
  readonly retryable = false;

  constructor(options: { cause?: unknown } = {}) {
    super("cancelled (the client was closed)", { cause: options.cause });
    this.name = "TidesyncAbortedError";
  }
}
