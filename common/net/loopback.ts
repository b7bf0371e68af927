// Which host names are this machine's loopback: the server's access check and the Hub client's
// "plain http only to loopback" rule share it.
const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(host: string): boolean {
  return loopbackHosts.has(host.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(host);
}
