// What features need from the server side: its status, a client when it is ready, and a way to
// get it ready. Features depend on this interface, never on the manager class.
import type { StrataClient } from '../client/client.js';
import type { ServerView } from '../../contract/panel.js';

export type ServerStatus = ServerView;

export interface ServerConnection {
  readonly status: ServerStatus;
  onDidChange(listener: (s: ServerStatus) => void): { dispose(): void };
  /** A client for the server when it is ready, else undefined (callers then say so or skip). */
  readonly client: StrataClient | undefined;
  /** Starts the server if needed (may ask the user, e.g. for a model) and resolves with a client. */
  ensureReady(): Promise<StrataClient>;
}

export interface ServerControl extends ServerConnection {
  start(): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
}
