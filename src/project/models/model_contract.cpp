#include "project/models/model_contract.hpp"

#include <algorithm>
#include <compare>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/diagnostic.hpp"
#include "sql/dialect.hpp"
#include "sql/keyword_table.hpp"
#include "sql/select_parser.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace {

constexpr size_t kUnknown = static_cast<size_t>(-1);

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

bool IsWord(const sql::Token& token, std::string_view lower) {
  if (token.kind != sql::TokenKind::kWord || token.text.size() != lower.size()) return false;
  for (size_t i = 0; i < lower.size(); ++i) {
    if (LowerAscii(token.text[i]) != lower[i]) return false;
  }
  return true;
}

bool IsPunct(const sql::Token& token, char c) {
  return token.kind == sql::TokenKind::kPunctuation && token.text.size() == 1 && token.text[0] == c;
}

bool IsOpen(const sql::Token& token) { return IsPunct(token, '(') || IsPunct(token, '[') || IsPunct(token, '{'); }
bool IsClose(const sql::Token& token) { return IsPunct(token, ')') || IsPunct(token, ']') || IsPunct(token, '}'); }

// True when the tokenizer reads `text` as exactly one bare word in every dialect: an identifier start, then
// identifier bytes (a leading digit, a word in ClickHouse only, is left to the tokenizer).
bool IsBareWord(std::string_view text) {
  if (text.empty() || !sql::HasByteClass(text.front(), sql::kIdentifierStartByte)) return false;
  return std::all_of(text.begin(), text.end(), sql::IsIdentifierChar);
}

// Words of storage expressions that are not column names (TTL and ORDER BY syntax, interval units, operators).
constexpr std::string_view kStorageKeywords[] = {
    "interval", "second",      "seconds",      "minute",      "minutes",      "hour",       "hours",       "day",
    "days",     "week",        "weeks",        "month",       "months",       "quarter",    "quarters",    "year",
    "years",    "millisecond", "milliseconds", "microsecond", "microseconds", "nanosecond", "nanoseconds", "and",
    "or",       "not",         "is",           "null",        "true",         "false",      "case",        "when",
    "then",     "else",        "end",          "in",          "like",         "ilike",      "between",     "delete",
    "to",       "disk",        "volume",       "recompress",  "codec",        "group",      "by",          "set",
    "where",    "asc",         "desc",         "nulls",       "first",        "last",       "collate",     "with",
    "fill",     "step",        "distinct",     "global",      "any",          "all",        "exists",      "as"};

constexpr auto kStorageKeywordTable = [] {
  sql::FoldedWordTable<256> table;
  for (std::string_view word : kStorageKeywords) table.Add(word, 1);
  return table;
}();

// `word` is a bare word (a kWord token's text), compared ignoring case.
bool IsStorageKeyword(std::string_view word) { return kStorageKeywordTable.Find(word) != 0; }

// One line, at most ~60 bytes, for quoting authored SQL in a message.
std::string Excerpt(std::string_view text) {
  constexpr size_t kShown = 60;
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
    if (out.size() >= kShown) return out + "…";
  }
  return out;
}

bool EngineAggregates(std::string_view engine) {
  std::string name = Lowercase(engine.substr(0, engine.find('(')));
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!name.empty() && blank(name.back())) name.pop_back();
  size_t start = 0;
  while (start < name.size() && blank(name[start])) ++start;
  name.erase(0, start);
  constexpr std::string_view kReplicated = "replicated";
  if (name.rfind(kReplicated, 0) == 0) name.erase(0, kReplicated.size());
  return name == "summingmergetree" || name == "aggregatingmergetree";
}

class ContractChecker {
 public:
  explicit ContractChecker(const ModelContractInput& input) : input_(input), text_(input.file_text) {}

  ModelContract Run() {
    size_t body = std::min(input_.body_offset, text_.size());
    sql::SelectStatement statement;
    if (input_.significant_tokens != nullptr) {
      statement = sql::ParseSelect(text_, std::move(*input_.significant_tokens), input_.dialect, input_.file);
    } else {
      std::string scanned(text_);
      for (size_t i = 0; i < body; ++i) {
        if (scanned[i] != '\n') scanned[i] = ' ';
      }
      statement = sql::ParseSelect(scanned, input_.dialect, input_.file);
    }
    CheckShape(statement, body);
    ModelContract contract;
    const std::vector<HashedName> outputs = CheckProjection(statement.blocks.at(statement.outer_block), contract);
    CheckEveryBlock(statement);
    for (const StorageKeyText& key : input_.order_by) CheckStorageExpression("order_by", key, contract, outputs);
    if (input_.partition_by) CheckStorageExpression("partition_by", *input_.partition_by, contract, outputs);
    if (input_.ttl) CheckStorageExpression("ttl", *input_.ttl, contract, outputs);

    contract.aggregate = EngineAggregates(input_.engine.text);
    for (const sql::QueryBlock& block : statement.blocks) {
      contract.aggregate = contract.aggregate || block.group_by.has_value() || !block.aggregates.empty();
    }
    contract.anchor_candidate = input_.kind == ModelKind::kTable && input_.replay_anchor != ReplayAnchor::kNever &&
                                !input_.has_mutable_refs && !contract.aggregate;
    contract.anchor_eligible = contract.anchor_candidate && HasLineageColumns(contract, input_.lineage, input_.dialect);
    return contract;
  }

 private:
  [[noreturn]] void Fail(const char* code, size_t offset, const std::string& message, const std::string& hint) const {
    throw Error(MakeDiagnostic(code, message, LocationAt(input_.file, text_, offset), hint, text_));
  }

  // Names compare as the dialect compares them: exactly in ClickHouse, ASCII case-insensitively elsewhere.
  bool SameName(std::string_view a, std::string_view b) const { return sql::SameColumnName(input_.dialect, a, b); }

  // FNV-1a over the name as SameName compares it: names that are the same hash the same.
  uint64_t NameHash(std::string_view name) const {
    const bool fold = input_.dialect != sql::Dialect::kClickHouse;
    uint64_t hash = 0xcbf29ce484222325ull;
    for (char c : name) {
      hash ^= static_cast<unsigned char>(fold ? LowerAscii(c) : c);
      hash *= 0x100000001b3ull;
    }
    return hash;
  }

  // An output column by the hash of its name; sorted by (hash, position), so a lookup or a duplicate search
  // compares integers and only names whose hashes are equal.
  struct HashedName {
    uint64_t hash;
    size_t column;
    auto operator<=>(const HashedName&) const = default;
  };

  bool IsOutput(const std::vector<HashedName>& outputs, const ModelContract& contract, std::string_view name) const {
    const uint64_t hash = NameHash(name);
    auto at = std::lower_bound(outputs.begin(), outputs.end(), HashedName{hash, 0});
    for (; at != outputs.end() && at->hash == hash; ++at) {
      if (SameName(contract.columns[at->column].name, name)) return true;
    }
    return false;
  }

  std::string_view At(sql::TextSpan span) const {
    return std::string_view(text_).substr(span.begin, span.end - span.begin);
  }

  // Exactly one statement, a SELECT, no top-level set operation.
  void CheckShape(const sql::SelectStatement& statement, size_t body) const {
    if (statement.statement_count() == 0) {
      Fail("SLU-MODEL-101", body, "the model body has no SQL statement", "write one SELECT after the MODEL header");
    }
    if (statement.statement_count() > 1) {
      Fail("SLU-MODEL-101", statement.statements[1].begin,
           "the model body has " + std::to_string(statement.statement_count()) +
               " SQL statements; a model is exactly one SELECT",
           "remove everything after the first statement (one trailing `;` is fine)");
    }
    std::string_view first = At(statement.first_token);
    if (statement.kind != sql::StatementKind::kQuery) {
      Fail("SLU-MODEL-102", statement.first_token.begin,
           "a model body must be a SELECT query, found `" + Excerpt(first) + "`",
           "write SELECT … FROM __source(…)/__ref(…) (optionally WITH … SELECT …)");
    }
    if (first == "(") {
      Fail("SLU-MODEL-102", statement.first_token.begin, "a model body must be a SELECT query, not a bracketed one",
           "remove the brackets around the query");
    }
    if (!statement.set_operations.empty()) {
      const sql::SetOperation& op = statement.set_operations.front();
      Fail("SLU-MODEL-103", op.span.begin,
           "a model body cannot combine queries with " + Excerpt(At(op.span)) + " at the top level",
           "move the combined query into a CTE and select from it: WITH u AS (… " + Excerpt(At(op.span)) +
               " …) SELECT CAST(… AS Type) AS name FROM u");
    }
  }

  // Fills contract.columns, moving the aliases and cast types out of `outer`; returns the columns' name hashes,
  // sorted (see IsOutput).
  std::vector<HashedName> CheckProjection(sql::QueryBlock& outer, ModelContract& contract) const {
    for (const sql::ProjectionItem& item : outer.projection) {
      if (item.star) {
        Fail("SLU-MODEL-104", item.span.begin,
             "`" + Excerpt(At(item.span)) + "` is not allowed in a model's outer SELECT",
             "list every output column as CAST(expr AS Type) AS name");
      }
    }
    // Items are checked in order: the first one without a cast or an alias fails, unless an earlier item
    // repeats an alias. Duplicates are found by sorting (name hash, position): one allocation for any width.
    std::vector<sql::ProjectionItem>& items = outer.projection;
    size_t valid = 0;
    while (valid < items.size() && items[valid].cast && items[valid].alias) ++valid;
    auto alias = [&](size_t i) -> std::string_view { return *items[i].alias; };
    std::vector<HashedName> order;
    order.reserve(valid);
    for (size_t i = 0; i < valid; ++i) order.push_back(HashedName{NameHash(alias(i)), i});
    std::sort(order.begin(), order.end());
    // The duplicate reported is the earliest item that repeats an earlier alias; `original`, the first item
    // with that alias. Within a run of equal hashes, items are in position order.
    size_t duplicate = kUnknown;
    size_t original = kUnknown;
    for (size_t run = 0, end = 0; run < order.size(); run = end) {
      end = run + 1;
      while (end < order.size() && order[end].hash == order[run].hash) ++end;
      for (size_t k = run + 1; k < end; ++k) {
        const size_t item = order[k].column;
        for (size_t j = run; j < k; ++j) {
          if (!SameName(alias(order[j].column), alias(item))) continue;
          if (item < duplicate) {
            duplicate = item;
            original = order[j].column;
          }
          break;
        }
      }
    }
    if (duplicate != kUnknown) {
      SourceLocation first = LocationAt(input_.file, text_, items[original].alias_span->begin);
      Fail("SLU-MODEL-107", items[duplicate].alias_span->begin,
           "output column `" + *items[duplicate].alias + "` is defined twice (first at line " +
               std::to_string(first.line) + ", column " + std::to_string(first.column) + ")",
           "give each output column its own alias");
    }
    if (valid < items.size()) {
      const sql::ProjectionItem& item = items[valid];
      if (!item.cast) {
        Fail("SLU-MODEL-105", item.span.begin, "output column `" + Excerpt(At(item.span)) + "` is not an explicit cast",
             "write CAST(expr AS Type) AS name or expr::Type AS name; the cast type becomes the column type");
      }
      Fail("SLU-MODEL-106", item.span.begin, "output column `" + Excerpt(At(item.span)) + "` has no alias",
           "name it: " + Excerpt(At(item.span)) + " AS name");
    }
    contract.columns.reserve(items.size());
    for (sql::ProjectionItem& item : items) {
      contract.columns.push_back(
          OutputColumn{std::move(*item.alias), std::move(item.cast->type_text), item.span.begin});
    }
    return order;  // every item is valid here, so `order` holds them all
  }

  // PREWHERE, misplaced reference calls and raw relations, at every level; the first in the text is reported.
  void CheckEveryBlock(const sql::SelectStatement& statement) const {
    size_t prewhere = kUnknown;
    const sql::FunctionCall* misplaced = nullptr;
    const sql::TableSource* raw = nullptr;
    for (const sql::QueryBlock& block : statement.blocks) {
      if (block.prewhere) prewhere = std::min(prewhere, block.prewhere->begin);
      for (const sql::FunctionCall& call : block.expression_references) {
        if (!misplaced || call.span.begin < misplaced->span.begin) misplaced = &call;
      }
      for (const sql::TableSource& source : block.sources) {
        if (source.kind == sql::SourceKind::kTable && !source.names_cte &&
            (!raw || source.span.begin < raw->span.begin)) {
          raw = &source;
        }
      }
    }
    if (prewhere != kUnknown) {
      Fail("SLU-MODEL-108", prewhere, "PREWHERE is not allowed in a model",
           "use WHERE (ClickHouse moves suitable conditions to PREWHERE itself)");
    }
    if (misplaced) {
      Fail("SLU-MODEL-109", misplaced->span.begin,
           "`" + Excerpt(At(misplaced->span)) +
               "` is used as an expression; reference calls are only allowed as FROM or JOIN sources",
           "read it as a source and use its columns: … FROM " + Excerpt(At(misplaced->span)) + " AS x …");
    }
    if (raw) {
      Fail("SLU-MODEL-110", raw->span.begin,
           "`" + raw->name +
               "` is a physical relation; a model reads only __source(…)/__ref(…) references and its own CTEs",
           "write __ref(\"" + raw->name + "\") or __source(\"" + raw->name + "\"), or define a CTE named `" +
               raw->name + "`");
    }
  }

  // Where the expression's first byte is in the file: just after the opening quote when the header spells the
  // value without escapes, else unknown (errors then point at the value).
  size_t ExpressionBase(const StorageKeyText& key) const {
    if (key.offset >= text_.size()) return kUnknown;
    char c = text_[key.offset];
    if ((c == '"' || c == '\'') && text_.compare(key.offset + 1, key.text.size(), key.text) == 0) return key.offset + 1;
    if (text_.compare(key.offset, key.text.size(), key.text) == 0) return key.offset;
    return kUnknown;
  }

  void CheckStorageExpression(const std::string& key_name, const StorageKeyText& key, const ModelContract& contract,
                              const std::vector<HashedName>& outputs) const {
    // A bare column name, as most keys are: the walk below would see that one word token and accept it when it
    // is a storage keyword or an output column. Anything else, a failure included, takes the walk.
    if (IsBareWord(key.text) && (IsStorageKeyword(key.text) || IsOutput(outputs, contract, key.text))) return;
    size_t base = ExpressionBase(key);
    auto at = [&](size_t inner) { return base == kUnknown ? key.offset : base + inner; };
    auto shown = [&] { return "`" + key_name + "` expression `" + Excerpt(key.text) + "`"; };
    std::vector<sql::Token> tokens;
    try {
      tokens = sql::TokenizeSignificant(key.text, input_.dialect, input_.file);
    } catch (const Error& error) {
      Fail("SLU-MODEL-112", key.offset, shown() + " cannot be read: " + error.diagnostics().front().message,
           error.diagnostics().front().hint);
    }
    if (tokens.empty()) {
      Fail("SLU-MODEL-112", key.offset, "`" + key_name + "` expression is empty",
           "write a SQL expression over output columns");
    }
    std::vector<size_t> match(tokens.size(), kUnknown);
    std::vector<size_t> open;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (IsOpen(tokens[i])) open.push_back(i);
      if (!IsClose(tokens[i])) continue;
      if (open.empty()) {
        Fail("SLU-MODEL-112", at(tokens[i].begin), shown() + " has an unmatched `" + std::string(tokens[i].text) + "`",
             "balance the brackets");
      }
      match[open.back()] = i;
      match[i] = open.back();
      open.pop_back();
    }
    if (!open.empty()) {
      Fail("SLU-MODEL-112", at(tokens[open.back()].begin),
           shown() + " never closes its `" + std::string(tokens[open.back()].text) + "`", "balance the brackets");
    }
    // Lambda parameters: `x -> …` and `(x, y) -> …`.
    std::vector<std::string_view> parameters;
    for (size_t i = 1; i < tokens.size(); ++i) {
      if (tokens[i].kind != sql::TokenKind::kOperator || tokens[i].text != "->") continue;
      const sql::Token& previous = tokens[i - 1];
      if (previous.kind == sql::TokenKind::kWord) parameters.push_back(previous.text);
      if (IsPunct(previous, ')')) {
        for (size_t k = match[i - 1] + 1; k + 1 < i; ++k) {
          if (tokens[k].kind == sql::TokenKind::kWord) parameters.push_back(tokens[k].text);
        }
      }
    }
    auto is_parameter = [&](std::string_view name) {
      return std::any_of(parameters.begin(), parameters.end(),
                         [&](std::string_view parameter) { return SameName(parameter, name); });
    };
    std::vector<std::pair<size_t, size_t>> cast_types;  // (AS of a CAST, its closing bracket)
    for (size_t i = 0; i < tokens.size(); ++i) {
      while (!cast_types.empty() && cast_types.back().first < i) cast_types.pop_back();
      if (!cast_types.empty() && cast_types.back().first == i) {
        i = cast_types.back().second;
        cast_types.pop_back();
        continue;
      }
      const sql::Token& token = tokens[i];
      const sql::Token* next = i + 1 < tokens.size() ? &tokens[i + 1] : nullptr;
      if (token.kind == sql::TokenKind::kOperator && token.text == "::") {
        size_t k = i + 1;
        if (k < tokens.size() &&
            (tokens[k].kind == sql::TokenKind::kWord || tokens[k].kind == sql::TokenKind::kQuotedIdentifier)) {
          ++k;
        }
        while (k < tokens.size()) {
          if (tokens[k].kind == sql::TokenKind::kWord && sql::IsTypeContinuationWord(tokens[k].text)) {
            ++k;
          } else if (IsPunct(tokens[k], '(') || IsPunct(tokens[k], '[')) {
            k = match[k] + 1;
          } else {
            break;
          }
        }
        i = k - 1;
        continue;
      }
      if (token.kind != sql::TokenKind::kWord && token.kind != sql::TokenKind::kQuotedIdentifier) continue;
      if (next && IsPunct(*next, '(')) {
        if (token.kind == sql::TokenKind::kWord && sql::IsCastFunctionName(token.text)) {
          for (size_t k = i + 2; k < match[i + 1]; k = IsOpen(tokens[k]) ? match[k] + 1 : k + 1) {
            if (IsWord(tokens[k], "as")) {
              cast_types.emplace_back(k, match[i + 1]);
              break;
            }
          }
        }
        continue;  // a function name
      }
      if (next && IsPunct(*next, '.')) continue;  // a qualifier; the last part is checked
      if (token.kind == sql::TokenKind::kWord) {
        if (IsStorageKeyword(token.text)) continue;
        if (next && next->kind == sql::TokenKind::kString) continue;  // DATE '…'
      }
      std::string name = sql::TokenValue(token, input_.dialect);
      if (is_parameter(name) || IsOutput(outputs, contract, name)) continue;
      std::string columns;
      for (const OutputColumn& column : contract.columns) columns += (columns.empty() ? "" : ", ") + column.name;
      std::string hint = "storage expressions may use only the model's output columns: " + Excerpt(columns);
      if (key_name == "order_by" && name == "_replay_timestamp") {
        hint +=
            " (order_by defaults to [\"_replay_timestamp\"]; set order_by in the MODEL header or output that column)";
      }
      Fail("SLU-MODEL-111", at(token.begin), shown() + " uses `" + name + "`, which is not an output column", hint);
    }
  }

  const ModelContractInput& input_;
  std::string_view text_;
};

}  // namespace

std::optional<LineageMode> LineageModeNamed(std::string_view name) {
  if (name == "offsets") return LineageMode::kOffsets;
  if (name == "timestamp") return LineageMode::kTimestamp;
  if (name == "landed_at") return LineageMode::kLandedAt;
  if (name == "cursor") return LineageMode::kCursor;
  return std::nullopt;
}

std::span<const std::string_view> LineageColumns(LineageMode mode) {
  static constexpr std::string_view kOffsets[] = {"_replay_partition", "_replay_offset"};
  static constexpr std::string_view kTimestamp[] = {"_replay_timestamp"};
  static constexpr std::string_view kLandedAt[] = {"_replay_landed_at"};
  static constexpr std::string_view kCursor[] = {"_replay_cursor"};
  switch (mode) {
    case LineageMode::kOffsets:
      return kOffsets;
    case LineageMode::kTimestamp:
      return kTimestamp;
    case LineageMode::kLandedAt:
      return kLandedAt;
    case LineageMode::kCursor:
      return kCursor;
  }
  return {};
}

ModelContract CheckModelContract(const ModelContractInput& input) { return ContractChecker(input).Run(); }

bool HasLineageColumns(const ModelContract& contract, LineageMode lineage, sql::Dialect dialect) {
  // ClickHouse names are case-sensitive; the other dialects fold case (the lineage names are lower case).
  auto same = [dialect](std::string_view output, std::string_view lineage_column) {
    if (dialect == sql::Dialect::kClickHouse) return output == lineage_column;
    return output.size() == lineage_column.size() && std::equal(output.begin(), output.end(), lineage_column.begin(),
                                                                [](char a, char b) { return LowerAscii(a) == b; });
  };
  for (std::string_view column : LineageColumns(lineage)) {
    bool found = std::any_of(contract.columns.begin(), contract.columns.end(),
                             [&](const OutputColumn& output) { return same(output.name, column); });
    if (!found) return false;
  }
  return true;
}

unsigned LineageModesOf(const ModelContract& contract, sql::Dialect dialect) {
  unsigned modes = 0;
  for (LineageMode mode :
       {LineageMode::kOffsets, LineageMode::kTimestamp, LineageMode::kLandedAt, LineageMode::kCursor}) {
    if (HasLineageColumns(contract, mode, dialect)) modes |= LineageModeBit(mode);
  }
  return modes;
}

ModelColumns ModelColumnsOf(const std::vector<OutputColumn>& columns) {
  size_t text_bytes = 0;
  for (const OutputColumn& column : columns) text_bytes += column.name.size() + column.type_text.size();
  ModelColumns model_columns;
  model_columns.reserve(columns.size(), text_bytes);
  for (const OutputColumn& column : columns) model_columns.push_back(column.name, column.type_text);
  return model_columns;
}

}  // namespace sluice
