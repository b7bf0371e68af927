// File names Windows refuses or reads as something else. A name whose part before the first dot
// is a device (CON, PRN, AUX, NUL, COM0-9, LPT0-9, CONIN$, CONOUT$, in any case) opens that
// device, not a file ("con.session" included); a trailing dot or space is dropped by the file
// system, so "a." and "a" are one file; and <>:"/\|?* and control characters cannot appear.
// Names are compared without case there: "Notes" and "notes" are one file.

const DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i;
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[<>:"/\\|?*\x00-\x1f]/;

/** Why Windows cannot use `name` (one path segment) as a file name, or null when it can. */
export function windowsNameProblem(name: string): string | null {
  if (DEVICE.test(name.split('.')[0]!.trimEnd())) return `'${name.split('.')[0]}' is a device name on Windows`;
  if (/[. ]$/.test(name)) return 'must not end with a dot or a space (Windows drops them)';
  const bad = FORBIDDEN.exec(name);
  if (bad) return `must not contain ${JSON.stringify(bad[0])} (Windows refuses it in a file name)`;
  return null;
}

/**
 * `name` (one path segment, not empty) made safe as a file name on every platform: characters
 * Windows refuses become '_', a trailing dot or space becomes '_', and a device name gets a
 * leading '_'. A name that is already safe comes back unchanged.
 */
export function portableFileName(name: string): string {
  // eslint-disable-next-line no-control-regex
  let out = name.replace(/[<>:"/\\|?*\x00-\x1f]/g, '_').replace(/[. ]$/, '_');
  if (DEVICE.test(out.split('.')[0]!.trimEnd())) out = `_${out}`;
  return out;
}
