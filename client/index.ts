// The public API of the tidesync client (see client/README.md). Works in
// React Native/Expo, browsers and Node: only fetch and Web Crypto. The
// file-backed store for Node is a separate entry point, client/storage-file.ts,
// so bundles for other platforms never pull in Node built-ins.
export {
  type AccessTokenGetter,
  type ApiResult,
  type ChangesParams,
  type FetchFunction,
  type RequestGuard,
  TidesyncApi,
  type TidesyncApiOptions,
  type VersionedPreferences,
} from "./api-client.ts";
export {
  type ClientErrorCode,
  isRetryable,
  TidesyncAbortedError,
  TidesyncApiError,
  TidesyncError,
  TidesyncNetworkError,
  TidesyncResponseError,
  TidesyncStoreAccountError,
  TidesyncStoreOwnerError,
  TidesyncStoreWrittenElsewhereError,
  TidesyncValidationError,
} from "./api-error.ts";
export type { Feedback, FeedbackRequest, UpdateCheckResponse } from "../functions/_shared/schemas/releases.ts";
export { type BackoffOptions, backoffDelayMs, DEFAULT_BACKOFF, parseRetryAfter } from "./backoff.ts";
export { type BatchBounds, batchBoundsOf, fittingCount, jsonBytes, type ScopeFields, scopeFieldsOf, splitIntoBatches } from "./batching.ts";
export type { CollectionsUnavailableEvent, ConflictEvent, OpRejectedEvent, ResyncEvent, SyncEvent, SyncEventListener, WriteDiscardedEvent } from "./events.ts";
export type { LocalRecord } from "./local-view.ts";
export { enqueueOp } from "./outbox.ts";
export { type PokeChannel, PokeListener, type PokeMessage, type RealtimeClientLike, scopeTopic, userTopic } from "./realtime-pokes.ts";
export { type ConflictHandler, type ConflictInfo, type ConflictResolution, serverWinsPerField } from "./rebase.ts";
export type { StatusListener, SyncState, SyncStatus } from "./status.ts";
export {
  type DeviceState,
  MemoryStorage,
  type PendingOp,
  type RecordData,
  type RecordRef,
  type ServerSchema,
  StaleStoreError,
  StateMaps,
  type StorageChange,
  type StoredState,
  type SyncStorage,
  WholeStateStorage,
} from "./storage.ts";
export { type SqliteDatabase, SqliteStorage, type SqliteStorageOptions, type SqlValue, userTablePrefix } from "./storage-sqlite.ts";
export { type SyncReport, TidesyncClient, type TidesyncClientOptions } from "./sync-client.ts";
