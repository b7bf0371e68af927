// The recently used model files, newest first, kept in extension storage.
export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

const KEY = 'strata.recentModels';

export class RecentModels {
  constructor(private readonly store: KeyValueStore, private readonly max = 8) {}

  list(): string[] {
    return this.store.get<string[]>(KEY) ?? [];
  }

  async add(path: string): Promise<void> {
    await this.store.update(KEY, [path, ...this.list().filter((p) => p !== path)].slice(0, this.max));
  }

  async remove(path: string): Promise<void> {
    await this.store.update(KEY, this.list().filter((p) => p !== path));
  }
}
