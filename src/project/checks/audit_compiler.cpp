// Audits: concrete `audits/**/*.sql`, generic `audits/generic/*.sql` definitions, their MODEL-header
// invocations, and the severity / cadence / warmup policy.
#include <algorithm>
#include <filesystem>
#include <list>
#include <map>
#include <set>

#include "core/asset_key.hpp"
#include "core/file_system.hpp"
#include "project/checks/check_files.hpp"
#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::checks {

namespace {

using sql::Token;
using sql::TokenKind;

constexpr std::string_view kGenericFolder = "audits/generic";
const std::vector<std::string> kReservedArguments = {"severity", "description", "name", "every", "warmup", "scheduled"};

std::string Joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

bool IsReserved(const std::string& name) {
  return std::find(kReservedArguments.begin(), kReservedArguments.end(), name) != kReservedArguments.end();
}

// The settings an AUDIT header or a generic invocation may give.
struct AuditSettings {
  std::optional<AuditSeverity> severity;
  std::optional<std::string> description;
  std::optional<std::string> name;
  std::optional<int64_t> every;
  std::optional<int64_t> warmup;
  std::optional<bool> scheduled;
  size_t every_at = 0;
  size_t scheduled_at = 0;
};

// Applies one reserved setting; false when `entry` is not one. Wrong types fail with `code`.
bool ApplySetting(const CheckFile& file, const HeaderEntry& entry, AuditSettings& settings, const char* code) {
  const HeaderValue& value = entry.value;
  const auto* text = std::get_if<std::string>(&value.value);
  auto duration = [&](bool positive) -> int64_t {
    std::optional<int64_t> seconds;
    if (const auto* integer = std::get_if<int64_t>(&value.value)) seconds = *integer;
    if (text != nullptr) seconds = ParseAuditDuration(*text);
    if (!seconds || *seconds < 0 || (positive && *seconds == 0)) {
      file.Fail(value.offset, code,
                "`" + entry.key + "` must be a " + (positive ? "positive " : "") + "duration, not " +
                    (text ? "'" + *text + "'" : DescribeHeaderValue(value)),
                "write seconds or <n>s, <n>m, <n>h, <n>d, e.g. " + entry.key + " \"10m\"");
    }
    return *seconds;
  };
  if (entry.key == "severity") {
    if (text != nullptr && *text == "error") {
      settings.severity = AuditSeverity::kError;
    } else if (text != nullptr && *text == "warning") {
      settings.severity = AuditSeverity::kWarning;
    } else {
      file.Fail(value.offset, code, "`severity` must be error or warning", "write severity error or severity warning");
    }
  } else if (entry.key == "description" || entry.key == "name") {
    if (text == nullptr || TrimSpace(*text).empty()) {
      file.Fail(value.offset, code, "`" + entry.key + "` must be a non-empty string, not " + DescribeHeaderValue(value),
                entry.key + " \"…\"");
    }
    if (entry.key == "description") {
      settings.description = std::string(TrimSpace(*text));
    } else {
      std::string name = CheckedName(*text);
      if (name.empty()) {
        file.Fail(value.offset, "SLU-AUDIT-004", "audit name '" + *text + "' cannot be used as a file name",
                  "leave out `/`, `\\` and control characters");
      }
      settings.name = name;
    }
  } else if (entry.key == "every") {
    settings.every = duration(true);
    settings.every_at = value.offset;
  } else if (entry.key == "warmup") {
    settings.warmup = duration(false);
  } else if (entry.key == "scheduled") {
    const auto* flag = std::get_if<bool>(&value.value);
    if (flag == nullptr) {
      file.Fail(value.offset, code, "`scheduled` must be true or false, not " + DescribeHeaderValue(value),
                "write scheduled true or scheduled false");
    }
    settings.scheduled = *flag;
    settings.scheduled_at = value.offset;
  } else {
    return false;
  }
  return true;
}

// `<namespace>.<relation>`, quoted by the dialect unless both are plain identifiers.
std::string RelationText(sql::Dialect dialect, const ModelCheckInput& model) {
  if (IsIdentifier(model.name_space) && IsIdentifier(model.relation_name)) {
    return std::string(model.name_space) + "." + std::string(model.relation_name);
  }
  return sql::QualifiedName(dialect, model.name_space, model.relation_name);
}

// An audit before the policy is applied.
struct AuditDraft {
  AuditSpec spec;
  AuditSettings settings;
  const CheckFile* file = nullptr;
  size_t at = 0;  // where to blame the audit as a whole
};

// The query of an AUDIT block: text range without the trailing `;`; one statement starting SELECT/WITH/(.
std::pair<size_t, size_t> QueryRange(const CheckFile& file, const SqlBlock& block) {
  const std::vector<Token>& tokens = block.tokens;
  if (tokens.empty() || (tokens.size() == 1 && IsPunctuation(tokens[0], ";"))) {
    file.Fail(block.header.end, "SLU-AUDIT-002", "no query after this AUDIT header",
              "write one SELECT returning the failing rows after AUDIT (…);");
  }
  const Token& first = tokens.front();
  if (!IsWord(first, "SELECT") && !IsWord(first, "WITH") && !IsPunctuation(first, "(")) {
    file.Fail(first.begin, "SLU-AUDIT-002", "an audit query is a SELECT, found `" + std::string(first.text) + "`",
              "write one SELECT returning the failing rows");
  }
  size_t end = tokens.back().end;
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (IsPunctuation(tokens[i], "(")) ++depth;
    if (IsPunctuation(tokens[i], ")")) --depth;
    if (depth != 0 || !IsPunctuation(tokens[i], ";")) continue;
    if (i + 1 < tokens.size()) {
      file.Fail(tokens[i + 1].begin, "SLU-AUDIT-002", "an AUDIT block holds one statement",
                "start another audit with AUDIT (…); at the beginning of a line, or remove the `;`");
    }
    end = tokens[i].begin;
  }
  return {first.begin, end};
}

// A generic definition's query, split into literal text and parameters.
struct TemplatePiece {
  std::string text;  // literal text, or the parameter name
  bool parameter = false;
  bool quoted = false;  // `@'p'`
};

struct GenericDefinition {
  std::string name;
  std::string file;
  std::vector<TemplatePiece> pieces;
  std::vector<std::string> parameters;  // first-use order
};

bool IsIdentifierStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

class AuditCompiler {
 public:
  AuditCompiler(const ChecksInput& input, const ModelIndex& models) : input_(input), models_(models) {
    for (const std::string& source : input.sources) sources_.insert(source);
  }

  std::vector<AuditSpec> Compile() {
    for (const std::string& relative : DiscoverSqlFiles(input_.root, "audits", std::string(kGenericFolder))) {
      LoadConcrete(relative);
    }
    for (const std::string& relative : DiscoverSqlFiles(input_.root, std::string(kGenericFolder))) {
      LoadDefinition(relative);
    }
    // The models that declare audits, in name order (no copy of an audit-free model).
    std::vector<const ModelCheckInput*> models;
    for (const ModelCheckInput& model : input_.models) {
      if (model.audits != nullptr && (model.audits->audits || !model.audits->columns.empty())) {
        models.push_back(&model);
      }
    }
    std::sort(models.begin(), models.end(),
              [](const ModelCheckInput* a, const ModelCheckInput* b) { return a->name < b->name; });
    for (const ModelCheckInput* model : models) {
      const CheckFile& file = files_.emplace_back(CheckFile{std::string(model->file), std::string(model->text)});
      if (model->audits->audits) Invoke(file, *model, *model->audits->audits, nullptr);
      for (const ColumnAudits& column : model->audits->columns) Invoke(file, *model, column.audits, &column.column);
    }

    std::map<std::string, const AuditDraft*> names, paths;
    std::vector<AuditSpec> audits;
    for (AuditDraft& draft : drafts_) {
      ApplyPolicy(draft);
      if (auto [it, inserted] = names.emplace(draft.spec.name, &draft); !inserted) {
        draft.file->Fail(draft.at, "SLU-AUDIT-003",
                         "audit name '" + draft.spec.name + "' is already used in " + it->second->spec.file,
                         "audit names are unique across the project; set `name`");
      }
      if (auto [it, inserted] = paths.emplace(draft.spec.path, &draft); !inserted) {
        draft.file->Fail(
            draft.at, "SLU-AUDIT-016",
            "audits '" + it->second->spec.name + "' and '" + draft.spec.name + "' both compile to " + draft.spec.path,
            "rename one of them");
      }
      audits.push_back(draft.spec);
    }
    std::sort(audits.begin(), audits.end(), [](const AuditSpec& a, const AuditSpec& b) { return a.name < b.name; });
    return audits;
  }

 private:
  void LoadConcrete(const std::string& relative) {
    const CheckFile& file = files_.emplace_back(CheckFile{relative, ReadFileInside(input_.root, relative)});
    std::vector<SqlBlock> blocks = SplitBlocks(file, "AUDIT", input_.dialect);
    std::filesystem::path inside = std::filesystem::path(relative).lexically_relative("audits");
    std::string stem = inside.stem().string();
    std::string folder = inside.parent_path().generic_string();
    for (const SqlBlock& block : blocks) {
      AuditDraft draft;
      draft.file = &file;
      draft.at = block.header.begin;
      for (const HeaderEntry& entry : block.header.entries) {
        if (!ApplySetting(file, entry, draft.settings, "SLU-AUDIT-001")) {
          file.Fail(entry.key_offset, "SLU-AUDIT-001", "unknown AUDIT key '" + entry.key + "'",
                    "AUDIT takes " + Joined(kReservedArguments, ", "));
        }
      }
      if (blocks.size() > 1 && !draft.settings.name) {
        file.Fail(block.header.begin, "SLU-AUDIT-003", "this file has several AUDIT blocks, so each needs a name",
                  R"(write AUDIT (name "…");)");
      }
      auto [begin, end] = QueryRange(file, block);
      ExpandedSql query = ExpandRange(file, begin, end, input_.dialect, input_.expand_macros, "SLU-AUDIT-015");
      AuditSpec& spec = draft.spec;
      spec.origin = AuditOrigin::kConcrete;
      spec.file = relative;
      spec.at = LocationAt(relative, file.text, block.header.begin);
      spec.name = draft.settings.name.value_or(CheckedName(stem));
      if (spec.name.empty()) {
        file.Fail(block.header.begin, "SLU-AUDIT-004", "the file name cannot name the audit",
                  R"(write AUDIT (name "…");)");
      }
      spec.path = "compiled/audits/" + (folder.empty() ? "" : folder + "/") + stem +
                  (draft.settings.name ? "__" + spec.name : "") + ".sql";
      Resolve(draft, query.text, query.references, [&](size_t offset) { return query.Locate(offset); });
      drafts_.push_back(std::move(draft));
    }
  }

  void LoadDefinition(const std::string& relative) {
    const CheckFile& file = files_.emplace_back(CheckFile{relative, ReadFileInside(input_.root, relative)});
    std::vector<SqlBlock> blocks = SplitBlocks(file, "AUDIT", input_.dialect);
    GenericDefinition definition;
    definition.name = std::filesystem::path(relative).stem().string();
    definition.file = relative;
    if (blocks.size() != 1) {
      file.Fail(blocks[1].header.begin, "SLU-AUDIT-006", "a generic audit definition holds exactly one AUDIT block",
                "move the second audit to a file of its own");
    }
    const SqlBlock& block = blocks.front();
    if (!block.header.entries.empty()) {
      file.Fail(block.header.entries.front().key_offset, "SLU-AUDIT-006",
                "a generic audit definition has an empty header: AUDIT ();",
                "severity, name and the other settings are given where the audit is invoked");
    }
    auto [begin, end] = QueryRange(file, block);
    ExpandedSql query = ExpandRange(file, begin, end, input_.dialect, input_.expand_macros, "SLU-AUDIT-015", false);
    std::vector<Token> tokens = TokenizeExpanded(file, query, input_.dialect);
    const std::string& text = query.text;
    size_t copied = 0;
    auto literal_to = [&](size_t offset) {
      if (offset > copied) definition.pieces.push_back({text.substr(copied, offset - copied), false, false});
      copied = std::max(copied, offset);
    };
    auto parameter = [&](const std::string& name, bool quoted, size_t offset) {
      if (IsReserved(name)) {
        file.Fail(query.Locate(offset), "SLU-AUDIT-006", "parameter @" + name + " is a reserved audit setting",
                  "rename the parameter; reserved: " + Joined(kReservedArguments, ", "));
      }
      definition.pieces.push_back({name, true, quoted});
      if (std::find(definition.parameters.begin(), definition.parameters.end(), name) == definition.parameters.end()) {
        definition.parameters.push_back(name);
      }
    };
    for (size_t k = 0; k < tokens.size(); ++k) {
      const Token& token = tokens[k];
      bool at_sign = token.kind == TokenKind::kOperator && token.text == "@" && k + 1 < tokens.size() &&
                     tokens[k + 1].begin == token.end &&
                     (token.begin == 0 || !sql::IsIdentifierChar(text[token.begin - 1]));
      if (at_sign) {
        const Token& next = tokens[k + 1];
        std::string value = sql::TokenValue(next, input_.dialect);
        bool call = k + 2 < tokens.size() && IsPunctuation(tokens[k + 2], "(") && tokens[k + 2].begin == next.end;
        if (next.kind == TokenKind::kString && next.text.front() == '\'' && IsIdentifier(value)) {
          literal_to(token.begin);
          parameter(value, true, token.begin);
          copied = next.end;
          ++k;
        } else if (next.kind == TokenKind::kWord && IsIdentifierStart(next.text.front()) && !call) {
          literal_to(token.begin);
          parameter(value, false, token.begin);
          copied = next.end;
          ++k;
        }
      } else if (token.kind == TokenKind::kString || token.kind == TokenKind::kQuotedIdentifier) {
        // `__ref("@model")`: raw parameters inside quoted text.
        for (size_t i = token.begin; i + 1 < token.end; ++i) {
          if (text[i] != '@' || !IsIdentifierStart(text[i + 1]) || sql::IsIdentifierChar(text[i - 1])) continue;
          size_t stop = i + 1;
          while (stop < token.end && sql::IsIdentifierChar(text[stop]) && text[stop] != '$') ++stop;
          literal_to(i);
          parameter(text.substr(i + 1, stop - i - 1), false, i);
          copied = stop;
          i = stop - 1;
        }
      }
    }
    literal_to(text.size());
    if (auto [it, inserted] = definitions_.emplace(definition.name, definition); !inserted) {
      file.Fail(0, "SLU-AUDIT-007",
                "generic audit '" + definition.name + "' is defined twice: " + it->second.file + " and " + relative,
                "generic audit names (file stems) are unique");
    }
  }

  // The text a bare header word was written as (numbers and booleans keep their spelling).
  static std::string Spelling(const ModelCheckInput& model, const HeaderValue& value) {
    if (const auto* text = std::get_if<std::string>(&value.value)) return *text;
    size_t end = value.offset;
    while (end < model.text.size() && !std::isspace(static_cast<unsigned char>(model.text[end])) &&
           std::string_view("()[],;").find(model.text[end]) == std::string_view::npos) {
      ++end;
    }
    if (end > value.offset) return std::string(model.text.substr(value.offset, end - value.offset));
    if (const auto* integer = std::get_if<int64_t>(&value.value)) return std::to_string(*integer);
    if (const auto* flag = std::get_if<bool>(&value.value)) return *flag ? "true" : "false";
    return std::to_string(std::get<double>(value.value));
  }

  std::string RenderArgument(const CheckFile& file, const ModelCheckInput& model, const std::string& parameter,
                             const HeaderValue& value, bool quoted) const {
    auto scalar = [&](const HeaderValue& item) -> std::optional<std::string> {
      if (std::holds_alternative<HeaderNull>(item.value) || std::holds_alternative<HeaderList>(item.value) ||
          std::holds_alternative<HeaderMap>(item.value)) {
        return std::nullopt;
      }
      if (quoted) {
        const auto* text = std::get_if<std::string>(&item.value);
        if (text == nullptr) return std::nullopt;
        return sql::QuoteString(input_.dialect, *text);
      }
      return Spelling(model, item);
    };
    std::string wanted = quoted ? "a string or a list of strings" : "a string, a number, a boolean or a list of them";
    auto fail = [&](const HeaderValue& at) {
      file.Fail(at.offset, "SLU-AUDIT-011",
                "argument `" + parameter + "` must be " + wanted + ", not " + DescribeHeaderValue(at),
                quoted ? "@'" + parameter + "' renders string literals" : "@" + parameter + " renders the text as is");
    };
    if (const auto* list = std::get_if<HeaderList>(&value.value)) {
      std::vector<std::string> items;
      for (const HeaderValue& item : *list) {
        std::optional<std::string> rendered = scalar(item);
        if (!rendered) fail(item);
        items.push_back(*rendered);
      }
      return Joined(items, ", ");
    }
    std::optional<std::string> rendered = scalar(value);
    if (!rendered) fail(value);
    return *rendered;
  }

  // The generic invocations of one `audits [...]` list; `column` is null at model level.
  void Invoke(const CheckFile& file, const ModelCheckInput& model, const HeaderValue& audits,
              const std::string* column) {
    const auto* list = std::get_if<HeaderList>(&audits.value);
    const std::string usage = R"(write audits [not_null, accepted_values (values ["a", "b"])])";
    if (list == nullptr) {
      file.Fail(audits.offset, "SLU-AUDIT-008", "`audits` must be a list, not " + DescribeHeaderValue(audits), usage);
    }
    std::map<std::string, std::string> implicit = {{"model", std::string(model.name)}};
    if (column != nullptr) implicit.emplace("column", *column);
    std::string name_prefix = std::string(model.name) + (column ? "." + *column : "");
    size_t index = 0;
    for (const HeaderValue& item : *list) {
      ++index;
      std::string definition_name;
      HeaderMap arguments;
      if (const auto* text = std::get_if<std::string>(&item.value)) {
        definition_name = *text;
      } else if (const auto* call = std::get_if<HeaderMap>(&item.value);
                 call != nullptr && call->size() == 1 && std::holds_alternative<HeaderMap>(call->front().value.value)) {
        definition_name = call->front().key;
        arguments = std::get<HeaderMap>(call->front().value.value);
      } else {
        file.Fail(item.offset, "SLU-AUDIT-008", "an audit invocation is `name` or `name (argument value, …)`", usage);
      }
      auto definition = definitions_.find(definition_name);
      if (definition == definitions_.end()) {
        std::vector<std::string> known;
        for (const auto& [name, unused] : definitions_) known.push_back(name);
        file.Fail(item.offset, "SLU-AUDIT-009", "unknown generic audit '" + definition_name + "'",
                  known.empty() ? "define it in audits/generic/" + definition_name + ".sql"
                                : "known generic audits: " + Joined(known, ", "));
      }
      const GenericDefinition& generic = definition->second;
      AuditDraft draft;
      draft.file = &file;
      draft.at = item.offset;
      std::map<std::string, const HeaderValue*> given;
      for (const HeaderEntry& argument : arguments) {
        if (ApplySetting(file, argument, draft.settings, "SLU-AUDIT-011")) continue;
        if (auto it = implicit.find(argument.key); it != implicit.end()) {
          const auto* text = std::get_if<std::string>(&argument.value.value);
          if (text == nullptr || *text != it->second) {
            file.Fail(argument.key_offset, "SLU-AUDIT-010",
                      "`" + argument.key + "` is implicit here ('" + it->second + "') and cannot be overridden",
                      "remove the argument");
          }
          continue;
        }
        if (std::find(generic.parameters.begin(), generic.parameters.end(), argument.key) == generic.parameters.end()) {
          file.Fail(argument.key_offset, "SLU-AUDIT-010",
                    "generic audit '" + generic.name + "' has no parameter '" + argument.key + "'",
                    "its parameters: " + (generic.parameters.empty() ? "none" : Joined(generic.parameters, ", ")) +
                        "; settings: " + Joined(kReservedArguments, ", "));
        }
        given.emplace(argument.key, &argument.value);
      }
      std::vector<std::string> missing;
      for (const std::string& parameter : generic.parameters) {
        if (!given.count(parameter) && !implicit.count(parameter)) missing.push_back(parameter);
      }
      if (!missing.empty()) {
        file.Fail(item.offset, "SLU-AUDIT-010",
                  "generic audit '" + generic.name + "' needs argument" + (missing.size() > 1 ? "s " : " ") +
                      Joined(missing, ", "),
                  "write " + generic.name + " (" + missing.front() + " …)");
      }
      std::string rendered;
      for (const TemplatePiece& piece : generic.pieces) {
        if (!piece.parameter) {
          rendered += piece.text;
        } else if (auto it = given.find(piece.text); it != given.end()) {
          rendered += RenderArgument(file, model, piece.text, *it->second, piece.quoted);
        } else {
          const std::string& value = implicit.at(piece.text);
          rendered += piece.quoted ? sql::QuoteString(input_.dialect, value) : value;
        }
      }
      std::vector<sql::ReferenceCall> references;
      try {
        references = sql::FindReferences(rendered, input_.dialect, generic.file);
      } catch (const Error& error) {
        const Diagnostic& first = error.diagnostics().front();
        file.Fail(item.offset, first.code, first.message + " (in generic audit '" + generic.name + "' as invoked here)",
                  first.hint);
      }
      AuditSpec& spec = draft.spec;
      spec.origin = AuditOrigin::kGeneric;
      spec.definition = generic.name;
      spec.file = model.file;
      spec.at = LocationAt(spec.file, file.text, item.offset);
      spec.name =
          draft.settings.name.value_or(CheckedName(name_prefix + "." + generic.name + "." + std::to_string(index)));
      if (spec.name.empty()) {
        file.Fail(item.offset, "SLU-AUDIT-004", "the default audit name cannot be a file name",
                  "set name \"…\" on the invocation");
      }
      std::filesystem::path model_file(model.file);
      std::string folder = model_file.parent_path().generic_string();
      spec.path = "compiled/audits/" + (folder.empty() ? "" : folder + "/") + model_file.stem().string() + "__" +
                  spec.name + ".sql";
      Resolve(draft, rendered, references, [&](size_t) { return item.offset; });
      drafts_.push_back(std::move(draft));
    }
  }

  // Checks the references of an audit query and replaces them with relations.
  void Resolve(AuditDraft& draft, const std::string& query, const std::vector<sql::ReferenceCall>& references,
               const std::function<size_t(size_t)>& locate) {
    const CheckFile& file = *draft.file;
    if (references.empty()) {
      file.Fail(draft.at, "SLU-AUDIT-005", "audit '" + draft.spec.name + "' reads no model",
                "read the audited model with __ref(\"model\")");
    }
    for (const sql::ReferenceCall& reference : references) {
      if (reference.kind == sql::ReferenceKind::kSource) {
        file.Fail(locate(reference.begin), "SLU-AUDIT-005", "audits read models, not __source(...)",
                  "audit the model that reads this source with __ref(\"model\")");
      }
      if (models_.Find(reference.name) == nullptr) {
        bool source = sources_.count(reference.name) > 0;
        file.Fail(locate(reference.begin), "SLU-AUDIT-005",
                  source ? "'" + reference.name + "' is a source; audits read models"
                         : "unknown model '" + reference.name + "'",
                  source ? "audit the model that reads this source" : "reference a model of the project");
      }
      auto& models = draft.spec.referenced_models;
      if (std::find(models.begin(), models.end(), reference.name) == models.end()) models.push_back(reference.name);
    }
    const std::string replaced = ReplaceReferences(query, references, [&](const sql::ReferenceCall& call) {
      return RelationText(input_.dialect, models_.At(call.name));
    });
    const std::string resolved = sql::StripTrailingSemicolons(TrimSpace(replaced), input_.dialect);
    draft.spec.sql = resolved + "\n";
    bool clickhouse = input_.dialect == sql::Dialect::kClickHouse;
    std::string alias = clickhouse ? "" : " AS audit_rows";
    draft.spec.failure_count_sql =
        std::string(clickhouse ? "SELECT count()" : "SELECT count(*)") + " FROM (\n" + resolved + "\n)" + alias;
    draft.spec.sample_sql =
        "SELECT * FROM (\n" + resolved + "\n)" + alias + " LIMIT " + std::to_string(kAuditSampleRows);
  }

  void ApplyPolicy(AuditDraft& draft) const {
    const AuditSettings& settings = draft.settings;
    AuditSpec& spec = draft.spec;
    std::vector<EffectiveAuditDefaults> inherited;
    for (const std::string& model : spec.referenced_models)
      inherited.push_back(EffectiveDefaults(input_, models_.At(model)));
    bool any_error = std::any_of(inherited.begin(), inherited.end(),
                                 [](const EffectiveAuditDefaults& d) { return d.severity == AuditSeverity::kError; });
    spec.severity = settings.severity.value_or(any_error ? AuditSeverity::kError : AuditSeverity::kWarning);
    int64_t warmup = 0;
    for (const EffectiveAuditDefaults& d : inherited) warmup = std::max(warmup, d.warmup_seconds);
    spec.warmup_seconds = settings.warmup.value_or(warmup);
    spec.description = settings.description;
    std::optional<int64_t> every = settings.every;
    if (!every && settings.scheduled != false) {
      std::set<int64_t> cadences;
      for (const EffectiveAuditDefaults& d : inherited) {
        if (d.every_seconds) cadences.insert(*d.every_seconds);
      }
      if (cadences.size() > 1) {
        std::vector<std::string> shown;
        for (int64_t cadence : cadences) shown.push_back(std::to_string(cadence) + "s");
        draft.file->Fail(draft.at, "SLU-AUDIT-012",
                         "audit '" + spec.name + "' inherits different cadences (" + Joined(shown, ", ") +
                             ") from the models it reads",
                         "set `every` on the audit");
      }
      if (!cadences.empty()) every = *cadences.begin();
    }
    if (settings.scheduled == false) every.reset();
    if (settings.scheduled == true && !every) {
      draft.file->Fail(settings.scheduled_at, "SLU-AUDIT-013",
                       "audit '" + spec.name + "' is scheduled but has no cadence",
                       "set `every` on the audit or audit_defaults.every on the pipeline");
    }
    spec.every_seconds = every;
    spec.scheduled = every.has_value();
    if (spec.scheduled && spec.origin == AuditOrigin::kConcrete && !settings.name) {
      draft.file->Fail(draft.at, "SLU-AUDIT-014", "scheduled audit '" + spec.name + "' needs an explicit name",
                       R"(a scheduled audit keeps its history under its name: write AUDIT (name "…", …);)");
    }
  }

  const ChecksInput& input_;
  const ModelIndex& models_;
  std::set<std::string> sources_;
  std::list<CheckFile> files_;  // stable addresses: drafts point at their file
  std::map<std::string, GenericDefinition> definitions_;
  std::vector<AuditDraft> drafts_;
};

}  // namespace

std::vector<AuditSpec> CompileAudits(const ChecksInput& input, const ModelIndex& models) {
  return AuditCompiler(input, models).Compile();
}

}  // namespace sluice::checks
