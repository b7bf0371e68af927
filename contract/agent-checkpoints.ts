// Restore to here, as the extension plans it and the panel shows it before anything changes.

export type RestoreAction = 'write' | 'delete' | 'recreate';

export interface RestoreFileView {
  /** Workspace-relative path. */
  path: string;
  /** write: back to earlier content; delete: the agent created it; recreate: it was deleted since. */
  action: RestoreAction;
  /** Unified diff from the file as it is now to what it goes back to. */
  diff: string;
  /** The file changed since the agent's last change to it (by the user, a formatter, a command): it is left alone. */
  conflict: boolean;
}

export interface RestorePlanView {
  chatId: string;
  stepId: string;
  files: RestoreFileView[];
  /** Commands that ran after this point: their effects cannot be undone. */
  commands: string[];
  /** Why there is nothing to restore (an unknown checkpoint), else null. */
  error: string | null;
}

export interface RestoreResultView {
  chatId: string;
  stepId: string;
  /** Paths put back (written, deleted or recreated). */
  restored: string[];
  /** Paths left as they are, with why. */
  conflicts: Array<{ path: string; reason: string }>;
  error: string | null;
}
