// Conversions between JS values and the engine's native types (JS thread only). Parsers throw
// Napi::TypeError / Napi::RangeError naming the offending field and never half-apply.
#pragma once
#include <napi.h>

#include <map>
#include <memory>
#include <vector>

#include "engine_options.h"
#include "engine_snapshot.h"
#include "grammar.h"
#include "request.h"
#include "trace.h"

namespace strata {

// EngineOptions without onEvents.
EngineConfig ParseEngineOptions(const Napi::Object& o);

// A GenerateRequest checked against the model (vocab, slot context) and the live ids; a grammar
// is parsed here (a RangeError says why it does not parse).
// `vision`: the model's projector (null without one), which prepares the request's images.
GenerateRequest ParseRequest(const Napi::Value& v, const ModelInfo& info, const llama_vocab* vocab,
                             const std::map<int64_t, uint64_t>& live, Vision* vision);

// request.images ([{at, data}]) prepared and checked against the prompt's placeholders (every
// negative id in the prompt is one of an image's, in place); sets req.images.
void ParseImages(const Napi::Value& v, Vision* vision, GenerateRequest& req);

// prepareImage: the image decoded and prepared on a worker thread; resolves to {id, tokens, at, n,
// width, height}, rejects with a RangeError for bytes the projector cannot read.
Napi::Promise PrepareImageAsync(Napi::Env env, std::shared_ptr<Vision> vision, const Napi::Uint8Array& data, uint64_t max_pixels);

// An embedding request for an embedding model: each input one step's sequence (at most
// min(ctx, batch) tokens).
EmbedRequest ParseEmbedRequest(const Napi::Value& v, const ModelInfo& info, int32_t batch,
                               const std::map<int64_t, uint64_t>& live);

// GenerateRequest.grammarTriggers: {words?, atStart?, thinking?: {open, close, inside}}.
GrammarTriggers ParseGrammarTriggers(const Napi::Value& v);

// {schemas: {rule: "<JSON schema>"}, root?: "<GBNF>"} (buildGrammar in addon.d.ts).
GrammarSpec ParseGrammarSpec(const Napi::Value& v);

// number[] or Int32Array of token ids in [0, n_vocab). `field` names it in errors. With
// `placeholders`, negative ids pass too (image placeholders, which ParseImages checks).
std::vector<llama_token> ParseTokens(const Napi::Value& v, const char* field, int32_t n_vocab, bool allow_empty,
                                     bool placeholders = false);

Napi::Array EventsToJs(Napi::Env env, const std::vector<EngineEvent>& events);
Napi::Object InfoToJs(Napi::Env env, const ModelInfo& info);
Napi::Object FitReportToJs(Napi::Env env, const FitReport& r);
Napi::Object SnapshotToJs(Napi::Env env, const EngineSnapshot& s);
Napi::Object TracesToJs(Napi::Env env, const std::vector<StepTraceRec>& steps, const std::vector<RequestTraceRec>& reqs);
Napi::Object DeviceToJs(Napi::Env env, const DeviceDesc& d);
Napi::Int32Array TokensToJs(Napi::Env env, const std::vector<llama_token>& tokens);

}  // namespace strata
