// The network between the simulated devices and the real function server:
// a fetch per device that injects faults (dropped requests, lost answers,
// duplicated deliveries, stale copies delivered late, retries overtaking the
// original, offline periods), routes to whichever server process is current
// (a restart moves it to a new port, as a DNS change would), and records what
// went over the wire for the final checks.
import type { FetchFunction } from "../../client/api-client.ts";
import type { SyncBatchRequest, SyncBatchResponse, ChangesResponse, SyncOp, SyncRecord } from "../../functions/_shared/schemas/sync.ts";
import type { Prng } from "./prng.ts";

/** What devices are configured with; the network maps it to the live server. */
export const VIRTUAL_API_URL = "http://tidesync.convergence.invalid/functions/v1/api";

export interface FaultCounts {
  droppedRequests: number;
  lostResponses: number;
  duplicatedDeliveries: number;
  lateReplays: number;
  reorderedRetries: number;
  offlinePeriods: number;
  serverRestarts: number;
  dbKillRounds: number;
}

export interface FaultRates {
  dropRequest: number;
  loseResponse: number;
  duplicate: number;
  replayLater: number;
  reorder: number;
}

/** Per user: every op any of its devices put on the wire, and every record they received. */
export interface UserWire {
  /** op_id → the op's JSON as sent; every attempt of an op must be identical. */
  ops: Map<string, string>;
  /** op_id → position of its first send among all ops of the run (orders the ops of one batch). */
  order: Map<string, number>;
  /** op_ids sent with differing content on different attempts (must stay empty). */
  mutatedOps: Set<string>;
  /** Records in answers to this user's devices (batch results and pulls). */
  received: SyncRecord[];
}

interface Delivery {
  status: number;
  headers: Headers;
  text: string;
}

export class FaultNetwork {
  apiUrl: string;
  readonly faults: FaultCounts = {
    droppedRequests: 0,
    lostResponses: 0,
    duplicatedDeliveries: 0,
    lateReplays: 0,
    reorderedRetries: 0,
    offlinePeriods: 0,
    serverRestarts: 0,
    dbKillRounds: 0,
  };
  /** `duplicate` results the server answered (to devices or to injected copies). */
  duplicatesSuppressed = 0;
  requests = 0;
  private opsSeen = 0;
  /** Deliveries that found no server (restart window) or were cut. */
  deliveryFailures = 0;
  inFlight = 0;
  /** Non-200 answers by status (413s show the client splitting batches, 503s the killed connections). */
  readonly errorStatuses: Record<number, number> = {};
  private readonly background = new Set<Promise<unknown>>();
  readonly wire = new Map<number, UserWire>();

  constructor(apiUrl: string, private readonly rates: FaultRates) {
    this.apiUrl = apiUrl;
  }

  wireOf(userIndex: number): UserWire {
    let wire = this.wire.get(userIndex);
    if (!wire) {
      wire = { ops: new Map(), order: new Map(), mutatedOps: new Set(), received: [] };
      this.wire.set(userIndex, wire);
    }
    return wire;
  }

  /** Waits for every stale copy still travelling. */
  async settle(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  private later(delayMs: number, work: () => Promise<unknown>): void {
    const promise = new Promise((resolve) => setTimeout(resolve, delayMs)).then(work).catch(() => {
      this.deliveryFailures++;
    });
    this.background.add(promise);
    void promise.finally(() => this.background.delete(promise));
  }

  private async deliver(userIndex: number, path: string, init: RequestInit, signal?: AbortSignal | null): Promise<Delivery> {
    this.inFlight++;
    try {
      const response = await fetch(this.apiUrl + path, { method: init.method, headers: init.headers, body: init.body, signal: signal ?? undefined });
      const text = await response.text();
      this.observe(userIndex, path, response.status, text);
      return { status: response.status, headers: response.headers, text };
    } finally {
      this.inFlight--;
    }
  }

  private observe(userIndex: number, path: string, status: number, text: string): void {
    if (status >= 300) this.errorStatuses[status] = (this.errorStatuses[status] ?? 0) + 1;
    if (status !== 200) return;
    const wire = this.wireOf(userIndex);
    if (path.startsWith("/v1/sync/batch")) {
      const body = JSON.parse(text) as SyncBatchResponse;
      for (const result of body.results) {
        if (result.status === "duplicate") this.duplicatesSuppressed++;
        if (result.record) wire.received.push(result.record);
      }
    } else if (path.startsWith("/v1/sync/changes")) {
      wire.received.push(...(JSON.parse(text) as ChangesResponse).changes);
    }
  }

  private recordSentOps(userIndex: number, body: BodyInit | null | undefined): void {
    if (typeof body !== "string") return;
    const batch = JSON.parse(body) as Partial<SyncBatchRequest>;
    if (!Array.isArray(batch.ops)) return;
    const wire = this.wireOf(userIndex);
    for (const op of batch.ops as SyncOp[]) {
      const text = JSON.stringify(op);
      const earlier = wire.ops.get(op.op_id);
      if (earlier !== undefined && earlier !== text) wire.mutatedOps.add(op.op_id);
      if (earlier === undefined) wire.order.set(op.op_id, this.opsSeen++);
      wire.ops.set(op.op_id, text);
    }
  }

  /** The fetch of one device. */
  link(userIndex: number, rng: Prng): DeviceLink {
    return new DeviceLink(this, userIndex, rng);
  }

  /** @internal used by DeviceLink */
  async send(link: DeviceLink, input: string, init: RequestInit): Promise<Response> {
    this.requests++;
    if (!input.startsWith(VIRTUAL_API_URL)) throw new Error(`unexpected URL ${input}`);
    let path = input.slice(VIRTUAL_API_URL.length);
    if (link.offline) throw new TypeError("fetch failed: the device is offline");
    if (path.startsWith("/v1/sync/changes") && !new URL(input).searchParams.has("cursor")) link.fullPulls++;
    if (link.agedCursors && path.startsWith("/v1/sync/changes")) {
      const url = new URL(input);
      const cursor = url.searchParams.get("cursor");
      const filter = url.searchParams.get("collections") ?? "*";
      const aged = link.agedCursors;
      if (cursor && !aged.done.has(filter)) {
        const passed = (aged.passed ??= new Map());
        const through = passed.get(filter) ?? 0;
        if (through < (aged.after ?? 0)) passed.set(filter, through + 1);
        else {
          aged.done.add(filter);
          url.searchParams.set("cursor", await aged.age(cursor));
          path = url.pathname.slice(new URL(VIRTUAL_API_URL).pathname.length) + url.search;
        }
      }
    }
    if (path.startsWith("/v1/sync/batch")) this.recordSentOps(link.userIndex, init.body);
    if (link.loseBatchAnswers > 0 && path.startsWith("/v1/sync/batch")) {
      // Scripted (tests/adapters): delivered and processed, the answer lost.
      link.loseBatchAnswers--;
      this.faults.lostResponses++;
      await this.deliver(link.userIndex, path, init);
      throw new TypeError("fetch failed: connection reset after the request was processed");
    }

    const { rng } = link;
    const roll = link.faultsEnabled ? rng.next() : 1;
    const r = this.rates;
    const toResponse = (d: Delivery) => new Response(d.text, { status: d.status, headers: d.headers });
    let edge = r.dropRequest;
    if (roll < edge) {
      this.faults.droppedRequests++;
      throw new TypeError("fetch failed: request dropped");
    }
    if (roll < (edge += r.loseResponse)) {
      this.faults.lostResponses++;
      await this.deliver(link.userIndex, path, init);
      throw new TypeError("fetch failed: connection reset after the request was processed");
    }
    if (roll < (edge += r.duplicate)) {
      this.faults.duplicatedDeliveries++;
      const [first] = await Promise.all([this.deliver(link.userIndex, path, init, init.signal), this.deliver(link.userIndex, path, init)]);
      return toResponse(first);
    }
    if (roll < (edge += r.replayLater)) {
      this.faults.lateReplays++;
      this.later(rng.int(20, 400), () => this.deliver(link.userIndex, path, init));
      return toResponse(await this.deliver(link.userIndex, path, init, init.signal));
    }
    if (roll < (edge += r.reorder)) {
      // The original is held up; the client gives up on it and retries; the original lands after.
      this.faults.reorderedRetries++;
      this.later(rng.int(150, 600), () => this.deliver(link.userIndex, path, init));
      throw new TypeError("fetch failed: timed out waiting for the server");
    }
    return toResponse(await this.deliver(link.userIndex, path, init, init.signal));
  }
}

export class DeviceLink {
  offline = false;
  faultsEnabled = false;
  /** The next this many pushes reach the server and their answers are lost. */
  loseBatchAnswers = 0;
  /** Pulls sent without a cursor (each starts a full sync). */
  fullPulls = 0;
  /**
   * While set, the first cursor sent for each `collections` filter is replaced
   * by `age(cursor)`, as if the device had held it for long (tests/adapters);
   * with `after: n`, the first one after n cursors of that filter went through
   * (`passed` counts them): n = 1 ages the cursor of a pull's second page.
   */
  agedCursors: { age: (cursor: string) => Promise<string>; done: Set<string>; after?: number; passed?: Map<string, number> } | null = null;

  constructor(private readonly network: FaultNetwork, readonly userIndex: number, readonly rng: Prng) {}

  readonly fetch: FetchFunction = (input, init) => this.network.send(this, input, init);
}
