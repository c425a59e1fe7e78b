// Golden tests of the SELECT parser: every `tests/golden/select/*.test` file is one SQL text and what
// ParseSelect makes of it, printed as text (or the error it reports).
//
// File format (tests/golden/golden_file.hpp):
//   # comment lines
//   dialect: clickhouse             duckdb, clickhouse (the default), postgres or bigquery
//   --- sql                         the text given to ParseSelect (its lines, each ending in '\n')
//   --- expect                      PrintSelect of the result, or FormatDiagnostic of each error diagnostic
//
// Run with SLUICE_GOLDEN_UPDATE=1 to rewrite each file's `--- expect` section from the actual output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "golden_file.hpp"
#include "sql/select_parser.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::sql {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(SLUICE_SOURCE_DIR) / "tests" / "golden" / "select";

// The file name errors are located in.
constexpr const char* kFile = "query.sql";

// `text` on one line: every run of whitespace becomes one space, none at either end.
std::string OneLine(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

class SelectPrinter {
 public:
  SelectPrinter(std::string_view text, const SelectStatement& statement) : text_(text), statement_(statement) {}

  // The statement as text: counts and kinds first, then the CTEs and set operations of the first statement,
  // then each block in parse order with its projection items, sources, clauses, aggregate calls and reference
  // calls used as expressions. A decoded name that differs from how it is written shows the written form in
  // [brackets]; SQL excerpts are shown on one line (OneLine).
  std::string Print() {
    Line("statements: " + std::to_string(statement_.statement_count()));
    if (statement_.statement_count() > 1) {
      for (const TextSpan& span : statement_.statements) Line("  statement: " + At(span));
    }
    switch (statement_.kind) {
      case StatementKind::kEmpty:
        Line("kind: empty");
        return out_;
      case StatementKind::kQuery:
        Line("kind: query, first token " + At(statement_.first_token));
        break;
      case StatementKind::kOther:
        Line("kind: other, first token " + At(statement_.first_token));
        break;
    }
    for (const CommonTableExpression& cte : statement_.ctes) {
      Line("cte " + At(cte.span) + " | name " + cte.name + Written(cte.name, cte.name_span) + " | body " +
           At(cte.body) + (cte.scalar ? " | scalar" : ""));
    }
    for (const SetOperation& operation : statement_.set_operations) Line("set operation: " + At(operation.span));
    for (size_t b = 0; b < statement_.blocks.size(); ++b) PrintBlock(b, statement_.blocks[b]);
    return out_;
  }

 private:
  static const char* RoleName(BlockRole role) {
    switch (role) {
      case BlockRole::kOuter:
        return "outer";
      case BlockRole::kSetOperand:
        return "set operand";
      case BlockRole::kCommonTableExpression:
        return "cte";
      case BlockRole::kFromSubquery:
        return "from subquery";
      case BlockRole::kExpressionSubquery:
        return "expression subquery";
    }
    return "?";
  }

  static const char* SyntaxName(CastSyntax syntax) {
    switch (syntax) {
      case CastSyntax::kCast:
        return "CAST";
      case CastSyntax::kTryCast:
        return "TRY_CAST";
      case CastSyntax::kSafeCast:
        return "SAFE_CAST";
      case CastSyntax::kDoubleColon:
        return "::";
    }
    return "?";
  }

  static const char* SourceKindName(SourceKind kind) {
    switch (kind) {
      case SourceKind::kTable:
        return "table";
      case SourceKind::kSubquery:
        return "subquery";
      case SourceKind::kTableFunction:
        return "table function";
      case SourceKind::kReference:
        return "reference";
    }
    return "?";
  }

  void Line(const std::string& line) { out_ += line + "\n"; }

  std::string At(TextSpan span) const { return OneLine(text_.substr(span.begin, span.end - span.begin)); }

  // " [written X]" when the text at `span` is not `decoded`.
  std::string Written(const std::string& decoded, TextSpan span) const {
    std::string written = At(span);
    return written == decoded ? "" : " [written " + written + "]";
  }

  void PrintBlock(size_t index, const QueryBlock& block) {
    std::string heading = "block " + std::to_string(index) + ": " + RoleName(block.role);
    if (block.depth > 0) heading += ", depth " + std::to_string(block.depth);
    if (block.values) heading += ", values";
    Line(heading);
    for (const ProjectionItem& item : block.projection) PrintItem(item);
    for (const TableSource& source : block.sources) PrintSource(source);
    PrintClauses(block);
    for (const FunctionCall& call : block.aggregates) Line("  aggregate " + At(call.span));
    for (const FunctionCall& call : block.expression_references) Line("  reference expression " + At(call.span));
  }

  void PrintItem(const ProjectionItem& item) {
    std::string line = "  item " + At(item.span);
    if (item.expression != item.span) line += " | expression " + At(item.expression);
    if (item.alias) line += " | alias " + *item.alias + (item.alias_span ? Written(*item.alias, *item.alias_span) : "");
    if (item.star) line += item.star_qualifier ? " | star " + *item.star_qualifier : " | star";
    if (item.cast) {
      line += std::string(" | cast ") + SyntaxName(item.cast->syntax) + " " + item.cast->type_text +
              Written(item.cast->type_text, item.cast->type_span);
    }
    if (item.has_aggregate) line += " | aggregate";
    Line(line);
  }

  void PrintSource(const TableSource& source) {
    std::string line = std::string("  source ") + SourceKindName(source.kind) + " " + At(source.span);
    switch (source.kind) {
      case SourceKind::kTable:
        if (source.name != At(source.span)) line += " | name " + source.name;
        if (source.names_cte) line += " | cte";
        break;
      case SourceKind::kTableFunction:
        line += " | name " + source.name;
        break;
      case SourceKind::kReference:
        line += " | " + source.name + " " + (source.reference_name ? *source.reference_name : "(no name)");
        break;
      case SourceKind::kSubquery:
        line += " | block " + std::to_string(source.subquery_block);
        break;
    }
    if (source.alias) line += " | alias " + *source.alias;
    if (source.joined) line += " | joined";
    Line(line);
  }

  // The clauses present, in text order, by their canonical names (with the written keywords when they differ,
  // e.g. `ARRAY JOIN [written LEFT ARRAY JOIN]`).
  void PrintClauses(const QueryBlock& block) {
    const std::pair<const char*, const std::optional<TextSpan>*> clauses[] = {
        {"WHERE", &block.where},       {"PREWHERE", &block.prewhere}, {"GROUP BY", &block.group_by},
        {"HAVING", &block.having},     {"QUALIFY", &block.qualify},   {"ORDER BY", &block.order_by},
        {"LIMIT", &block.limit},       {"OFFSET", &block.offset},     {"ARRAY JOIN", &block.array_join},
        {"SETTINGS", &block.settings}, {"FORMAT", &block.format},
    };
    std::vector<std::pair<size_t, std::string>> present;
    for (const auto& [name, span] : clauses) {
      if (!*span) continue;
      std::string written = At(**span);
      std::string upper = written;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      present.emplace_back((*span)->begin, upper == name ? name : std::string(name) + " [written " + written + "]");
    }
    if (present.empty()) return;
    std::sort(present.begin(), present.end());
    std::string line = "  clauses:";
    for (size_t i = 0; i < present.size(); ++i) line += (i == 0 ? " " : ", ") + present[i].second;
    Line(line);
  }

  std::string_view text_;
  const SelectStatement& statement_;
  std::string out_;
};

std::string Render(const std::string& sql, Dialect dialect) {
  try {
    SelectStatement statement = ParseSelect(sql, dialect, kFile);
    return SelectPrinter(sql, statement).Print();
  } catch (const Error& error) {
    std::string rendered;
    for (const Diagnostic& diagnostic : error.diagnostics()) rendered += FormatDiagnostic(diagnostic);
    return rendered;
  }
}

class Select : public ::testing::TestWithParam<std::string> {};

TEST_P(Select, MatchesGolden) {
  const fs::path file = kCorpus / (GetParam() + ".test");
  const golden::GoldenFile golden = golden::ParseGoldenFile(golden::ReadText(file));
  const Dialect dialect = DialectForAdapter(golden::DialectSetting(golden));
  ASSERT_EQ(golden.sections.size(), 1u) << "one `--- sql` section expected";
  ASSERT_EQ(golden.sections[0].name, "sql") << "one `--- sql` section expected";
  const std::string actual = Render(golden.sections[0].text, dialect);
  if (golden::GoldenUpdateMode()) {
    golden::RewriteExpect(file, golden, actual);
    return;
  }
  EXPECT_EQ(actual, golden.expect) << file.string() << " (SLUICE_GOLDEN_UPDATE=1 rewrites its expectation)";
}

INSTANTIATE_TEST_SUITE_P(Corpus, Select, ::testing::ValuesIn(golden::CorpusCases(kCorpus)), golden::GoldenTestName);

}  // namespace
}  // namespace sluice::sql
