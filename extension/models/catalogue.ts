// The models Strata: Choose Models offers per role: a short list of Hub repositories known to
// suit each role, smallest first. Sizes are not written here: they come from the repository's
// file list when the user picks one, so they are the Hub's own.
export type CatalogueRole = 'chat' | 'completion' | 'nextEdit' | 'embedding' | 'rerank';

export interface CatalogueEntry {
  role: CatalogueRole;
  /** ORG/REPO on the Hub. */
  repo: string;
  label: string;
  /** What it is good for, shown under its name. */
  detail: string;
  /** The quantisation offered first (the others are listed too). */
  quant: string | null;
}

/** The setting each role's choice is written to. */
export const ROLE_SETTING = {
  chat: 'chatModel', completion: 'completionModel', nextEdit: 'nextEditModel', embedding: 'embeddingModel', rerank: 'rerankModel',
} as const satisfies Record<CatalogueRole, string>;

export const ROLE_TITLE: Record<CatalogueRole, string> = {
  chat: 'Chat and agent', completion: 'Inline completion', nextEdit: 'Next-edit suggestions', embedding: 'Codebase search (embeddings)', rerank: 'Codebase search (reranker)',
};

export const CATALOGUE: readonly CatalogueEntry[] = [
  { role: 'completion', repo: 'ggml-org/Qwen2.5-Coder-0.5B-Q8_0-GGUF', label: 'Qwen2.5-Coder 0.5B', detail: 'fill-in-the-middle base model; fast on any CPU', quant: 'Q8_0' },
  { role: 'completion', repo: 'ggml-org/Qwen2.5-Coder-1.5B-Q8_0-GGUF', label: 'Qwen2.5-Coder 1.5B', detail: 'fill-in-the-middle base model; the usual choice on a laptop', quant: 'Q8_0' },
  { role: 'completion', repo: 'ggml-org/Qwen2.5-Coder-3B-Q8_0-GGUF', label: 'Qwen2.5-Coder 3B', detail: 'fill-in-the-middle base model; better with a GPU', quant: 'Q8_0' },
  { role: 'completion', repo: 'ggml-org/Qwen2.5-Coder-7B-Q8_0-GGUF', label: 'Qwen2.5-Coder 7B', detail: 'fill-in-the-middle base model; wants a GPU with 10 GB', quant: 'Q8_0' },
  { role: 'chat', repo: 'Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF', label: 'Qwen2.5-Coder 1.5B Instruct', detail: 'chat about code; small and quick, simple agent tasks', quant: 'Q4_K_M' },
  { role: 'chat', repo: 'Qwen/Qwen2.5-Coder-7B-Instruct-GGUF', label: 'Qwen2.5-Coder 7B Instruct', detail: 'chat and agent with tool calls', quant: 'Q4_K_M' },
  { role: 'chat', repo: 'Qwen/Qwen2.5-Coder-14B-Instruct-GGUF', label: 'Qwen2.5-Coder 14B Instruct', detail: 'chat and agent; wants a GPU with 12 GB', quant: 'Q4_K_M' },
  { role: 'nextEdit', repo: 'lmstudio-community/zeta-GGUF', label: 'Zeta', detail: 'Zed\'s next-edit model (Qwen2.5-Coder 7B tuned for edit prediction); wants a GPU with 8 GB', quant: 'Q4_K_M' },
  { role: 'embedding', repo: 'nomic-ai/nomic-embed-text-v1.5-GGUF', label: 'nomic-embed-text v1.5', detail: 'small text and code embeddings', quant: 'Q8_0' },
  { role: 'embedding', repo: 'Qwen/Qwen3-Embedding-0.6B-GGUF', label: 'Qwen3-Embedding 0.6B', detail: 'multilingual embeddings, code included', quant: 'Q8_0' },
  { role: 'rerank', repo: 'gpustack/bge-reranker-v2-m3-GGUF', label: 'bge-reranker v2 m3', detail: 'reorders codebase search hits', quant: 'Q8_0' },
];
