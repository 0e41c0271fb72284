// The bound on the connections the metrics endpoint holds. At the bound a new connection takes
// the place of the one idle longest (answered, kept alive), else of the one that has waited
// longest for its request; only when every one is being answered is the new one closed, at once.
// Knows sockets and whether a request on them is being answered, not HTTP.
import type { Socket } from 'node:net';

/** What a held connection is doing, and since when (the time it became so). */
type Held = { state: 'waiting' | 'idle'; sinceMs: number } | { state: 'answering'; requests: number };

export class ConnectionSlots {
  private readonly held = new Map<Socket, Held>();
  private readonly now: () => number;

  constructor(
    private readonly maxConnections: number,
    now?: () => number,
  ) {
    this.now = now ?? (() => performance.now());
  }

  /** Connections held now. */
  get size(): number {
    return this.held.size;
  }

  /** A new connection: held, in another's place at the bound; or, when every held one is being answered, closed. Whether it is held. */
  admit(socket: Socket): boolean {
    if (this.held.size >= this.maxConnections) {
      const replaced = this.replaceable();
      if (replaced === undefined) {
        socket.destroy();
        return false;
      }
      this.held.delete(replaced);
      replaced.destroy();
    }
    this.held.set(socket, { state: 'waiting', sinceMs: this.now() });
    socket.once('close', () => this.held.delete(socket));
    return true;
  }

  /** A request on `socket` is being answered: it is not replaced until every answer on it is done. */
  answering(socket: Socket): void {
    const held = this.held.get(socket);
    if (held === undefined) return;
    this.held.set(socket, { state: 'answering', requests: held.state === 'answering' ? held.requests + 1 : 1 });
  }

  /** One answer on `socket` is done (sent, or given up). */
  answered(socket: Socket): void {
    const held = this.held.get(socket);
    if (held?.state !== 'answering') return;
    this.held.set(socket, held.requests > 1 ? { state: 'answering', requests: held.requests - 1 } : { state: 'idle', sinceMs: this.now() });
  }

  /** The connection idle longest, else the one waiting longest for its request; none while all are answering. */
  private replaceable(): Socket | undefined {
    let idle: { socket: Socket; sinceMs: number } | undefined;
    let waiting: { socket: Socket; sinceMs: number } | undefined;
    for (const [socket, held] of this.held) {
      if (held.state === 'idle' && (idle === undefined || held.sinceMs < idle.sinceMs)) idle = { socket, sinceMs: held.sinceMs };
      if (held.state === 'waiting' && (waiting === undefined || held.sinceMs < waiting.sinceMs)) waiting = { socket, sinceMs: held.sinceMs };
    }
    return (idle ?? waiting)?.socket;
  }
}
