import { describe, expect, it } from 'vitest';
import { formatParams, modelSummary } from '../../backend/models/summary.js';

describe('model summary for logs', () => {
  it('says the parameter count where llama.cpp has no size class ("?B"), or nothing', () => {
    expect(modelSummary({ description: 'llama ?B Q8_0', params: 3_514_368 })).toBe('llama 3.5M Q8_0');
    expect(modelSummary({ description: 'llama ?B Q8_0', params: 0 })).toBe('llama Q8_0');
    expect(modelSummary({ description: 'qwen2 7B Q4_K - Medium', params: 7_615_616_512 })).toBe('qwen2 7B Q4_K - Medium');
  });

  it('formats counts in K, M, B and T with two significant digits', () => {
    expect([formatParams(999), formatParams(1_500), formatParams(494_032_768), formatParams(7_615_616_512), formatParams(1.2e12)])
      .toEqual(['999', '1.5K', '494M', '7.6B', '1.2T']);
    expect(formatParams(0)).toBe('');
  });
});
