// How figures are written for people, the same in the panel and in the extension (no DOM, no vscode).

/** 1536 -> "1.5 KiB"; null -> "–". */
export function fmtBytes(n: number | null): string {
  if (n === null) return '–';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}
