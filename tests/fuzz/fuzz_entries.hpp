// The bodies of Sluice's fuzz targets, shared by the libFuzzer mains (fuzz_<target>.cpp, clang build with
// SLUICE_FUZZ=ON) and the GoogleTest replay of tests/fuzz/regressions/<target>/* (regression_test.cpp,
// normal build).
//
// Each entry feeds one input to a public API and returns 0 when the API succeeded or threw sluice::Error
// (the documented way to reject input) that meets CheckRejection. Anything else escapes: another exception
// type, or an InvariantViolation when a result contradicts its header's contract (an offset outside the
// text, tokens out of order …). Under libFuzzer an escaping exception aborts the process, so it is reported
// like a crash.
//
// Inputs whose first byte is a selector (dialect, header keyword, config file) say so below; the rest of
// the input is the text.
//   FuzzHeader          byte % 3 → MODEL / TEST / AUDIT; ParseHeaderBlock on the rest
//   FuzzSqlScan         byte % 4 → dialect; Tokenize + TokenValue, FindReferences, FindMacroCalls
//   FuzzSelect          byte % 4 → dialect; ParseSelect
//   FuzzModel           byte % 4 → dialect; the rest is a model file: ParseModelFile, then the SQL body contract
//                       (CheckModelContract on ContractInputOf)
//   FuzzTomlConfig      byte % 3 → the rest is streambuild_project.toml (then ResolveTarget and
//                       ExpandConnection), streambuild_local.toml beside a fixed project file, or a
//                       pipeline.toml (LoadPipelineConfig); (byte / 3) % 2 flips a mode switch of each
//   FuzzYamlSources     no selector: the whole input is sources/x.yml; LoadSources with templating
//   FuzzSeedCsv         no selector: the whole input is a seed's CSV file; CheckSeedCsv
//   FuzzTemplating      byte: bit 0 → Expand (typed) instead of ExpandString, bit 1 → also CheckTemplateKeys;
//                       the rest split at '\n' into up to three values of the variables a, b, c, then the
//                       text to expand (fixed variables and a fake environment alongside)
//   FuzzMacroArguments  byte % 4 → dialect; FindMacroCalls then ParseMacroInvocation on each call
// The config and sources entries write their input into a temporary project folder created once per
// process (removed at exit).
// Thread-safety: not thread-safe (the file-based entries share the process's temporary folder).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/diagnostic.hpp"
#include "sql/dialect.hpp"

namespace sluice::fuzz {

// A result that breaks its API's documented contract. Deliberately not a sluice::Error.
class InvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The dialect a selector byte chooses (selector % 4).
inline sql::Dialect DialectOf(uint8_t selector) {
  constexpr sql::Dialect kDialects[] = {sql::Dialect::kDuckDb, sql::Dialect::kClickHouse, sql::Dialect::kPostgres,
                                        sql::Dialect::kBigQuery};
  return kDialects[selector % 4];
}

// Throws InvariantViolation(what) unless `condition`.
inline void Require(bool condition, const std::string& what) {
  if (!condition) throw InvariantViolation(what);
}

// The contract of a rejection: at least one diagnostic, each with a stable `SLU-<AREA>-NNN` code, a message,
// a file, and a rendering (FormatDiagnostic) free of control bytes other than newline and tab.
inline void CheckRejection(const Error& error) {
  Require(!error.diagnostics().empty(), "a sluice::Error without a diagnostic");
  for (const Diagnostic& diagnostic : error.diagnostics()) {
    const std::string& code = diagnostic.code;
    size_t dash = code.rfind('-');
    Require(code.rfind("SLU-", 0) == 0 && dash > 4 && code.size() - dash == 4 &&
                code.find_first_not_of("0123456789", dash + 1) == std::string::npos,
            "a diagnostic code that is not SLU-<AREA>-NNN: " + code);
    Require(!diagnostic.message.empty(), code + " without a message");
    Require(diagnostic.location.known(), code + " without a file");
    for (char c : FormatDiagnostic(diagnostic)) {
      unsigned char byte = static_cast<unsigned char>(c);
      Require((byte >= 0x20 && byte != 0x7F) || c == '\n' || c == '\t', code + " renders a control byte");
    }
  }
}

int FuzzHeader(const uint8_t* data, size_t size);
int FuzzSqlScan(const uint8_t* data, size_t size);
int FuzzSelect(const uint8_t* data, size_t size);
int FuzzModel(const uint8_t* data, size_t size);
int FuzzTomlConfig(const uint8_t* data, size_t size);
int FuzzYamlSources(const uint8_t* data, size_t size);
int FuzzSeedCsv(const uint8_t* data, size_t size);
int FuzzTemplating(const uint8_t* data, size_t size);
int FuzzMacroArguments(const uint8_t* data, size_t size);

}  // namespace sluice::fuzz
