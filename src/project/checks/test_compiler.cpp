// SQL tests (`tests/**/*.sql`): TEST blocks → CTEs → model assembly → one comparison statement per test.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "core/file_system.hpp"
#include "definitions/model_sql.hpp"
#include "project/checks/check_files.hpp"
#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::checks {

namespace {

using sql::Token;
using sql::TokenKind;

constexpr std::string_view kRefPrefix = "__ref__";
constexpr std::string_view kSourcePrefix = "__source__";
constexpr std::string_view kExpectedPrefix = "__expected__";
constexpr std::string_view kAssertPrefix = "__assert__";
constexpr std::string_view kMacroActual = "__macro_actual__";
constexpr std::string_view kMacroExpected = "__macro_expected__";
constexpr std::string_view kModelPrefix = "__model__";
constexpr std::string_view kMacroTargetPrefix = "macro ";
// How many unmocked models one test may inline in a row (each one reading the next); the models are
// assembled recursively, so this also bounds the recursion.
constexpr size_t kMaxInlinedChain = 256;

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

std::string Joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

// Leading blank lines and trailing whitespace removed; the first line keeps its indentation.
std::string TrimBlankLines(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string_view::npos) return {};
  size_t line = text.find_last_of('\n', first);
  text.remove_prefix(line == std::string_view::npos ? 0 : line + 1);
  size_t last = text.find_last_not_of(" \t\r\n\f\v");
  return std::string(text.substr(0, last + 1));
}

std::string Describe(const Token* token) {
  if (token == nullptr) return "the end of the test";
  constexpr size_t kShown = 40;
  std::string text(token->text.substr(0, kShown));
  return "`" + text + (token->text.size() > kShown ? "…" : "") + "`";
}

// ---------------------------------------------------------------------------------------------------------
// Parsing: TEST header and `WITH <ctes> SELECT 1`.

struct TestCte {
  std::string name;       // unquoted
  std::string name_text;  // as written (used in the compiled SQL)
  size_t name_offset = 0;
  size_t body_begin = 0;  // inside the parentheses
  size_t body_end = 0;
  ExpandedSql sql;  // the body after macro expansion (filled once the CTE kinds are checked)
};

struct ParsedTest {
  std::string name;
  size_t at = 0;  // the TEST keyword, or the name value when given
  size_t block_at = 0;  // the TEST keyword
  bool named = false;
  TestMode mode = TestMode::kModel;
  std::optional<Date> partition;  // the `partition` key: the day the partition bounds render
  size_t partition_at = 0;         // its value
  std::vector<TestCte> ctes;
};

void ApplyTestHeader(const CheckFile& file, const HeaderBlock& header, ParsedTest& test) {
  for (const HeaderEntry& entry : header.entries) {
    const auto* text = std::get_if<std::string>(&entry.value.value);
    if (entry.key == "name") {
      if (text == nullptr || TrimSpace(*text).empty()) {
        file.Fail(entry.value.offset, "SLU-TEST-001",
                  "TEST `name` must be a non-empty string, not " + DescribeHeaderValue(entry.value),
                  R"(e.g. TEST (name "orders keep their totals");)");
      }
      test.name = CheckedName(*text);
      if (test.name.empty()) {
        file.Fail(entry.value.offset, "SLU-TEST-004", "test name '" + *text + "' cannot be used as a file name",
                  "leave out `/`, `\\` and control characters");
      }
      test.named = true;
      test.at = entry.value.offset;
    } else if (entry.key == "mode") {
      if (text != nullptr && *text == "model") {
        test.mode = TestMode::kModel;
      } else if (text != nullptr && *text == "macro") {
        test.mode = TestMode::kMacro;
      } else {
        file.Fail(entry.value.offset, "SLU-TEST-001", "TEST `mode` must be model or macro",
                  "write mode model (the default) or mode macro");
      }
    } else if (entry.key == "partition") {
      std::optional<Date> day = text != nullptr ? Date::Parse(*text) : std::nullopt;
      if (!day || day->ToString() != *text) {
        file.Fail(entry.value.offset, "SLU-TEST-001",
                  "TEST `partition` must be a day written \"YYYY-MM-DD\", not " + DescribeHeaderValue(entry.value),
                  R"(e.g. TEST (partition "2026-03-01"); the tested models' partition bounds render that day)");
      }
      test.partition = day;
      test.partition_at = entry.value.offset;
    } else {
      file.Fail(entry.key_offset, "SLU-TEST-001", "unknown TEST key '" + entry.key + "'",
                "TEST takes `name`, `mode` and `partition`");
    }
  }
}

}  // namespace

size_t MatchingParenthesis(const std::vector<Token>& tokens, size_t open, size_t end) {
  int depth = 0;
  for (size_t i = open; i < end; ++i) {
    if (IsPunctuation(tokens[i], "(")) ++depth;
    if (IsPunctuation(tokens[i], ")") && --depth == 0) return i;
  }
  return tokens.size();
}

bool IsName(const Token& token) { return token.kind == TokenKind::kWord || token.kind == TokenKind::kQuotedIdentifier; }

namespace {

std::vector<TestCte> ParseTestBody(const CheckFile& file, const SqlBlock& block, sql::Dialect dialect) {
  const std::vector<Token>& tokens = block.tokens;
  auto at = [&](size_t i) -> const Token* { return i < tokens.size() ? &tokens[i] : nullptr; };
  size_t end_offset = tokens.empty() ? block.body_begin : tokens.back().end;
  auto offset_of = [&](const Token* token) { return token ? token->begin : end_offset; };
  const std::string shape_hint = "write WITH __ref__x AS (SELECT …), __expected__m AS (SELECT …) SELECT 1";

  if (at(0) == nullptr || !IsWord(*at(0), "WITH")) {
    file.Fail(offset_of(at(0)), "SLU-TEST-002", "a test is `WITH <ctes> SELECT 1`, found " + Describe(at(0)),
              shape_hint);
  }
  std::vector<TestCte> ctes;
  size_t i = 1;
  while (true) {
    const Token* name = at(i);
    if (name == nullptr || !IsName(*name)) {
      bool macro = name != nullptr && name->text == "@";
      file.Fail(offset_of(name), "SLU-TEST-002", "expected a CTE name, found " + Describe(name),
                macro ? "macro calls are allowed only inside CTE bodies" : shape_hint);
    }
    TestCte cte;
    cte.name = sql::TokenValue(*name, dialect);
    cte.name_text = std::string(name->text);
    cte.name_offset = name->begin;
    const Token* as = at(i + 1);
    if (as != nullptr && IsPunctuation(*as, "(")) {
      file.Fail(as->begin, "SLU-TEST-002", "CTE column lists are not supported in tests",
                "name the columns inside the SELECT: " + cte.name_text + " AS (SELECT 1 AS id)");
    }
    if (as == nullptr || !IsWord(*as, "AS")) {
      file.Fail(offset_of(as), "SLU-TEST-002",
                "expected `AS` after CTE name " + cte.name_text + ", found " + Describe(as),
                "write " + cte.name_text + " AS (SELECT …)");
    }
    const Token* open = at(i + 2);
    if (open == nullptr || !IsPunctuation(*open, "(")) {
      file.Fail(offset_of(open), "SLU-TEST-002",
                "expected `(` after `" + cte.name_text + " AS`, found " + Describe(open),
                "write " + cte.name_text + " AS (SELECT …)");
    }
    size_t close = MatchingParenthesis(tokens, i + 2, tokens.size());
    if (close == tokens.size()) {
      file.Fail(open->begin, "SLU-TEST-002", "the `(` of CTE " + cte.name_text + " is never closed",
                "add the missing `)`");
    }
    if (close == i + 3) {
      file.Fail(open->begin, "SLU-TEST-002", "CTE " + cte.name_text + " has an empty body",
                "write " + cte.name_text + " AS (SELECT …)");
    }
    cte.body_begin = open->end;
    cte.body_end = tokens[close].begin;
    ctes.push_back(std::move(cte));
    const Token* next = at(close + 1);
    i = close + 2;
    if (next != nullptr && IsPunctuation(*next, ",")) continue;
    if (next != nullptr && IsWord(*next, "SELECT")) break;
    file.Fail(offset_of(next), "SLU-TEST-002",
              "expected `,` or the final `SELECT 1` after CTE " + ctes.back().name_text + ", found " + Describe(next),
              shape_hint);
  }
  const Token* one = at(i);
  if (one == nullptr || one->kind != TokenKind::kNumber || one->text != "1") {
    file.Fail(offset_of(one), "SLU-TEST-002",
              "a test ends with the ceremonial `SELECT 1`, found `SELECT` " + Describe(one),
              "end the test with SELECT 1");
  }
  size_t after = i + 1;
  if (at(after) != nullptr && IsPunctuation(*at(after), ";")) ++after;
  if (at(after) != nullptr) {
    file.Fail(at(after)->begin, "SLU-TEST-002", "unexpected " + Describe(at(after)) + " after `SELECT 1`",
              "start another test with TEST (…); at the beginning of a line");
  }
  return ctes;
}

std::vector<ParsedTest> ParseTestFile(const CheckFile& file, sql::Dialect dialect) {
  std::vector<SqlBlock> blocks = SplitBlocks(file, "TEST", dialect);
  std::vector<ParsedTest> tests;
  for (const SqlBlock& block : blocks) {
    ParsedTest test;
    test.at = block.header.begin;
    test.block_at = block.header.begin;
    ApplyTestHeader(file, block.header, test);
    if (!test.named) {
      if (blocks.size() > 1) {
        file.Fail(block.header.begin, "SLU-TEST-003", "this file has several TEST blocks, so each needs a name",
                  R"(write TEST (name "…");)");
      }
      test.name = CheckedName(std::filesystem::path(file.file).stem().string());
      if (test.name.empty()) {
        file.Fail(block.header.begin, "SLU-TEST-004", "the file name cannot name the test",
                  R"(write TEST (name "…");)");
      }
    }
    test.ctes = ParseTestBody(file, block, dialect);
    std::set<std::string> seen;
    for (const TestCte& cte : test.ctes) {
      if (!seen.insert(cte.name).second) {
        file.Fail(cte.name_offset, "SLU-TEST-005", "CTE " + cte.name_text + " is defined twice in this test",
                  "give each CTE its own name");
      }
    }
    tests.push_back(std::move(test));
  }
  return tests;
}

// Reserved, foreign and suffix-less names, common to both modes.
void CheckCteName(const CheckFile& file, const TestCte& cte) {
  static const std::set<std::string_view> kReserved = {"__actual", "__expected__typed", "__actual__projected",
                                                       "__missing__", "__unexpected__"};
  static const std::set<std::string_view> kForeign = {"__udf_actual__", "__udf_expected__", "__table_fn_actual__",
                                                      "__table_fn_expected__"};
  static const std::string_view kForeignPrefixes[] = {"__macro__", "__seed__", "__dbt_ref__"};
  const std::string& name = cte.name;
  if (kReserved.count(name) || StartsWith(name, kModelPrefix) || StartsWith(name, kCasePrefix)) {
    file.Fail(cte.name_offset, "SLU-TEST-006", "CTE name " + cte.name_text + " is reserved for compiled tests",
              "rename the CTE; names starting with __model__ or __case_ are reserved too");
  }
  bool foreign = kForeign.count(name) > 0;
  for (std::string_view prefix : kForeignPrefixes) foreign = foreign || StartsWith(name, prefix);
  if (foreign) {
    file.Fail(cte.name_offset, "SLU-TEST-006", "CTE " + cte.name_text + " is not a Sluice test CTE",
              "tests use __ref__, __source__, __expected__, __assert__, __macro_actual__ and __macro_expected__");
  }
  for (std::string_view prefix : {kRefPrefix, kSourcePrefix, kExpectedPrefix, kAssertPrefix}) {
    if (name == prefix) {
      file.Fail(cte.name_offset, "SLU-TEST-006", "CTE " + cte.name_text + " needs a name after " + std::string(prefix),
                std::string(prefix) + "<name>");
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Compiling one parsed test.

class TestCompiler {
 public:
  TestCompiler(const ChecksInput& input, const ModelIndex& models, const CheckFile& file, ParsedTest& test,
               std::vector<Diagnostic>& warnings)
      : input_(input), models_(models), file_(file), test_(test), warnings_(warnings) {
    for (const std::string& source : input.sources) sources_.insert(source);
  }

  TestSpec Compile() {
    for (const TestCte& cte : test_.ctes) CheckCteName(file_, cte);
    TestSpec spec;
    spec.name = test_.name;
    spec.file = file_.file;
    spec.at = LocationAt(file_.file, file_.text, test_.block_at);
    spec.mode = test_.mode;
    if (test_.mode == TestMode::kModel) {
      CompileModelMode(spec);
    } else {
      CompileMacroMode(spec);
    }
    std::string folder = spec.targets.empty()       ? spec.name
                         : spec.targets.size() == 1 ? spec.targets.front()
                                                    : "_chain_/" + Joined(spec.targets, "__");
    spec.path = "compiled/tests/" + folder + "/" + spec.name + ".sql";
    return spec;
  }

 private:
  struct Mock {
    const TestCte* cte = nullptr;
    bool used = false;
  };

  // A CTE of the compiled statement and the CTEs it reads.
  struct Node {
    std::string name;       // unquoted, for dependency matching
    std::string name_text;  // as written
    std::string text;
    std::vector<std::string> reads;
  };

  void Expand(TestCte& cte) {
    cte.sql = ExpandRange(file_, cte.body_begin, cte.body_end, input_.dialect, input_.expand_macros, "SLU-TEST-017",
                          /*scan_references=*/true, /*keep_partition_bounds=*/true);
  }

  // ---- The window: the one day whose bounds `@partition_start()` / `@partition_end()` render, in the models the
  // test inlines and in its own CTEs, as a run of that day renders them (sql::DateLiteral).

  // The models the test inlines (unmocked, reached from its CTEs' references and its expected models) whose SQL
  // uses partition bounds, in the order first reached.
  std::vector<const ModelCheckInput*> ModelsWithBounds() const {
    std::vector<std::string> pending;
    for (const TestCte& cte : test_.ctes) {
      for (const sql::ReferenceCall& call : cte.sql.references) pending.push_back(call.name);
      if (StartsWith(cte.name, kExpectedPrefix)) pending.push_back(cte.name.substr(kExpectedPrefix.size()));
    }
    std::set<std::string> seen;
    std::vector<const ModelCheckInput*> found;
    for (size_t next = 0; next < pending.size(); ++next) {
      const std::string name = pending[next];
      if (mocks_.count(name) || !seen.insert(name).second) continue;
      const ModelCheckInput* model = models_.Find(name);
      if (model == nullptr || model->sql == nullptr) continue;
      if (!model->sql->partition_bounds.empty() && model->partitions != nullptr) found.push_back(model);
      for (const ResolvedReference& reference : model->sql->references) pending.push_back(reference.call.name);
    }
    return found;
  }

  // The test's window: its `partition` day, else the first day of every model with partition bounds it inlines
  // (the latest of their start dates); nullopt when it has neither. A `partition` before such a model's start date
  // is SLU-TEST-022 at the value.
  std::optional<DateWindow> Window() const {
    std::optional<Date> day = test_.partition;
    for (const ModelCheckInput* model : ModelsWithBounds()) {
      const Date start = model->partitions->partitions.start_date();
      if (test_.partition && *test_.partition < start) {
        file_.Fail(test_.partition_at, "SLU-TEST-022",
                   "TEST partition " + test_.partition->ToString() + " is before model '" + std::string(model->name) +
                       "' starts (start_date " + start.ToString() + ")",
                   "choose a day on or after " + start.ToString());
      }
      if (!test_.partition && (!day || *day < start)) day = start;
    }
    if (!day) return std::nullopt;
    return DateWindow{*day, day->AddDays(1)};
  }

  std::string BoundLiteral(PartitionBound bound) const {
    if (!window_) {
      file_.Fail(test_.block_at, "SLU-TEST-022", "test '" + test_.name + "' runs partition bounds without a window",
                 R"(name the day: TEST (partition "YYYY-MM-DD");)");
    }
    return sql::DateLiteral(input_.dialect, bound == PartitionBound::kStart ? window_->start : window_->end);
  }

  // `cte`'s text with its references replaced by `reference` and its partition bounds by the window's dates;
  // a bound without a window is SLU-TEST-022 at the call.
  std::string RenderCte(const TestCte& cte, const std::function<std::string(const sql::ReferenceCall&)>& reference) {
    std::vector<sql::SpanReplacement> replacements;
    for (const sql::ReferenceCall& call : cte.sql.references) {
      replacements.push_back({call.begin, call.end, reference(call)});
    }
    if (cte.sql.text.find("@partition_") != std::string::npos) {
      for (const sql::MacroCall& call : sql::FindMacroCalls(cte.sql.text, input_.dialect, file_.file)) {
        if (!IsPartitionBound(call.name)) continue;
        if (!window_) {
          file_.Fail(cte.sql.Locate(call.begin), "SLU-TEST-022",
                     "@" + call.name + "() in test '" + test_.name + "' has no window to render",
                     R"(name the day: TEST (partition "YYYY-MM-DD"); (a test has one when it runs a partitioned model that uses the bounds))");
        }
        replacements.push_back(
            {call.begin, call.end, BoundLiteral(call.name == "partition_start" ? PartitionBound::kStart : PartitionBound::kEnd)});
      }
      std::sort(replacements.begin(), replacements.end(),
                [](const sql::SpanReplacement& a, const sql::SpanReplacement& b) { return a.begin < b.begin; });
    }
    return sql::ReplaceSpans(cte.sql.text, replacements);
  }

  void CompileModelMode(TestSpec& spec) {
    std::vector<TestCte*> expected, asserts;
    for (TestCte& cte : test_.ctes) {
      if (cte.name == kMacroActual || cte.name == kMacroExpected) {
        file_.Fail(cte.name_offset, "SLU-TEST-009", "CTE " + cte.name_text + " belongs to macro tests",
                   "write TEST (mode macro, …); for a macro test");
      }
      std::string logical;
      if (StartsWith(cte.name, kRefPrefix)) logical = cte.name.substr(kRefPrefix.size());
      if (StartsWith(cte.name, kSourcePrefix)) logical = cte.name.substr(kSourcePrefix.size());
      if (!logical.empty()) {
        auto [it, inserted] = mocks_.emplace(logical, Mock{&cte, false});
        if (!inserted) {
          file_.Fail(cte.name_offset, "SLU-TEST-019",
                     "'" + logical + "' is mocked twice: " + it->second.cte->name_text + " and " + cte.name_text,
                     "keep one mock per name");
        }
      } else if (StartsWith(cte.name, kExpectedPrefix)) {
        expected.push_back(&cte);
      } else if (StartsWith(cte.name, kAssertPrefix)) {
        asserts.push_back(&cte);
      }
    }
    if (mocks_.empty()) {
      file_.Fail(test_.at, "SLU-TEST-007", "test '" + test_.name + "' has no mock",
                 "mock each input with __ref__<model> AS (…) or __source__<source> AS (…)");
    }
    if (expected.empty() && asserts.empty()) {
      file_.Fail(test_.at, "SLU-TEST-008", "test '" + test_.name + "' checks nothing",
                 "add __expected__<model> AS (…) rows, or an __assert__<label> AS (…) query that must return no rows");
    }
    for (TestCte* cte : expected) {
      std::string model = cte->name.substr(kExpectedPrefix.size());
      if (models_.Find(model) == nullptr) {
        file_.Fail(cte->name_offset, "SLU-TEST-010", cte->name_text + " names no model",
                   "expected rows are written __expected__<model>, with the name of a model of the project");
      }
      if (mocks_.count(model)) {
        file_.Fail(cte->name_offset, "SLU-TEST-010", "model '" + model + "' is both expected and mocked",
                   "remove the mock of " + model + "; the test computes it from its own inputs");
      }
    }
    for (TestCte& cte : test_.ctes) Expand(cte);
    window_ = Window();
    if (window_) spec.partition = window_->start.ToString();

    // Test CTEs, with their references resolved; models are assembled on the way.
    for (TestCte& cte : test_.ctes) {
      std::string text = RenderCte(cte, [&](const sql::ReferenceCall& call) {
        std::vector<std::string> chain;
        return Resolve(call.name, cte.sql.Locate(call.begin), chain);
      });
      authored_.push_back(Node{cte.name, cte.name_text, TrimBlankLines(text), {}});
    }
    std::vector<ComparisonCase> cases;
    std::vector<std::pair<size_t, std::string>> assertion_cases;
    size_t index = 0;
    for (const TestCte& cte : test_.ctes) {
      bool is_expected = StartsWith(cte.name, kExpectedPrefix);
      if (!is_expected && !StartsWith(cte.name, kAssertPrefix)) continue;
      ++index;
      if (!is_expected) {
        assertion_cases.emplace_back(index, cte.name_text);
        continue;
      }
      std::string model_name = cte.name.substr(kExpectedPrefix.size());
      std::vector<std::string> chain;
      ComparisonCase c{cte.name_text, Resolve(model_name, cte.name_offset, chain), ExpectedColumns(cte), {}};
      const ModelCheckInput& model = models_.At(model_name);
      if (!model.sql->columns.empty()) {
        const ModelColumns& columns = model.sql->columns;
        for (const std::string& column : c.columns) {
          auto it =
              std::find_if(columns.begin(), columns.end(), [&](const ModelColumn& known) { return known.name == column; });
          if (it == columns.end()) {
            std::vector<std::string> known;
            for (const auto& [name, type] : columns) known.emplace_back(name);
            file_.Fail(cte.name_offset, "SLU-TEST-013", "model '" + model_name + "' has no column '" + column + "'",
                       "its columns: " + Joined(known, ", "));
          }
          c.types.emplace_back((*it).type);
        }
      }
      cases.push_back(std::move(c));
      spec.targets.push_back(model_name);
      comparison_index_.push_back(index);
    }
    WarnUnreadMocks();

    const std::vector<NamedSql> authored = OrderedCtes();
    WriteStatements(
        spec, authored,
        [&](NullSafeSpelling spelling, std::vector<NamedSql>& ctes, std::vector<std::string>& branches) {
          size_t next_assertion = 0, next_case = 0;
          for (size_t i = 1; i <= index; ++i) {
            if (next_case < cases.size() && comparison_index_[next_case] == i) {
              AddComparison(input_.dialect, i, cases[next_case++], ctes, branches, spelling);
            } else {
              branches.push_back(AssertionBranch(input_.dialect, i, assertion_cases[next_assertion++].second));
            }
          }
        });
    size_t next_assertion = 0, next_case = 0;
    for (size_t i = 1; i <= index; ++i) {
      if (next_case < cases.size() && comparison_index_[next_case] == i) {
        const ComparisonCase& c = cases[next_case++];
        spec.cases.push_back(TestCase{c.expected, c.columns});
      } else {
        spec.cases.push_back(TestCase{assertion_cases[next_assertion++].second, {}});
      }
    }
    std::sort(spec.targets.begin(), spec.targets.end());
    spec.targets.erase(std::unique(spec.targets.begin(), spec.targets.end()), spec.targets.end());
  }

  void CompileMacroMode(TestSpec& spec) {
    const TestCte* actual = nullptr;
    const TestCte* expected = nullptr;
    for (const TestCte& cte : test_.ctes) {
      for (std::string_view prefix : {kRefPrefix, kSourcePrefix, kExpectedPrefix, kAssertPrefix}) {
        if (StartsWith(cte.name, prefix)) {
          file_.Fail(cte.name_offset, "SLU-TEST-014",
                     "macro test '" + test_.name + "' defines model-test CTE " + cte.name_text,
                     "macro tests compare __macro_actual__ with __macro_expected__; use mode model to test models");
        }
      }
      if (cte.name == kMacroActual) actual = &cte;
      if (cte.name == kMacroExpected) expected = &cte;
      if (cte.name != kMacroActual) {
        if (std::optional<sql::MacroCall> call =
                FirstMacroCall(file_, cte.body_begin, cte.body_end, input_.dialect, /*skip_partition_bounds=*/true)) {
          file_.Fail(call->begin, "SLU-TEST-015",
                     "macro test '" + test_.name + "' calls @" + call->name + "(…) outside __macro_actual__",
                     "call macros only in __macro_actual__; write __macro_expected__ by hand");
        }
      }
    }
    if (actual == nullptr || expected == nullptr) {
      file_.Fail(test_.at, "SLU-TEST-014",
                 "macro test '" + test_.name + "' needs both __macro_actual__ and " + "__macro_expected__",
                 "write __macro_actual__ AS (SELECT @macro(…) AS x), __macro_expected__ AS (SELECT … AS x)");
    }
    if (test_.partition) {
      window_ = DateWindow{*test_.partition, test_.partition->AddDays(1)};
      spec.partition = test_.partition->ToString();
    }
    for (TestCte& cte : test_.ctes) {
      Expand(cte);
      if (!cte.sql.references.empty()) {
        file_.Fail(cte.sql.Locate(cte.sql.references.front().begin), "SLU-TEST-014",
                   "macro test '" + test_.name + "' reads a model or source",
                   "macro tests run on literal rows; use mode model to test models");
      }
      authored_.push_back(Node{cte.name, cte.name_text, TrimBlankLines(RenderCte(cte, {})), {}});
    }
    std::vector<std::string> expected_columns = ExpectedColumns(*expected);
    std::vector<std::string> actual_columns = ExpectedColumns(*actual);
    std::vector<std::string> a = actual_columns, e = expected_columns;
    std::sort(a.begin(), a.end());
    std::sort(e.begin(), e.end());
    if (a != e) {
      file_.Fail(actual->name_offset, "SLU-TEST-016",
                 "__macro_actual__ returns (" + Joined(actual_columns, ", ") + ") but __macro_expected__ returns (" +
                     Joined(expected_columns, ", ") + ")",
                 "give both CTEs the same column names");
    }
    const ComparisonCase compared{expected->name_text, actual->name_text, expected_columns, {}};
    WriteStatements(spec, OrderedCtes(),
                    [&](NullSafeSpelling spelling, std::vector<NamedSql>& ctes, std::vector<std::string>& branches) {
                      AddComparison(input_.dialect, 1, compared, ctes, branches, spelling);
                    });
    spec.cases.push_back(TestCase{expected->name_text, expected_columns});
    spec.targets = {std::string(kMacroTargetPrefix) + test_.name};
  }

  // spec.sql, and on ClickHouse spec.legacy_clickhouse_sql: the statement `add_cases` completes from the test's
  // CTEs (adding its comparison CTEs and branches, NULL-safe equality spelled as asked).
  using CaseWriter =
      std::function<void(NullSafeSpelling, std::vector<NamedSql>& ctes, std::vector<std::string>& branches)>;
  void WriteStatements(TestSpec& spec, const std::vector<NamedSql>& authored, const CaseWriter& add_cases) const {
    std::vector<NamedSql> ctes = authored;
    std::vector<std::string> branches;
    add_cases(NullSafeSpelling::kNative, ctes, branches);
    spec.sql = ComparisonStatement(ctes, branches);
    if (input_.dialect != sql::Dialect::kClickHouse) return;
    ctes = authored;
    branches.clear();
    add_cases(NullSafeSpelling::kKeyEqualities, ctes, branches);
    spec.legacy_clickhouse_sql = InlinedComparisonStatement(input_.dialect, ctes, branches);
  }

  // The relation a reference to `name` reads in this test: its mock, or the model assembled as a CTE.
  std::string Resolve(const std::string& name, size_t blame, std::vector<std::string>& chain) {
    if (auto mock = mocks_.find(name); mock != mocks_.end()) {
      mock->second.used = true;
      return mock->second.cte->name_text;
    }
    std::string cte_name = std::string(kModelPrefix) + name;
    if (assembled_.count(name)) return cte_name;
    const ModelCheckInput* model = models_.Find(name);
    if (model == nullptr) {
      bool source = sources_.count(name) > 0;
      std::string read_by = chain.empty() ? "" : ", read by model '" + chain.back() + "',";
      file_.Fail(blame, "SLU-TEST-011",
                 "test '" + test_.name + "' cannot resolve '" + name + "'" + read_by +
                     (source ? " a source without a mock" : " which is neither mocked nor a model"),
                 "mock it: add " + std::string(source ? kSourcePrefix : kRefPrefix) + name + " AS (SELECT …)");
    }
    if (std::find(chain.begin(), chain.end(), name) != chain.end()) {
      file_.Fail(blame, "SLU-TEST-020",
                 "models reference each other in a cycle: " + Joined(chain, " → ") + " → " + name,
                 "break the cycle, or mock one of the models");
    }
    if (chain.size() >= kMaxInlinedChain) {
      file_.Fail(blame, "SLU-TEST-021",
                 "test '" + test_.name + "' inlines more than " + std::to_string(kMaxInlinedChain) +
                     " unmocked models in a chain (the next one is '" + name + "')",
                 "mock a model part-way along the chain: " + std::string(kRefPrefix) + name + " AS (SELECT …)");
    }
    chain.push_back(name);
    const ModelCheckInput& input = *model;
    Node node{cte_name, cte_name, {}, {}};
    node.text = RenderModelSql(
        *input.sql,
        [&](const ResolvedReference& reference) {
          const std::string& upstream = reference.call.name;
          std::string relation = Resolve(upstream, blame, chain);
          node.reads.push_back(mocks_.count(upstream) ? mocks_.at(upstream).cte->name : relation);
          return relation;
        },
        [&](const PartitionBoundCall& call) { return BoundLiteral(call.bound); },
        RoleColumns::kCanonical);  // a mock stands for the source with its canonical column names
    chain.pop_back();
    assembled_.insert(name);
    models_in_order_.push_back(std::move(node));
    return cte_name;
  }

  std::vector<std::string> ExpectedColumns(const TestCte& cte) {
    ColumnLookup lookup = [&](const std::string& name, std::string& text, std::vector<std::string>& columns) {
      for (const Node& node : authored_) {
        if (node.name == name) {
          text = node.text;
          return true;
        }
      }
      if (StartsWith(name, kModelPrefix)) {
        const ModelCheckInput* model = models_.Find(name.substr(kModelPrefix.size()));
        if (model == nullptr || model->sql->columns.empty()) return false;
        for (const auto& [column, type] : model->sql->columns) columns.emplace_back(column);
        return true;
      }
      return false;
    };
    std::vector<std::string> names;
    std::string problem;
    const std::string* text = nullptr;
    for (const Node& node : authored_) {
      if (node.name == cte.name) text = &node.text;
    }
    if (!InferColumns(*text, input_.dialect, lookup, names, problem)) {
      file_.Fail(cte.name_offset, "SLU-TEST-012", "cannot tell the columns of " + cte.name_text + ": " + problem,
                 "the compared columns are the output names of this CTE's SELECT");
    }
    if (names.empty()) {
      file_.Fail(cte.name_offset, "SLU-TEST-012", cte.name_text + " returns no columns", "select at least one column");
    }
    return names;
  }

  void WarnUnreadMocks() {
    std::set<std::string> mentioned;
    for (const Node& node : authored_) {
      for (const std::string& name : Mentions(node)) {
        if (name != node.name) mentioned.insert(name);
      }
    }
    for (const auto& [logical, mock] : mocks_) {
      if (mock.used || mentioned.count(mock.cte->name)) continue;
      warnings_.push_back(file_.Warning(mock.cte->name_offset, "SLU-TEST-018",
                                        "mock " + mock.cte->name_text + " in test '" + test_.name + "' is never read",
                                        "remove it, or check that a tested model reads '" + logical + "'"));
    }
  }

  // Names (words and quoted identifiers) a test CTE mentions.
  std::set<std::string> Mentions(const Node& node) const {
    std::set<std::string> names;
    std::vector<Token> tokens = sql::Tokenize(node.text, input_.dialect);
    for (const Token& token : tokens) {
      if (IsName(token)) names.insert(sql::TokenValue(token, input_.dialect));
    }
    return names;
  }

  // Test CTEs and assembled models, each after the CTEs it reads (test order otherwise).
  std::vector<NamedSql> OrderedCtes() {
    std::map<std::string, const Node*> by_name;
    for (const Node& node : authored_) by_name.emplace(node.name, &node);
    for (const Node& node : models_in_order_) by_name.emplace(node.name, &node);
    std::map<const Node*, std::vector<const Node*>> reads;
    for (const Node& node : authored_) {
      for (const std::string& name : Mentions(node)) {
        if (auto it = by_name.find(name); it != by_name.end() && it->second != &node)
          reads[&node].push_back(it->second);
      }
    }
    for (const Node& node : models_in_order_) {
      for (const std::string& name : node.reads) reads[&node].push_back(by_name.at(name));
    }
    std::vector<NamedSql> ordered;
    std::set<const Node*> visited;
    // Depth-first, each node after what it reads; an explicit stack, as test CTEs may chain thousands deep.
    auto visit = [&](const Node* root) {
      if (!visited.insert(root).second) return;
      std::vector<std::pair<const Node*, size_t>> stack{{root, 0}};
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        const std::vector<const Node*>& upstream = reads[node];
        if (next < upstream.size()) {
          const Node* read = upstream[next++];
          if (visited.insert(read).second) stack.emplace_back(read, 0);
          continue;
        }
        ordered.push_back(NamedSql{node->name_text, node->text});
        stack.pop_back();
      }
    };
    for (const Node& node : authored_) visit(&node);
    for (const Node& node : models_in_order_) visit(&node);
    return ordered;
  }

  const ChecksInput& input_;
  const ModelIndex& models_;
  const CheckFile& file_;
  ParsedTest& test_;
  std::optional<DateWindow> window_;  // set before any SQL is rendered (Window())
  std::vector<Diagnostic>& warnings_;
  std::set<std::string> sources_;
  std::map<std::string, Mock> mocks_;
  std::set<std::string> assembled_;
  std::vector<Node> authored_;
  std::vector<Node> models_in_order_;
  std::vector<size_t> comparison_index_;
};

}  // namespace

CompiledTests CompileTests(const ChecksInput& input, const ModelIndex& models) {
  CompiledTests compiled;
  std::map<std::string, std::string> names;  // test name → file
  for (const std::string& relative : DiscoverSqlFiles(input.root, "tests")) {
    CheckFile file{relative, ReadFileInside(input.root, relative)};
    for (ParsedTest& test : ParseTestFile(file, input.dialect)) {
      auto [it, inserted] = names.emplace(test.name, relative);
      if (!inserted) {
        file.Fail(test.at, "SLU-TEST-003", "test name '" + test.name + "' is already used in " + it->second,
                  "test names are unique across the project");
      }
      compiled.tests.push_back(TestCompiler(input, models, file, test, compiled.warnings).Compile());
    }
  }
  std::sort(compiled.tests.begin(), compiled.tests.end(),
            [](const TestSpec& a, const TestSpec& b) { return a.name < b.name; });
  return compiled;
}

}  // namespace sluice::checks
