// The value kinds of serve settings and their conversion from flags, env and config files;
// shared by the top-level settings (config.ts) and the per-model sections (model-specs.ts).

export class ConfigError extends Error {}

export type Kind =
  | { t: 'string' } | { t: 'int'; min: number; max: number } | { t: 'number'; min: number; max: number }
  | { t: 'enum'; values: readonly string[] } | { t: 'list' } | { t: 'numlist' } | { t: 'bool' };

export function convert(raw: unknown, kind: Kind, where: string): unknown {
  const fail = (what: string): never => { throw new ConfigError(`${where}: ${what}, got ${JSON.stringify(raw)}`); };
  switch (kind.t) {
    case 'string':
      if (typeof raw !== 'string' || raw === 'true' && where.startsWith('--')) fail('expected a value');
      return raw;
    case 'int': case 'number': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      if (!Number.isFinite(n) || (kind.t === 'int' && !Number.isInteger(n))) fail(kind.t === 'int' ? 'expected an integer' : 'expected a number');
      if (n < kind.min || n > kind.max) fail(`must be in [${kind.min}, ${kind.max}]`);
      return n;
    }
    case 'enum':
      if (typeof raw !== 'string' || !kind.values.includes(raw)) fail(`must be one of ${kind.values.join(', ')}`);
      return raw;
    case 'bool':
      if (raw === true || raw === 'true' || raw === '1') return true;
      if (raw === false || raw === 'false' || raw === '0') return false;
      return fail('expected true or false');
    case 'list': {
      const items = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(',') : fail('expected a comma-separated list');
      const list = items.map((s) => s.trim()).filter(Boolean);
      if (list.length === 0) fail('expected at least one item');
      return list;
    }
    case 'numlist': {
      const items = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : fail('expected numbers separated by commas');
      const nums = items.map((s) => Number(typeof s === 'string' ? s.trim() : s));
      if (nums.length === 0 || nums.some((n) => !Number.isFinite(n) || n < 0)) fail('expected non-negative numbers separated by commas');
      return nums;
    }
  }
}


/** --devices: one group ("A,B") split over the replicas, or groups per replica ("A,B/C,D"). */
export function placeDevices(devices: string, replicas: number, replicasGiven: boolean, where: string, replicasWhere: string): { replicas: number; groups: string[][] } {
  const groups = devices.split('/').map((g) => g.split(',').map((d) => d.trim()).filter(Boolean));
  if (groups.some((g) => g.length === 0)) throw new ConfigError(`${where} '${devices}' has an empty device group`);
  if (groups.length > 1) {
    if (replicasGiven && replicas !== groups.length) {
      throw new ConfigError(`${where} names ${groups.length} device groups but ${replicasWhere} is ${replicas}`);
    }
    return { replicas: groups.length, groups };
  }
  const all = groups[0]!;
  if (replicas <= 1) return { replicas, groups: [all] };
  if (all.length % replicas !== 0) {
    throw new ConfigError(`${where} lists ${all.length} devices, which do not divide into ${replicas} replicas (use "/" to group them)`);
  }
  const per = all.length / replicas;
  return { replicas, groups: Array.from({ length: replicas }, (_, i) => all.slice(i * per, (i + 1) * per)) };
}
