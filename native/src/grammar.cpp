#include "grammar.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>

#include "json-schema-to-grammar.h"
#include "llama_log.h"

namespace strata {

namespace {

// Both llama.cpp parts report details only on stderr: the converter what it could not express (a
// warning, "JSON schema conversion was incomplete", after which it accepts any string there, so
// output would not validate), the GBNF parser why a grammar does not parse. Captured around the
// call to turn them into errors; other lines pass through.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = file_ ? ::dup(STDERR_FILENO) : -1;
    if (saved_ >= 0) ::dup2(::fileno(file_), STDERR_FILENO);
  }
  ~StderrCapture() { Release(); }
  // Restores stderr and returns what was written meanwhile.
  std::string Release() {
    std::string text;
    if (saved_ < 0) return text;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
    std::rewind(file_);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) text.append(buf, n);
    std::fclose(file_);
    file_ = nullptr;
    return text;
  }

 private:
  std::FILE * file_ = nullptr;
  int saved_ = -1;
};

std::mutex g_capture_mu;  // one capture at a time (stderr is process-wide)

// Removes the line that starts with `mark` from `captured`; returns its text after the mark, or "".
std::string TakeLine(std::string & captured, const std::string & mark) {
  const size_t at = captured.find(mark);
  if (at == std::string::npos) return "";
  size_t end = captured.find('\n', at);
  if (end == std::string::npos) end = captured.size();
  std::string line = captured.substr(at + mark.size(), end - at - mark.size());
  captured.erase(at, end - at + (end < captured.size() ? 1 : 0));
  return line;
}

}  // namespace

std::string SchemaToGrammar(const GrammarSpec & spec) {
  if (spec.schemas.empty()) throw std::invalid_argument("no schema given");
  std::vector<std::pair<std::string, common_json>> parsed;
  for (const auto & [name, text] : spec.schemas) {
    try {
      parsed.emplace_back(name, common_json::parse(text));
    } catch (const std::exception & e) {
      throw std::invalid_argument("schema '" + name + "' is not valid JSON: " + e.what());
    }
  }
  std::lock_guard<std::mutex> lock(g_capture_mu);
  StderrCapture capture;
  std::string gbnf;
  std::string error;
  try {
    gbnf = build_grammar([&](const common_grammar_builder & b) {
      for (auto & [name, schema] : parsed) {
        b.resolve_refs(schema);
        // A primitive schema becomes a rule named after its type ("integer"): alias it to the name.
        const std::string rule = b.add_schema(name, schema);
        if (name != "root" && rule != name) b.add_rule(name, rule);
      }
      if (!spec.root.empty()) b.add_rule("root", spec.root);
    });
  } catch (const std::exception & e) {
    error = e.what();
  }
  std::string captured = capture.Release();
  const std::string warning = TakeLine(captured, "WARNING: JSON schema conversion was incomplete: ");
  if (!captured.empty()) std::fputs(captured.c_str(), stderr);
  if (!error.empty()) throw std::invalid_argument(error);
  if (!warning.empty()) throw std::invalid_argument(warning);
  return gbnf;
}

llama_sampler * MakeGrammarSampler(const llama_vocab * vocab, const std::string & gbnf, const GrammarTriggers * lazy) {
  if (gbnf.empty()) throw std::invalid_argument("the grammar is empty");
  std::vector<std::string> patterns;
  std::vector<const char *> pattern_ptrs;
  if (lazy) {
    patterns = TriggerPatterns(*lazy);
    if (patterns.empty()) throw std::invalid_argument("a lazy grammar needs at least one trigger");
    for (const auto & p : patterns) pattern_ptrs.push_back(p.c_str());
  }
  LlamaLogCapture log;
  std::lock_guard<std::mutex> lock(g_capture_mu);
  StderrCapture capture;
  llama_sampler * s = lazy
      ? llama_sampler_init_grammar_lazy_patterns(vocab, gbnf.c_str(), "root", pattern_ptrs.data(), pattern_ptrs.size(), nullptr, 0)
      : llama_sampler_init_grammar(vocab, gbnf.c_str(), "root");
  std::string captured = capture.Release();
  if (s) {
    if (!captured.empty()) std::fputs(captured.c_str(), stderr);
    return s;
  }
  // The parser prints its reason, then a blank line and the whole grammar: keep only the reason.
  std::string why = TakeLine(captured, "parse: error parsing grammar: ");
  if (why.empty()) why = log.Errors();
  throw std::invalid_argument("the grammar does not parse" + (why.empty() ? std::string() : ": " + why));
}

}  // namespace strata
