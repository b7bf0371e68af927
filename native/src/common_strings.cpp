// The three string helpers of llama.cpp's common library that json-schema-to-grammar.cpp uses
// (declared in common/common.h). Defined here so the converter links without common.cpp, which
// would pull in the rest of llama.cpp's tool code (arguments, downloads, logging).
#include <string>
#include <vector>

std::string string_join(const std::vector<std::string> & values, const std::string & separator) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += separator;
    out += values[i];
  }
  return out;
}

std::vector<std::string> string_split(const std::string & str, const std::string & delimiter) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end = str.find(delimiter); end != std::string::npos; end = str.find(delimiter, start)) {
    parts.push_back(str.substr(start, end - start));
    start = end + delimiter.size();
  }
  parts.push_back(str.substr(start));
  return parts;
}

std::string string_repeat(const std::string & str, size_t n) {
  std::string out;
  out.reserve(str.size() * n);
  for (size_t i = 0; i < n; ++i) out += str;
  return out;
}
