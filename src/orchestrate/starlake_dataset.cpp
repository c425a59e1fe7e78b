#include "orchestrate/starlake_dataset.hpp"

#include "core/utf8.hpp"

namespace sluice::orchestrate {

namespace {

bool KeptAsIs(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace

std::string SanitizeId(std::string_view id) {
  std::string out;
  out.reserve(id.size());
  size_t at = 0;
  while (at < id.size()) {
    const char c = id[at];
    if (c == '$') {
      out += 'S';
      ++at;
    } else if (KeptAsIs(c)) {
      out += c;
      ++at;
    } else {
      out += '_';
      const size_t length = Utf8SequenceLength(id, at);
      at += length == 0 ? 1 : length;
    }
  }
  return out;
}

std::string DatasetUri(std::string_view sink) {
  std::string uri = SanitizeId(sink);
  for (char& c : uri) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return uri;
}

}  // namespace sluice::orchestrate
