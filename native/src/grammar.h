// Grammars for constrained sampling: JSON schemas to GBNF with llama.cpp's own converter
// (common/json-schema-to-grammar.cpp, compiled from the pinned source), and GBNF parse checks.
// No llama_context; any thread that may write to stderr for a moment (see SchemaToGrammar).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "grammar_trigger.h"
#include "llama.h"

namespace strata {

struct GrammarSpec {
  // Named JSON schemas (JSON text), each becoming a rule of that name; a schema named "root" is
  // the whole grammar unless `root` is given.
  std::vector<std::pair<std::string, std::string>> schemas;
  // GBNF of the root rule over the schema rules (e.g. a tool-call wrapper), or "".
  std::string root;
};

// GBNF for the spec. Throws std::invalid_argument with the converter's words for what it cannot
// turn into a grammar (an unknown type, an unresolvable $ref, a regex pattern it cannot express),
// also where the converter itself would only warn and accept any string instead.
std::string SchemaToGrammar(const GrammarSpec & spec);

// A grammar sampler for `gbnf` (root rule "root"), or throws std::invalid_argument with llama's
// parse errors. With `lazy`, llama's lazy sampler over the triggers' patterns: it constrains
// nothing until tokens holding a trigger are accepted, then starts the grammar at the trigger's
// first character (SeqSampler feeds it only from there, see grammar_trigger.h). Caller frees it.
llama_sampler * MakeGrammarSampler(const llama_vocab * vocab, const std::string & gbnf, const GrammarTriggers * lazy = nullptr);

}  // namespace strata
