// Open client connections and whether each is answering a request, so that shutdown can
// close idle ones at once (Node's closeIdleConnections misses a connection that never sent
// a request) and the rest as soon as their answer is out.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export class ConnectionTracker {
  private readonly active = new Map<Socket, number>();

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.active.set(socket, 0);
      socket.once('close', () => this.active.delete(socket));
    });
    server.on('request', (req, res) => {
      const socket = req.socket;
      this.active.set(socket, (this.active.get(socket) ?? 0) + 1);
      let done = false;
      const finished = () => {
        if (done) return;
        done = true;
        if (this.active.has(socket)) this.active.set(socket, Math.max(0, (this.active.get(socket) ?? 1) - 1));
      };
      res.once('finish', finished);
      res.once('close', finished);
    });
  }

  get open(): number { return this.active.size; }

  /** Destroys connections with no request in progress. */
  closeIdle(): void {
    for (const [socket, n] of this.active) if (n === 0) socket.destroy();
  }

  closeAll(): void {
    for (const socket of this.active.keys()) socket.destroy();
  }
}
