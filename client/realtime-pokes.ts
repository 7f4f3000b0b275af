// Realtime pokes: the server posts a data-free "poke" on a private Supabase
// Realtime Broadcast topic per scope (list) after every committed write of
// its rows, and on a user's own topic after an access change (docs/sync.md,
// migration 20261122060100_realtime_sync_pokes.sql). The client joins the
// topics of the lists it holds and its user topic with supabase-js, pulls
// (debounced) when poked, and keeps polling slowly in case a poke is lost
// (Realtime delivers at most once; a device offline misses them all).
// A poke carries no data: what changed always comes from GET /v1/sync/changes.

/** A Broadcast message as supabase-js hands it to a listener. */
export interface PokeMessage {
  event?: string;
  payload?: unknown;
}

/** The part of a supabase-js RealtimeChannel this uses. */
export interface PokeChannel {
  on(type: "broadcast", filter: { event: string }, callback: (message: PokeMessage) => void): PokeChannel;
  subscribe(callback?: (status: string, error?: Error) => void): unknown;
}

/** The part of a supabase-js SupabaseClient this uses: `channel` and `removeChannel`. */
export interface RealtimeClientLike {
  channel(name: string, options: { config: { private: boolean } }): PokeChannel;
  removeChannel(channel: PokeChannel): unknown;
}

/** The event name of a poke. */
export const POKE_EVENT = "poke";

/** The private topic of a scope (list): its members may join it. */
export function scopeTopic(scopeId: string): string {
  return `tidesync:scope:${scopeId.toLowerCase()}`;
}

/** The private topic of a user: access changes (invited, removed) are poked here. */
export function userTopic(userId: string): string {
  return `tidesync:user:${userId.toLowerCase()}`;
}

export interface PokeListenerOptions {
  /** The signed-in user (their user topic). */
  userId: string;
  /** Pokes within this window make one pull (default 300 ms). */
  debounceMs?: number;
}

export interface PokeListenerDeps {
  realtime: RealtimeClientLike;
  /** Pulls now: waits for a sync under way, then runs a new one (so nothing poked during it is missed). */
  sync: () => Promise<unknown>;
  /** The scope ids the device holds now (the lists whose topics to join). */
  scopeIds: () => Promise<string[]>;
  setTimeout: (callback: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
}

/**
 * Keeps one channel per topic the device should hear, and turns pokes into
 * debounced syncs. `refresh()` after each sync: lists joined or left change
 * the topics.
 */
export class PokeListener {
  private readonly channels = new Map<string, PokeChannel>();
  private timer: unknown = null;
  private running = false;
  /** A poke arrived since the last sync began: sync again when it ends. */
  private dirty = false;
  private stopped = false;

  constructor(private readonly deps: PokeListenerDeps, private readonly options: PokeListenerOptions) {}

  /** The topics joined (for tests and diagnostics). */
  get topics(): string[] {
    return [...this.channels.keys()].sort();
  }

  /** Joins the topics the device should hear now and leaves the others. */
  async refresh(): Promise<void> {
    if (this.stopped) return;
    const wanted = new Set([userTopic(this.options.userId), ...(await this.deps.scopeIds()).map(scopeTopic)]);
    if (this.stopped) return;
    for (const [topic, channel] of this.channels) {
      if (wanted.has(topic)) continue;
      this.channels.delete(topic);
      void this.deps.realtime.removeChannel(channel);
    }
    for (const topic of wanted) {
      if (this.channels.has(topic)) continue;
      const channel = this.deps.realtime.channel(topic, { config: { private: true } })
        .on("broadcast", { event: POKE_EVENT }, () => this.poke());
      this.channels.set(topic, channel);
      channel.subscribe((status) => {
        // Joined (or joined again after a dropped connection): pull what was written meanwhile.
        if (status === "SUBSCRIBED") this.poke();
      });
    }
  }

  /** A poke (or a join): one sync after the debounce window. */
  poke(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.timer !== null || this.running) return;
    this.timer = this.deps.setTimeout(() => void this.run(), this.options.debounceMs ?? 300);
  }

  private async run(): Promise<void> {
    this.timer = null;
    this.running = true;
    this.dirty = false;
    try {
      await this.deps.sync();
    } catch {
      // The client's status shows the failure; the next poke or poll tries again.
    } finally {
      this.running = false;
    }
    if (this.dirty) this.poke();
  }

  /** Leaves every topic and drops a pending pull. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.deps.clearTimeout(this.timer);
    this.timer = null;
    for (const channel of this.channels.values()) void this.deps.realtime.removeChannel(channel);
    this.channels.clear();
  }
}
