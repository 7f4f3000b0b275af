// The sync collections a client may use. Filled in by the sync module.
export function collectionNames(): string[] {
  return [];
}
