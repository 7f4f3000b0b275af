// The adapters' own durable state (the pull cursor, the ops sent but not yet
// answered) lives in the app's database, next to its records, behind this
// interface: Watermelon's `database.localStorage`, RxDB's local documents.
export interface KeyValueStore {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
}
