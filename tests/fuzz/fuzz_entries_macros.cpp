// Fuzz entry of project/macros: the C++ reader of macro-call arguments (Python literals). No interpreter.
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/diagnostic.hpp"
#include "fuzz_entries.hpp"
#include "project/macros/macro_arguments.hpp"
#include "sql/reference_scanner.hpp"

namespace sluice::fuzz {

namespace {

const std::string kFile = "pipelines/p/fuzz.sql";

void CheckArgument(const std::string& text, const MacroArgument& argument);

void CheckInvocation(const std::string& text, const MacroInvocation& invocation) {
  Require(invocation.offset < text.size() && text[invocation.offset] == '@',
          "ParseMacroInvocation: an invocation's offset is not its `@`");
  for (const MacroArgument& argument : invocation.positional) CheckArgument(text, argument);
  for (const KeywordArgument& keyword : invocation.keywords) {
    Require(keyword.name != "ctx", "ParseMacroInvocation: a `ctx=` keyword was accepted");
    Require(keyword.offset < text.size(), "ParseMacroInvocation: a keyword offset past the text");
    CheckArgument(text, keyword.value);
  }
}

void CheckArgument(const std::string& text, const MacroArgument& argument) {
  Require(argument.offset < text.size(), "ParseMacroInvocation: an argument offset past the text");
  std::visit(
      [&text](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, ListLiteral> || std::is_same_v<T, TupleLiteral>) {
          for (const MacroArgument& item : value.items) CheckArgument(text, item);
        } else if constexpr (std::is_same_v<T, DictLiteral>) {
          for (const DictEntry& entry : value.entries) {
            CheckArgument(text, entry.key);
            CheckArgument(text, entry.value);
          }
        } else if constexpr (std::is_same_v<T, MacroInvocation>) {
          CheckInvocation(text, value);
        } else if constexpr (std::is_same_v<T, IntLiteral> || std::is_same_v<T, FloatLiteral>) {
          Require(!value.text.empty(), "ParseMacroInvocation: an empty number");
        }
      },
      argument.value);
}

}  // namespace

int FuzzMacroArguments(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr sql::Dialect kDialects[] = {sql::Dialect::kDuckDb, sql::Dialect::kClickHouse, sql::Dialect::kPostgres,
                                        sql::Dialect::kBigQuery};
  sql::Dialect dialect = kDialects[data[0] % 4];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<sql::MacroCall> calls;
  try {
    calls = sql::FindMacroCalls(text, dialect, kFile);
  } catch (const Error& error) {
    CheckRejection(error);
    return 0;
  }
  MacroSqlText sql{kFile, text};
  for (const sql::MacroCall& call : calls) {
    try {
      MacroInvocation invocation = ParseMacroInvocation(sql, call);
      Require(invocation.name == call.name, "ParseMacroInvocation: the name changed");
      CheckInvocation(text, invocation);
      std::vector<const MacroInvocation*> nested;
      CollectNestedInvocations(invocation, nested);
      for (const MacroInvocation* inner : nested) CheckInvocation(text, *inner);
    } catch (const Error& error) {
      CheckRejection(error);
    }
  }
  return 0;
}

}  // namespace sluice::fuzz
