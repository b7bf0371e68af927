// How a parent asks `strata` to stop where there is no SIGTERM to send (Windows, where Node's
// kill() ends a process at once). A parent that starts strata with an IPC channel (the
// extension does, on every platform) closes that channel instead, and the command stops as it
// does on SIGTERM: the handlers it registered for SIGTERM run (the server closes its engines and
// exits 0); a command that registered none ends at once, as SIGTERM's default would.
/** The exit code of a command ended by the channel's close without handlers: 128 + SIGTERM's 15, as a shell reports it. */
export const STOPPED_EXIT_CODE = 143;

/** Installs the mapping when this process has an IPC channel; the channel never keeps the process alive. */
export function stopOnChannelClose(proc: NodeJS.Process = process): void {
  if (!proc.channel) return;
  proc.once('disconnect', () => {
    if (proc.listenerCount('SIGTERM') > 0) proc.emit('SIGTERM', 'SIGTERM');
    else proc.exit(STOPPED_EXIT_CODE);
  });
  // A 'disconnect' listener refs the channel; a finished command must still exit by itself.
  proc.channel.unref();
}
