#include "project/checks/checks.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

#include "core/file_system.hpp"
#include "project/checks/check_files.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace checks {

namespace {

// `text` with everything outside [begin, end) blanked (newlines kept), so scanning it reports offsets and
// line:column of the whole file while seeing only the range.
// Runs `scan` on file.text[begin, end) alone, so a range costs its own length rather than the file's (a test
// of thousands of CTEs stays linear). A sluice::Error it raises is rethrown at the same place in the file.
template <typename Scan>
auto ScanRange(const CheckFile& file, size_t begin, size_t end, Scan scan) {
  std::string_view range = std::string_view(file.text).substr(begin, end - begin);
  try {
    return scan(range);
  } catch (const Error& error) {
    SourceLocation origin = LocationAt(file.file, file.text, begin);
    std::vector<Diagnostic> located;
    for (const Diagnostic& diagnostic : error.diagnostics()) {
      SourceLocation at = diagnostic.location;
      if (at.line == 1) at.column += origin.column - 1;
      if (at.line >= 1) at.line += origin.line - 1;
      located.push_back(MakeDiagnostic(diagnostic.code, diagnostic.message, at, diagnostic.hint, file.text));
    }
    throw Error(std::move(located));
  }
}

bool FirstOnLine(const std::string& text, size_t offset) {
  while (offset > 0 && (text[offset - 1] == ' ' || text[offset - 1] == '\t')) --offset;
  return offset == 0 || text[offset - 1] == '\n' || text[offset - 1] == '\r';
}

char Upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

}  // namespace

void CheckFile::Fail(size_t offset, std::string code, std::string message, std::string hint) const {
  throw Error(
      MakeDiagnostic(std::move(code), std::move(message), LocationAt(file, text, offset), std::move(hint), text));
}

Diagnostic CheckFile::Warning(size_t offset, std::string code, std::string message, std::string hint) const {
  return MakeDiagnostic(std::move(code), std::move(message), LocationAt(file, text, offset), std::move(hint), text);
}

std::vector<sql::Token> TokenizeRange(const CheckFile& file, size_t begin, size_t end, sql::Dialect dialect) {
  std::vector<sql::Token> tokens = ScanRange(
      file, begin, end, [&](std::string_view range) { return sql::TokenizeSignificant(range, dialect, file.file); });
  std::string_view text(file.text);
  for (sql::Token& token : tokens) {
    token.begin += begin;
    token.end += begin;
    token.text = text.substr(token.begin, token.end - token.begin);
  }
  return tokens;
}

bool IsPunctuation(const sql::Token& token, std::string_view text) {
  return token.kind == sql::TokenKind::kPunctuation && token.text == text;
}

bool IsWord(const sql::Token& token, std::string_view upper_word) {
  if (token.kind != sql::TokenKind::kWord || token.text.size() != upper_word.size()) return false;
  for (size_t i = 0; i < upper_word.size(); ++i) {
    if (Upper(token.text[i]) != upper_word[i]) return false;
  }
  return true;
}

std::vector<SqlBlock> SplitBlocks(const CheckFile& file, std::string_view keyword, sql::Dialect dialect) {
  std::vector<SqlBlock> blocks;
  size_t offset = 0;
  while (true) {
    SqlBlock block;
    block.header = ParseHeaderBlock(file.text, offset, keyword, file.file);
    block.body_begin = block.header.end;
    std::vector<sql::Token> tokens = TokenizeRange(file, block.body_begin, file.text.size(), dialect);
    size_t next = tokens.size();
    int depth = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const sql::Token& token = tokens[i];
      if (IsPunctuation(token, "(")) ++depth;
      if (IsPunctuation(token, ")")) --depth;
      if (depth == 0 && token.kind == sql::TokenKind::kWord && token.text == keyword && i + 1 < tokens.size() &&
          IsPunctuation(tokens[i + 1], "(") && FirstOnLine(file.text, token.begin)) {
        next = i;
        break;
      }
    }
    block.body_end = next < tokens.size() ? tokens[next].begin : file.text.size();
    tokens.resize(next);
    block.tokens = std::move(tokens);
    offset = block.body_end;
    blocks.push_back(std::move(block));
    if (offset >= file.text.size()) break;
  }
  return blocks;
}

bool IsPartitionBound(std::string_view name) { return name == "partition_start" || name == "partition_end"; }

std::optional<sql::MacroCall> FirstMacroCall(const CheckFile& file, size_t begin, size_t end, sql::Dialect dialect,
                                             bool skip_partition_bounds) {
  std::vector<sql::MacroCall> calls = ScanRange(
      file, begin, end, [&](std::string_view range) { return sql::FindMacroCalls(range, dialect, file.file); });
  for (sql::MacroCall& call : calls) {
    if (skip_partition_bounds && IsPartitionBound(call.name)) continue;
    call.begin += begin;
    call.end += begin;
    return call;
  }
  return std::nullopt;
}

std::vector<sql::Token> TokenizeExpanded(const CheckFile& file, const ExpandedSql& sql, sql::Dialect dialect) {
  std::vector<sql::Token> tokens;
  if (!sql.expanded) {
    tokens = TokenizeRange(file, sql.origin, sql.origin + sql.text.size(), dialect);
    std::string_view text(sql.text);
    for (sql::Token& token : tokens) {
      token.begin -= sql.origin;
      token.end -= sql.origin;
      token.text = text.substr(token.begin, token.end - token.begin);
    }
    return tokens;
  }
  try {
    tokens = sql::TokenizeSignificant(sql.text, dialect, file.file);
  } catch (const Error& error) {
    const Diagnostic& first = error.diagnostics().front();
    file.Fail(sql.origin, first.code, first.message + " (in the SQL produced by macros)", first.hint);
  }
  return tokens;
}

ExpandedSql ExpandRange(const CheckFile& file, size_t begin, size_t end, sql::Dialect dialect,
                        const MacroExpander& expander, const char* not_configured_code, bool scan_references,
                        bool keep_partition_bounds) {
  ExpandedSql sql;
  sql.origin = begin;
  std::optional<sql::MacroCall> call = FirstMacroCall(file, begin, end, dialect, keep_partition_bounds);
  if (!call) {
    sql.text = file.text.substr(begin, end - begin);
    if (scan_references) {
      sql.references = ScanRange(
          file, begin, end, [&](std::string_view range) { return sql::FindReferences(range, dialect, file.file); });
    }
    return sql;
  }
  if (!expander) {
    file.Fail(call->begin, not_configured_code, "macro call @" + call->name + "(…) but no macros are configured",
              "define the macro in macros/*.py, or remove the call");
  }
  sql.text = expander(file.file, file.text, begin, end);
  sql.expanded = true;
  if (scan_references) {
    try {
      sql.references = sql::FindReferences(sql.text, dialect, file.file);
    } catch (const Error& error) {
      const Diagnostic& first = error.diagnostics().front();
      file.Fail(begin, first.code, first.message + " (in the SQL produced by macros)", first.hint);
    }
  }
  return sql;
}

std::string ReplaceReferences(std::string_view text, const std::vector<sql::ReferenceCall>& references,
                              const std::function<std::string(const sql::ReferenceCall&)>& replacement) {
  std::vector<sql::SpanReplacement> replacements;
  replacements.reserve(references.size());
  for (const sql::ReferenceCall& reference : references) {
    replacements.push_back({reference.begin, reference.end, replacement(reference)});
  }
  return sql::ReplaceSpans(text, replacements);
}

std::string_view TrimSpace(std::string_view text) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::string CheckedName(std::string_view name) {
  name = TrimSpace(name);
  if (name.empty() || name == "." || name == "..") return {};
  for (char c : name) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || byte < 0x20 || byte == 0x7f) return {};
  }
  return std::string(name);
}

EffectiveAuditDefaults EffectiveDefaults(const ChecksInput& input, const ModelCheckInput& model) {
  const AuditDefaults& project = input.project_audit_defaults;
  const AuditDefaults* pipeline = nullptr;
  if (auto it = input.pipeline_audit_defaults.find(model.pipeline); it != input.pipeline_audit_defaults.end()) {
    pipeline = &it->second;
  }
  EffectiveAuditDefaults effective;
  effective.severity =
      (pipeline && pipeline->severity) ? *pipeline->severity : project.severity.value_or(AuditSeverity::kError);
  effective.every_seconds = (pipeline && pipeline->every_seconds) ? pipeline->every_seconds : project.every_seconds;
  effective.warmup_seconds =
      (pipeline && pipeline->warmup_seconds) ? *pipeline->warmup_seconds : project.warmup_seconds.value_or(0);
  return effective;
}

std::vector<std::string> DiscoverSqlFiles(const std::filesystem::path& root, const std::string& folder,
                                          const std::string& skip) {
  std::vector<std::string> files;
  if (!std::filesystem::is_directory(root / folder)) return files;
  WalkFiles(root, folder, [&](std::string&& relative, bool regular) {
    // `.sql` alone is a hidden file, not a test or an audit.
    if (!regular || !relative.ends_with(".sql") || relative[relative.size() - 5] == '/') return;
    if (!skip.empty() && relative.rfind(skip + "/", 0) == 0) return;
    files.push_back(std::move(relative));
  });
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace checks

std::optional<int64_t> ParseAuditDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t unit = 1;
  switch (text.back()) {
    case 's':
      text.remove_suffix(1);
      break;
    case 'm':
      unit = 60;
      text.remove_suffix(1);
      break;
    case 'h':
      unit = 3600;
      text.remove_suffix(1);
      break;
    case 'd':
      unit = 86400;
      text.remove_suffix(1);
      break;
    default:
      break;
  }
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > std::numeric_limits<int64_t>::max() / unit) return std::nullopt;
  return value * unit;
}

ModelAuditDeclarations AuditDeclarationsFromHeader(const HeaderMap& header) {
  ModelAuditDeclarations declarations;
  if (const HeaderEntry* audits = FindEntry(header, "audits")) declarations.audits = audits->value;
  if (const HeaderEntry* columns = FindEntry(header, "columns")) {
    if (const auto* map = std::get_if<HeaderMap>(&columns->value.value)) {
      for (const HeaderEntry& column : *map) {
        const auto* fields = std::get_if<HeaderMap>(&column.value.value);
        if (fields == nullptr) continue;
        if (const HeaderEntry* audits = FindEntry(*fields, "audits")) {
          declarations.columns.push_back(ColumnAudits{column.key, audits->value});
        }
      }
    }
  }
  return declarations;
}

namespace checks {

const ModelCheckInput* ModelIndex::Find(std::string_view name) const {
  if (!index_) {
    index_.emplace();
    index_->reserve(models_.size());
    for (size_t m = 0; m < models_.size(); ++m) index_->emplace(models_[m].name, m);
  }
  auto found = index_->find(name);
  return found == index_->end() ? nullptr : &models_[found->second];
}

const ModelCheckInput& ModelIndex::At(std::string_view name) const {
  const ModelCheckInput* model = Find(name);
  if (model == nullptr) throw std::out_of_range("no model named " + std::string(name));
  return *model;
}

}  // namespace checks

CompiledChecks CompileTestsAndAudits(const ChecksInput& input) {
  checks::ModelIndex models(input.models);

  CompiledChecks compiled;
  checks::CompiledTests tests = checks::CompileTests(input, models);
  compiled.tests = std::move(tests.tests);
  compiled.warnings = std::move(tests.warnings);
  compiled.audits = checks::CompileAudits(input, models);
  return compiled;
}

}  // namespace sluice
