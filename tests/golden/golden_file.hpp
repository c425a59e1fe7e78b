// One file of a golden corpus whose cases are an input and its expected rendering (tests/golden/select and
// tests/golden/contract; see tests/golden/README.md):
//
//   # comment lines
//   key: value                      settings, one a line (which keys a corpus takes is the runner's business)
//   --- <name>[: <argument>]        an input section: the lines up to the next `---` line
//   --- expect                      the expected rendering: every line to the end of the file
//
// A section's text is its lines, each ending in '\n'. With SLUICE_GOLDEN_UPDATE=1 the runner rewrites the
// `--- expect` section from the actual output and keeps everything before it byte for byte.
// Thread-safety: plain functions over files; a test reads and rewrites only its own file.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::golden {

struct GoldenSection {
  std::string name;      // `model` in `--- model: a/b.sql`
  std::string argument;  // `a/b.sql`; empty when the line has no `: `
  std::string text;
};

struct GoldenFile {
  std::map<std::string, std::string> settings;  // the preamble's `key: value` lines
  std::vector<GoldenSection> sections;          // the input sections, in file order
  std::string expect;
  std::string head;  // everything before the `--- expect` line
};

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Parses a golden file; a malformed preamble line is a test failure (ADD_FAILURE), not an exception.
inline GoldenFile ParseGoldenFile(const std::string& text) {
  GoldenFile parsed;
  std::istringstream lines(text);
  std::string line;
  bool in_expect = false;
  while (std::getline(lines, line)) {
    if (in_expect) {
      parsed.expect += line + "\n";
      continue;
    }
    if (line == "--- expect") {
      in_expect = true;
      continue;
    }
    parsed.head += line + "\n";
    if (line.rfind("--- ", 0) == 0) {
      std::string directive = line.substr(4);
      size_t colon = directive.find(": ");
      parsed.sections.push_back(colon == std::string::npos
                                    ? GoldenSection{directive, "", ""}
                                    : GoldenSection{directive.substr(0, colon), directive.substr(colon + 2), ""});
      continue;
    }
    if (!parsed.sections.empty()) {
      parsed.sections.back().text += line + "\n";
    } else if (!line.empty() && line[0] != '#') {
      size_t colon = line.find(": ");
      if (colon == std::string::npos) {
        ADD_FAILURE() << "preamble line is neither `# comment` nor `key: value`: " << line;
        continue;
      }
      parsed.settings[line.substr(0, colon)] = line.substr(colon + 2);
    }
  }
  if (!in_expect) ADD_FAILURE() << "no `--- expect` section";
  return parsed;
}

// The `dialect:` setting: duckdb, clickhouse (the default), postgres or bigquery. An unknown dialect or any
// other setting is a test failure (ADD_FAILURE), and the default is returned.
inline std::string DialectSetting(const GoldenFile& golden) {
  const std::string names[] = {"duckdb", "clickhouse", "postgres", "bigquery"};
  std::string dialect = "clickhouse";
  for (const auto& [key, value] : golden.settings) {
    if (key != "dialect") {
      ADD_FAILURE() << "unknown setting: " << key;
    } else if (std::find(std::begin(names), std::end(names), value) == std::end(names)) {
      ADD_FAILURE() << "unknown dialect: " << value;
    } else {
      dialect = value;
    }
  }
  return dialect;
}

// True when SLUICE_GOLDEN_UPDATE=1: the runner rewrites expectations instead of comparing them.
inline bool GoldenUpdateMode() {
  const char* update = std::getenv("SLUICE_GOLDEN_UPDATE");
  return update != nullptr && std::string(update) == "1";
}

// Writes `actual` as the file's `--- expect` section.
inline void RewriteExpect(const std::filesystem::path& path, const GoldenFile& golden, const std::string& actual) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << golden.head << "--- expect\n" << actual;
}

// The stems of the `.test` files of a corpus folder, sorted.
inline std::vector<std::string> CorpusCases(const std::filesystem::path& folder) {
  std::vector<std::string> names;
  for (const auto& item : std::filesystem::directory_iterator(folder)) {
    if (item.path().extension() == ".test") names.push_back(item.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A case's stem as a GoogleTest name ([A-Za-z0-9_]).
inline std::string GoldenTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace sluice::golden
