// A TCP proxy in front of the test database that ends each new connection's
// backend (pg_terminate_backend, a real 57P01 FATAL and close) at the first
// statement the client sends once the startup handshake is over, whatever that
// statement is: the moment a failover or an operator's kill meets a connection
// the pool has just opened. The statement is held, never reaches the backend.
import type postgres from "postgres";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";

export interface FirstStatementKiller extends TcpProxy {
  /** Backends ended so far. */
  killed(): number;
}

const READY_FOR_QUERY = 0x5a; // 'Z'

export async function startFirstStatementKiller(target: { host: string; port: number }, admin: postgres.Sql): Promise<FirstStatementKiller> {
  let killed = 0;
  const proxy = await startTcpProxy(target, (client, upstream) => {
    let started = false;
    let held = false;
    let pending = Buffer.alloc(0);
    upstream.on("data", (chunk: Buffer) => {
      client.write(chunk);
      // Server messages: a type byte and a length that counts itself, not the type.
      pending = Buffer.concat([pending, chunk]);
      while (!started && pending.length >= 5) {
        const length = pending.readUInt32BE(1);
        if (pending.length < 1 + length) break;
        if (pending[0] === READY_FOR_QUERY) started = true;
        pending = pending.subarray(1 + length);
      }
    });
    client.on("data", (chunk: Buffer) => {
      if (!started) {
        upstream.write(chunk);
        return;
      }
      if (held) return;
      held = true;
      void admin`
        select pg_terminate_backend(pid) from pg_stat_activity
         where client_port = ${upstream.localPort!} and client_addr = '127.0.0.1'`.then((rows) => {
        killed += rows.length;
      }, () => {}); // a kill that failed shows as killed() short of what the test expects
    });
  });
  return { ...proxy, killed: () => killed };
}
