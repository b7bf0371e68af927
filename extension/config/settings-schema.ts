// The strata.* settings as package.json's contributes.configuration declares them: the one source
// of their names, types and defaults (VS Code's settings editor shows the same entries). Pure, so
// the defaults serve tests and settings code alike; test/unit/docs-tables.test.ts checks the
// settings table of docs/user-guide.md against it.
import pkg from '../../package.json' with { type: 'json' };

const PROPERTIES = pkg.contributes.configuration.properties;
type Properties = typeof PROPERTIES;
type Unprefixed<K> = K extends `strata.${infer N}` ? N : never;

/** A setting's name without the `strata.` section (e.g. `inlineCompletion.debounceMs`). */
export type SettingName = Unprefixed<keyof Properties>;
/** A setting's value type, from its default in package.json. */
export type SettingValue<N extends SettingName> = Properties[`strata.${N}`]['default'];

export const SETTING_NAMES = Object.keys(PROPERTIES).map((k) => k.replace(/^strata\./, '')) as SettingName[];

/** The default package.json gives the setting. */
export function settingDefault<N extends SettingName>(name: N): SettingValue<N> {
  return PROPERTIES[`strata.${name}` as keyof Properties].default as SettingValue<N>;
}

/** The whole-number range package.json gives a setting (the server's range for one that becomes a flag). */
export function settingRange(name: SettingName): { min: number; max: number } {
  const p = PROPERTIES[`strata.${name}` as keyof Properties] as { minimum?: number; maximum?: number };
  return { min: p.minimum ?? Number.MIN_SAFE_INTEGER, max: p.maximum ?? Number.MAX_SAFE_INTEGER };
}
