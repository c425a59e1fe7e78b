// Fuzz entries of the sql/ layer: the tokenizer, the reference and macro scanners, the SELECT parser.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "fuzz_entries.hpp"
#include "sql/reference_scanner.hpp"
#include "sql/select_parser.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::fuzz {

namespace {

const std::string kFile = "fuzz.sql";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void CheckTokens(std::string_view text, const std::vector<sql::Token>& tokens, sql::Dialect dialect) {
  size_t previous_end = 0;
  for (const sql::Token& token : tokens) {
    Require(token.begin >= previous_end, "Tokenize: tokens overlap or are out of order");
    Require(token.begin < token.end, "Tokenize: an empty token");
    Require(token.end <= text.size(), "Tokenize: a token ends past the text");
    Require(token.text.data() == text.data() + token.begin && token.text.size() == token.end - token.begin,
            "Tokenize: a token's text is not its span of the input");
    for (size_t i = previous_end; i < token.begin; ++i) {
      Require(IsSpace(text[i]), "Tokenize: a byte other than whitespace was dropped");
    }
    if (token.kind == sql::TokenKind::kString || token.kind == sql::TokenKind::kQuotedIdentifier) {
      sql::TokenValue(token, dialect);
    }
    previous_end = token.end;
  }
  for (size_t i = previous_end; i < text.size(); ++i) {
    Require(IsSpace(text[i]), "Tokenize: a byte other than whitespace was dropped at the end");
  }
}

void CheckSpan(std::string_view text, const sql::TextSpan& span, const char* what) {
  Require(span.begin <= span.end && span.end <= text.size(),
          std::string("ParseSelect: ") + what + " span is outside the text");
}

void CheckStatement(std::string_view text, const sql::SelectStatement& statement) {
  for (const sql::TextSpan& span : statement.statements) {
    CheckSpan(text, span, "statement");
    Require(span.begin < span.end, "ParseSelect: an empty statement span");
  }
  Require((statement.kind == sql::StatementKind::kEmpty) == statement.statements.empty(),
          "ParseSelect: kind kEmpty disagrees with the statement list");
  if (statement.kind != sql::StatementKind::kEmpty) CheckSpan(text, statement.first_token, "first token");
  if (statement.kind == sql::StatementKind::kQuery) {
    Require(statement.outer_block < statement.blocks.size(), "ParseSelect: outer_block is not a block");
  }
  for (const sql::SetOperation& operation : statement.set_operations) CheckSpan(text, operation.span, "set operation");
  for (const sql::CommonTableExpression& cte : statement.ctes) {
    CheckSpan(text, cte.name_span, "CTE name");
    CheckSpan(text, cte.body, "CTE body");
    CheckSpan(text, cte.span, "CTE");
  }
  for (const sql::QueryBlock& block : statement.blocks) {
    CheckSpan(text, block.span, "block");
    for (const sql::ProjectionItem& item : block.projection) {
      CheckSpan(text, item.span, "projection item");
      CheckSpan(text, item.expression, "projection expression");
      if (item.alias_span) CheckSpan(text, *item.alias_span, "alias");
      if (item.cast) CheckSpan(text, item.cast->type_span, "cast type");
    }
    for (const sql::TableSource& source : block.sources) {
      CheckSpan(text, source.span, "source");
      if (source.kind == sql::SourceKind::kSubquery) {
        Require(source.subquery_block < statement.blocks.size(), "ParseSelect: subquery_block is not a block");
      }
    }
    for (const auto& clause : {block.where, block.prewhere, block.group_by, block.having, block.qualify, block.order_by,
                               block.limit, block.offset, block.array_join, block.settings, block.format}) {
      if (clause) CheckSpan(text, *clause, "clause");
    }
    for (const sql::FunctionCall& call : block.aggregates) {
      CheckSpan(text, call.span, "aggregate");
      sql::IsAggregateFunction(call.name);
    }
    for (const sql::FunctionCall& call : block.expression_references) CheckSpan(text, call.span, "reference");
  }
}

}  // namespace

int FuzzSqlScan(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  sql::Dialect dialect = DialectOf(data[0]);
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    CheckTokens(text, sql::Tokenize(text, dialect, kFile), dialect);
  } catch (const Error& error) {
    CheckRejection(error);
  }
  try {
    for (const sql::ReferenceCall& call : sql::FindReferences(text, dialect, kFile)) {
      Require(call.begin < call.end && call.end <= text.size(), "FindReferences: a call outside the text");
      Require(!call.name.empty(), "FindReferences: an empty name was accepted");
      Require(call.kind == sql::ReferenceKind::kRef || !call.ref_type, "FindReferences: __source with a ref_type");
    }
  } catch (const Error& error) {
    CheckRejection(error);
  }
  try {
    size_t previous_end = 0;
    for (const sql::MacroCall& call : sql::FindMacroCalls(text, dialect, kFile)) {
      Require(call.begin >= previous_end && call.end <= text.size(), "FindMacroCalls: calls overlap or leave the text");
      Require(call.begin + 1 + call.name.size() < call.end, "FindMacroCalls: a call shorter than its name");
      Require(text[call.begin] == '@' && text.substr(call.begin + 1, call.name.size()) == call.name &&
                  text[call.begin + 1 + call.name.size()] == '(' && text[call.end - 1] == ')',
              "FindMacroCalls: a call's span is not `@name(...)`");
      previous_end = call.end;
    }
  } catch (const Error& error) {
    CheckRejection(error);
  }
  return 0;
}

int FuzzSelect(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  sql::Dialect dialect = DialectOf(data[0]);
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    CheckStatement(text, sql::ParseSelect(text, dialect, kFile));
  } catch (const Error& error) {
    CheckRejection(error);
  }
  return 0;
}

}  // namespace sluice::fuzz
