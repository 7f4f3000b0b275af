// Realtime pokes on the client (client/realtime-pokes.ts, TidesyncClient.listen)
// against a double of supabase-js' channel API (channel(name, { config: { private } }),
// .on("broadcast", { event }, cb), .subscribe(cb), removeChannel): the device
// joins its user topic and one private topic per list it holds, follows lists
// joined and left, pulls once per burst of pokes (debounced), never loses a
// poke that arrives mid-sync, still polls slowly, and stops cleanly: no timer
// left once stopped or closed, none started by a listen() after close().
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type PokeChannel, type PokeMessage, type RealtimeClientLike, scopeTopic, userTopic } from "../realtime-pokes.ts";
import { FakeServer } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

// The real supabase-js client fits the interface the client asks for (checked by tsc).
const fits: (client: SupabaseClient) => RealtimeClientLike = (client) => client;
void fits;

class ChannelDouble implements PokeChannel {
  readonly handlers: { event: string; callback: (message: PokeMessage) => void }[] = [];
  status: ((status: string, error?: Error) => void) | null = null;
  removed = false;
  constructor(readonly topic: string, readonly options: { config: { private: boolean } }) {}
  on(_type: "broadcast", filter: { event: string }, callback: (message: PokeMessage) => void): PokeChannel {
    this.handlers.push({ event: filter.event, callback });
    return this;
  }
  subscribe(callback?: (status: string, error?: Error) => void): unknown {
    this.status = callback ?? null;
    return this;
  }
  /** Realtime answers the join. */
  joined(): void {
    this.status?.("SUBSCRIBED");
  }
  /** A Broadcast message arrives, as supabase-js hands it to listeners. */
  broadcast(event: string, payload: unknown = { id: "9b1f6c2e-0000-4000-8000-000000000000" }): void {
    for (const h of this.handlers) if (h.event === event) h.callback({ event, payload });
  }
}

class RealtimeDouble implements RealtimeClientLike {
  readonly channels: ChannelDouble[] = [];
  channel(name: string, options: { config: { private: boolean } }): PokeChannel {
    const channel = new ChannelDouble(name, options);
    this.channels.push(channel);
    return channel;
  }
  removeChannel(channel: PokeChannel): unknown {
    (channel as ChannelDouble).removed = true;
    return Promise.resolve("ok");
  }
  open(): ChannelDouble[] {
    return this.channels.filter((c) => !c.removed);
  }
  topics(): string[] {
    return this.open().map((c) => c.topic).sort();
  }
  on(topic: string): ChannelDouble {
    const channel = this.open().find((c) => c.topic === topic);
    if (!channel) throw new Error(`not joined: ${topic}`);
    return channel;
  }
}

const USER = "00000000-0000-4000-8000-00000000a11c";
const LIST = "00000000-0000-4000-8000-0000000001d1";
const SHARED = "00000000-0000-4000-8000-0000000001d2";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

async function listening(options: { pollIntervalMs?: number } = {}) {
  const server = new FakeServer();
  server.write("lists", LIST, { type: "upsert", data: { title: "Mine" } });
  const harness = await openClient(server);
  await harness.client.sync(); // learns the collections (which one is the scope) and the list
  const realtime = new RealtimeDouble();
  const stop = harness.client.listen(realtime, { userId: USER, ...options });
  await vi.advanceTimersByTimeAsync(0);
  const pulls = () => server.requests.filter((r) => r.path === "/v1/sync/changes").length;
  return { server, ...harness, realtime, stop, pulls };
}

describe("realtime pokes", () => {
  it("joins the user's topic and one private topic per list it holds", async () => {
    const { realtime } = await listening();
    expect(realtime.topics()).toEqual([scopeTopic(LIST), userTopic(USER)].sort());
    expect(realtime.open().every((c) => c.options.config.private)).toBe(true);
  });

  it("a burst of pokes makes one pull after the debounce, and the change arrives", async () => {
    const { server, client, realtime, pulls } = await listening();
    for (const channel of realtime.open()) channel.joined();
    await vi.advanceTimersByTimeAsync(1_000);
    const before = pulls();
    server.write("tasks", "00000000-0000-4000-8000-0000000000e1", { type: "upsert", data: { list_id: LIST, title: "From the laptop" } });
    for (let i = 0; i < 5; i++) realtime.on(scopeTopic(LIST)).broadcast("poke");
    expect(pulls()).toBe(before); // nothing before the debounce window closes
    await vi.advanceTimersByTimeAsync(1_000);
    expect(pulls()).toBe(before + 1);
    expect((await client.get("tasks", "00000000-0000-4000-8000-0000000000e1"))?.data?.title).toBe("From the laptop");
  });

  it("ignores other events on the topic", async () => {
    const { realtime, pulls } = await listening();
    await vi.advanceTimersByTimeAsync(1_000);
    const before = pulls();
    realtime.on(scopeTopic(LIST)).broadcast("something-else");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(pulls()).toBe(before);
  });

  it("a poke that arrives during a sync makes another sync after it (nothing missed)", async () => {
    const { server, client, realtime, pulls } = await listening();
    await vi.advanceTimersByTimeAsync(1_000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    server.script = async (request) => {
      if (request.path === "/v1/sync/changes") await gate;
      return undefined;
    };
    realtime.on(scopeTopic(LIST)).broadcast("poke");
    await vi.advanceTimersByTimeAsync(1_000); // the pull is under way, held at the gate
    const during = pulls();
    server.write("tasks", "00000000-0000-4000-8000-0000000000e2", { type: "upsert", data: { list_id: LIST, title: "Written mid-sync" } });
    realtime.on(scopeTopic(LIST)).broadcast("poke");
    server.script = null;
    release();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(pulls()).toBe(during + 1);
    expect((await client.get("tasks", "00000000-0000-4000-8000-0000000000e2"))?.data?.title).toBe("Written mid-sync");
  });

  it("follows the lists: a list shared with the user (poked on their user topic) is joined; a list removed is left", async () => {
    const { server, realtime } = await listening();
    server.write("lists", SHARED, { type: "upsert", data: { title: "Shared" } });
    realtime.on(userTopic(USER)).broadcast("poke");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(realtime.topics()).toContain(scopeTopic(SHARED));
    server.write("lists", SHARED, { type: "delete" });
    realtime.on(userTopic(USER)).broadcast("poke");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(realtime.topics()).toEqual([scopeTopic(LIST), userTopic(USER)].sort());
    expect(realtime.channels.find((c) => c.topic === scopeTopic(SHARED))?.removed).toBe(true);
  });

  it("still polls slowly without pokes, and the returned function stops pokes and polls", async () => {
    const { realtime, pulls, stop } = await listening({ pollIntervalMs: 60_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    const before = pulls();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(pulls()).toBe(before + 1);
    stop();
    expect(realtime.open()).toEqual([]);
    realtime.channels[0].broadcast("poke");
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(pulls()).toBe(before + 1);
  });

  it("a second listen() takes over from the first, and the first's stop function, called later, leaves the second listening and polling", async () => {
    const { client, realtime, pulls, stop: stopFirst } = await listening({ pollIntervalMs: 60_000 });
    const second = new RealtimeDouble(); // a screen mounting again with its own supabase-js client
    const stopSecond = client.listen(second, { userId: USER, pollIntervalMs: 60_000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(realtime.open()).toEqual([]);
    expect(second.topics()).toEqual([scopeTopic(LIST), userTopic(USER)].sort());
    stopFirst(); // the first screen unmounting after the second mounted
    expect(second.topics()).toEqual([scopeTopic(LIST), userTopic(USER)].sort());
    const before = pulls();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(pulls()).toBe(before + 1);
    second.on(userTopic(USER)).broadcast("poke");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(pulls()).toBe(before + 2);
    stopSecond();
    expect(second.open()).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("close() leaves no timer (a pull still debounced, the polling) and a listen() after it joins nothing", async () => {
    const { client, realtime, pulls } = await listening();
    realtime.on(userTopic(USER)).broadcast("poke");
    expect(vi.getTimerCount()).toBe(2); // the debounced pull, the polling
    await client.close();
    expect(vi.getTimerCount()).toBe(0);
    expect(realtime.open()).toEqual([]);
    const before = pulls();
    const stop = client.listen(realtime, { userId: USER });
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(realtime.open()).toEqual([]);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(pulls()).toBe(before);
    stop();
  });
});
