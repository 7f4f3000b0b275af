// Shared lists and who is in them, changed while the devices work: what an
// app does through the Data API (PostgREST runs it as `authenticated` with
// the caller's claims; tests/support/shared-lists.ts does the same). Owners
// invite (invite + accept), demote and promote (update the member's role)
// and remove members; members leave; removed members are invited again.
// Every member a list ever had is remembered for the "never another user's
// data" check.
import type { TestUser } from "../support/harness.ts";
import { asUser, isLockVictim, removeMember, share } from "../support/shared-lists.ts";
import type { Prng } from "./prng.ts";
import type { SimUser } from "./sim-device.ts";

type Role = "owner" | "editor" | "viewer";

/**
 * Runs a Data API call again when Postgres chose it as a deadlock or
 * serialization victim, as an app retries a failed supabase-js call: with
 * the devices' pushes on the same lists, a lock cycle is rare but possible.
 */
async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isLockVictim(error) || attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

export interface SharedList {
  id: string;
  owner: SimUser;
  /** user index → current role (owner included). */
  members: Map<number, Role>;
}

export interface ChurnCounts {
  added: number;
  readded: number;
  demoted: number;
  promoted: number;
  removed: number;
  left: number;
}

export class MembershipChurn {
  readonly lists: SharedList[] = [];
  readonly counts: ChurnCounts = { added: 0, readded: 0, demoted: 0, promoted: 0, removed: 0, left: 0 };
  /** user index → every list id the user was ever a member of (their own lists aside). */
  readonly everMember = new Map<number, Set<string>>();
  private readonly removedOnce = new Set<string>();
  /** Every change, in order, with its time (printed with a failing record's history). */
  readonly log: string[] = [];

  constructor(private readonly users: SimUser[], private readonly testUsers: Map<SimUser, TestUser>, private readonly rng: Prng) {
    for (const user of users) this.everMember.set(user.index, new Set());
  }

  /** `count` lists, list k owned by user k, shared with every other user (some as viewers). */
  async createLists(count: number): Promise<void> {
    for (let k = 0; k < count; k++) {
      const owner = this.users[k % this.users.length];
      const id = this.rng.uuid();
      await asUser(this.testUsers.get(owner)!, (tx) => tx`insert into public.lists (id, title, position) values (${id}, ${`shared ${k}`}, ${k})`);
      const list: SharedList = { id, owner, members: new Map([[owner.index, "owner"]]) };
      this.lists.push(list);
      this.everMember.get(owner.index)!.add(id);
      for (const user of this.users) {
        if (user !== owner) await this.add(list, user, (user.index + k) % 3 === 0 ? "viewer" : "editor");
      }
    }
  }

  private async add(list: SharedList, user: SimUser, role: Role): Promise<void> {
    await retried(() => share(this.testUsers.get(list.owner)!, list.id, this.testUsers.get(user)!, role));
    list.members.set(user.index, role);
    this.log.push(`${new Date().toISOString()} u${user.index} added to ${list.id} as ${role}`);
    this.everMember.get(user.index)!.add(list.id);
    const key = `${list.id}/${user.index}`;
    if (this.removedOnce.has(key)) this.counts.readded++;
    else this.counts.added++;
  }

  private async setRole(list: SharedList, user: SimUser, role: Role): Promise<void> {
    await retried(() => asUser(this.testUsers.get(list.owner)!, (tx) =>
      tx`update public.list_members set role = ${role} where list_id = ${list.id} and user_id = ${user.userId}`));
    list.members.set(user.index, role);
    this.log.push(`${new Date().toISOString()} u${user.index} made ${role} of ${list.id}`);
    if (role === "viewer") this.counts.demoted++;
    else this.counts.promoted++;
  }

  private async remove(list: SharedList, user: SimUser): Promise<void> {
    // The owner removes the member, or the member leaves (deletes their own row).
    const leaves = this.rng.chance(0.3);
    await retried(() => removeMember(this.testUsers.get(leaves ? user : list.owner)!, list.id, this.testUsers.get(user)!));
    list.members.delete(user.index);
    this.log.push(`${new Date().toISOString()} u${user.index} ${leaves ? "left" : "removed from"} ${list.id}`);
    this.removedOnce.add(`${list.id}/${user.index}`);
    if (leaves) this.counts.left++;
    else this.counts.removed++;
  }

  /**
   * One change of membership. The first four on the first list walk one
   * member through demotion, removal, re-adding and promotion, so every kind
   * happens in every run; the rest are drawn at random.
   */
  async step(n: number): Promise<void> {
    if (this.lists.length === 0 || this.users.length < 2) return;
    const scripted = this.lists[0];
    const subject = this.users.find((u) => u !== scripted.owner)!;
    if (n < 4) {
      if (!scripted.members.has(subject.index)) await this.add(scripted, subject, "editor");
      if (n === 0) await this.setRole(scripted, subject, "viewer");
      else if (n === 1) await this.remove(scripted, subject);
      else if (n === 2) await this.add(scripted, subject, "viewer");
      else await this.setRole(scripted, subject, "editor");
      return;
    }
    const list = this.rng.pick(this.lists);
    const user = this.rng.pick(this.users.filter((u) => u !== list.owner));
    const role = list.members.get(user.index);
    if (role === undefined) await this.add(list, user, this.rng.chance(0.7) ? "editor" : "viewer");
    else if (this.rng.chance(0.45)) await this.remove(list, user);
    else await this.setRole(list, user, role === "viewer" ? "editor" : "viewer");
  }
}
