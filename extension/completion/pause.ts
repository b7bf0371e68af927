// When automatic inline completions are paused: for this workspace, for some languages, or
// snoozed until a time. Asking explicitly (Strata: Trigger Inline Completion, Alt+\) always works.
// Pure: the store (workspace state, settings, global state) and the clock are injected.

export interface PauseState {
  workspace: boolean;
  /** Language ids (VS Code's, e.g. "python") without automatic completions. */
  languages: string[];
  /** Snoozed until this time (ms since epoch), or null. */
  snoozeUntil: number | null;
}

export interface PauseStore {
  get(): PauseState;
  set(s: PauseState): Promise<void>;
}

export const SNOOZE_MS = 30 * 60_000;

export class CompletionGate {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly store: PauseStore, private readonly now: () => number = Date.now) {}

  /** Whether a completion may be shown now in `languageId`; explicit requests always may. */
  allows(languageId: string, explicit: boolean): boolean {
    return explicit || this.reason(languageId) === null;
  }

  /** Why automatic completions are off for `languageId` (or in general), or null when they are on. */
  reason(languageId?: string): string | null {
    const s = this.store.get();
    if (s.workspace) return 'paused for this workspace';
    const until = s.snoozeUntil;
    if (until !== null && until > this.now()) return `snoozed until ${new Date(until).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}`;
    if (languageId && s.languages.includes(languageId)) return `paused for ${languageId}`;
    return null;
  }

  /** The snooze's end, while it lasts (so a caller can refresh the status then). */
  snoozeEnds(): number | null {
    const until = this.store.get().snoozeUntil;
    return until !== null && until > this.now() ? until : null;
  }

  state(): PauseState {
    return this.store.get();
  }

  pauseWorkspace(): Promise<void> {
    return this.update((s) => ({ ...s, workspace: true }));
  }

  pauseLanguage(languageId: string): Promise<void> {
    return this.update((s) => (s.languages.includes(languageId) ? s : { ...s, languages: [...s.languages, languageId] }));
  }

  snooze(ms = SNOOZE_MS): Promise<void> {
    return this.update((s) => ({ ...s, snoozeUntil: this.now() + ms }));
  }

  /** Turns everything back on (languageId given: only that language's pause). */
  resume(languageId?: string): Promise<void> {
    return this.update((s) => (languageId ? { ...s, languages: s.languages.filter((l) => l !== languageId) } : { workspace: false, languages: [], snoozeUntil: null }));
  }

  onChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Someone else changed the store (the settings editor): tell the listeners. */
  changed(): void {
    for (const l of this.listeners) l();
  }

  private async update(f: (s: PauseState) => PauseState): Promise<void> {
    await this.store.set(f(this.store.get()));
    this.changed();
  }
}
