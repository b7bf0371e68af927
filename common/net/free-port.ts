// A TCP port that is free on 127.0.0.1 right now (the OS picks it; bound and released, so the
// caller should start its server on it at once). Shared by the bench, the extension's server
// launcher and the tests.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('the OS gave no port'))));
    });
  });
}
