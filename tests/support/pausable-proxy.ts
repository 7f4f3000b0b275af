// A TCP proxy the test owns, in front of the test database: `pause()` freezes
// every connection (bytes are held, nothing is answered, sockets stay open),
// as a database stopped with SIGSTOP looks to its clients; `resume()` lets the
// held bytes through and traffic flow again.
import type net from "node:net";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";

export interface PausableProxy extends TcpProxy {
  pause(): void;
  resume(): void;
}

interface Direction {
  from: net.Socket;
  to: net.Socket;
  held: Buffer[];
}

export async function startPausableProxy(target: { host: string; port: number }): Promise<PausableProxy> {
  let paused = false;
  const directions = new Set<Direction>();

  const forward = (direction: Direction) => {
    direction.from.on("data", (chunk: Buffer) => {
      if (paused) direction.held.push(chunk);
      else direction.to.write(chunk);
    });
  };

  const proxy = await startTcpProxy(target, (client, upstream) => {
    const up: Direction = { from: client, to: upstream, held: [] };
    const down: Direction = { from: upstream, to: client, held: [] };
    for (const direction of [up, down]) {
      directions.add(direction);
      direction.from.on("close", () => directions.delete(direction));
      forward(direction);
    }
  });

  return {
    ...proxy,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const direction of directions) {
        for (const chunk of direction.held.splice(0)) direction.to.write(chunk);
      }
    },
  };
}
