// One line that names a loaded model for logs: llama.cpp's description ("qwen2 7B Q4_K - Medium")
// with its size class replaced by the real parameter count where llama.cpp has no class for the
// shape ("llama ?B Q8_0" -> "llama 3.5M Q8_0"). The description itself stays as llama.cpp wrote it:
// saved sessions are checked against it.
import type { ModelInfo } from '../../native/lib/addon.js';

/** 7_615_616_512 -> "7.6B", 494_032_768 -> "494M", 3_514_368 -> "3.5M"; 0 or less -> "". */
export function formatParams(n: number): string {
  if (!(n > 0)) return '';
  const units: Array<[number, string]> = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
  for (const [size, unit] of units) {
    if (n >= size) {
      const v = n / size;
      return `${v >= 100 ? Math.round(v) : Number(v.toPrecision(2))}${unit}`;
    }
  }
  return String(n);
}

export function modelSummary(info: Pick<ModelInfo, 'description' | 'params'>): string {
  const params = formatParams(info.params);
  return info.description.replace(/(^|\s)\?B(?=\s|$)/, (_m, lead: string) => (params ? `${lead}${params}` : ''))
    .replace(/\s{2,}/g, ' ').trim();
}
