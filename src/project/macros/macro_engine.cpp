#include "project/macros/macro_engine.hpp"

#include <algorithm>
#include <map>
#include <system_error>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "core/sha256.hpp"
#include "project/macros/macro_arguments.hpp"
#include "project/macros/macro_interpreter.hpp"
#include "sql/reference_scanner.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kBuiltins[] = {"partition_start", "partition_end"};
constexpr size_t kListedMacros = 20;
constexpr size_t kQuotedBytes = 80;
constexpr std::string_view kKafkaNamingSetting = "defaults.sources.kafka.naming_macro";
constexpr std::string_view kPipelineNamingSetting = "naming.pipeline_naming_macro";

bool IsBuiltin(std::string_view name) {
  return std::find(std::begin(kBuiltins), std::end(kBuiltins), name) != std::end(kBuiltins);
}

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

// `[A-Za-z_][A-Za-z0-9_]*`, ASCII only.
bool IsSourceName(std::string_view text) {
  if (text.empty() || !IsNameStart(text.front())) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); });
}

// `text` in single quotes for a message: quotes, backslashes and control bytes escaped, cut after
// kQuotedBytes bytes (at a UTF-8 character boundary).
std::string Quoted(std::string_view text) {
  std::string out = "'";
  size_t end = std::min(text.size(), kQuotedBytes);
  while (end < text.size() && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  constexpr char kHex[] = "0123456789abcdef";
  for (char c : text.substr(0, end)) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  out += '\'';
  if (end < text.size()) out += "… (" + std::to_string(text.size()) + " bytes)";
  return out;
}

// "a, b, c" of the first kListedMacros names, then how many more.
std::string KnownMacros(const std::vector<MacroDefinition>& macros) {
  std::string known;
  for (size_t i = 0; i < macros.size() && i < kListedMacros; ++i) known += (i ? ", " : "") + macros[i].name;
  if (macros.size() > kListedMacros) known += ", … (" + std::to_string(macros.size() - kListedMacros) + " more)";
  return known;
}

std::string Where(const MacroDefinition& definition) { return definition.file + ":" + std::to_string(definition.line); }

// Public `macros/**/*.py`: no file or folder whose name starts with `_` (so no `__init__.py`), sorted by path.
std::vector<fs::path> DiscoverMacroFiles(const fs::path& root) {
  fs::path directory = root / "macros";
  std::error_code error;
  if (!fs::is_directory(directory, error)) return {};
  auto fail = [&](const std::error_code& code) {
    throw Error(MakeDiagnostic("SLU-MACRO-001", "cannot list the macros folder: " + code.message(),
                               SourceLocation{"macros", 0, 0}, "check the folder's permissions"));
  };
  std::vector<fs::path> files;
  fs::recursive_directory_iterator it(directory, fs::directory_options::skip_permission_denied, error);
  if (error) fail(error);
  for (; it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) fail(error);
    const fs::path& path = it->path();
    bool is_private = path.filename().string().starts_with('_');
    if (it->is_directory(error)) {
      if (is_private) it.disable_recursion_pending();
      continue;
    }
    if (!is_private && path.extension() == ".py" && it->is_regular_file(error)) files.push_back(path);
  }
  if (error) fail(error);
  std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
    return a.lexically_relative(root).generic_string() < b.lexically_relative(root).generic_string();
  });
  return files;
}

// Moves diagnostics located relative to the body (which starts at `body_begin`) into the whole file.
Error Relocated(const Error& error, const std::string& file_text, size_t body_begin) {
  SourceLocation start = LocationAt({}, file_text, body_begin);
  std::vector<Diagnostic> diagnostics;
  for (Diagnostic diagnostic : error.diagnostics()) {
    SourceLocation& at = diagnostic.location;
    if (at.line > 0) {
      if (at.line == 1) at.column += start.column - 1;
      at.line += start.line - 1;
      diagnostic = MakeDiagnostic(diagnostic.code, diagnostic.message, at, diagnostic.hint, file_text);
    }
    diagnostics.push_back(std::move(diagnostic));
  }
  return Error(std::move(diagnostics));
}

// The name of the first user macro call `@name(` in a macro's result, if any. Quoted text and comments do not
// count; when the result is not complete SQL on its own (an open string or call), any `@name(` counts.
std::optional<std::string> FirstMacroCall(const std::string& text, sql::Dialect dialect) {
  if (text.find('@') == std::string::npos) return std::nullopt;
  try {
    for (const sql::MacroCall& call : sql::FindMacroCalls(text, dialect)) {
      if (!IsBuiltin(call.name)) return call.name;
    }
    return std::nullopt;
  } catch (const Error&) {
    // Not lexically complete SQL: fall through to the plain scan below.
  }
  for (size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at + 1)) {
    if ((at > 0 && sql::IsIdentifierChar(text[at - 1])) || at + 1 >= text.size() || !IsNameStart(text[at + 1])) {
      continue;
    }
    size_t stop = at + 1;
    while (stop < text.size() && sql::IsIdentifierChar(text[stop])) ++stop;
    std::string name = text.substr(at + 1, stop - at - 1);
    if (stop < text.size() && text[stop] == '(' && !IsBuiltin(name)) return name;
  }
  return std::nullopt;
}

}  // namespace

MacroEngine::MacroEngine() = default;
MacroEngine::~MacroEngine() = default;

std::unique_ptr<MacroEngine> MacroEngine::Load(const fs::path& root) {
  std::unique_ptr<MacroEngine> engine(new MacroEngine());
  std::vector<fs::path> files = DiscoverMacroFiles(root);
  if (files.empty()) return engine;
  engine->interpreter_ = MacroInterpreter::Start();
  std::map<std::string, MacroDefinition> by_name;
  for (const fs::path& file : files) {
    std::string relative = file.lexically_relative(root).generic_string();
    std::string text = ReadFileInside(root, relative);
    for (MacroDefinition& definition : engine->interpreter_->LoadFile(relative, fs::absolute(file), text)) {
      SourceLocation at{relative, definition.line, 1};
      if (IsBuiltin(definition.name)) {
        throw Error(MakeDiagnostic("SLU-MACRO-003",
                                   "`" + definition.name + "` is a built-in macro; a macro file cannot define it", at,
                                   "rename the function (or prefix it with `_` to keep it private)", text));
      }
      auto [existing, inserted] = by_name.try_emplace(definition.name, definition);
      if (!inserted) {
        const MacroDefinition& first = existing->second;
        throw Error(MakeDiagnostic(
            "SLU-MACRO-002",
            "macro `" + definition.name + "` is defined twice: in " + first.file + ":" + std::to_string(first.line) +
                " and in " + relative + ":" + std::to_string(definition.line),
            at, "macro names are project-wide: rename one (a name starting with `_` stays private to its file)", text));
      }
    }
  }
  for (auto& [name, definition] : by_name) engine->macros_.push_back(std::move(definition));
  return engine;
}

const MacroDefinition* MacroEngine::Find(std::string_view name) const {
  auto it = std::lower_bound(macros_.begin(), macros_.end(), name,
                             [](const MacroDefinition& macro, std::string_view key) { return macro.name < key; });
  return it != macros_.end() && it->name == name ? &*it : nullptr;
}

bool MacroEngine::PythonStarted() { return MacroInterpreter::Started(); }

std::string MacroEngine::Expand(const std::string& file, const std::string& file_text, size_t body_begin,
                                size_t body_end, const MacroContextValues& context) const {
  body_end = std::min(body_end, file_text.size());
  body_begin = std::min(body_begin, body_end);
  std::string_view body(file_text.data() + body_begin, body_end - body_begin);
  if (body.find('@') == std::string_view::npos) return std::string(body);

  sql::Dialect dialect = sql::DialectForAdapter(context.adapter_name);
  std::vector<sql::MacroCall> calls;
  try {
    calls = sql::FindMacroCalls(body, dialect, file);
  } catch (const Error& error) {
    throw Relocated(error, file_text, body_begin);
  }

  MacroSqlText sql{file, file_text};
  auto check_known = [&](const std::string& name, size_t offset) {
    if (Find(name) != nullptr) return;
    sql.Fail(offset, "SLU-MACRO-004",
             "unknown macro @" + name +
                 (macros_.empty() ? "; this project defines no macros" : "; known macros: " + KnownMacros(macros_)),
             "a macro is a public function of a public module under macros/ (names starting with `_` are private); "
             "@partition_start() and @partition_end() are built in");
  };

  std::string out;
  out.reserve(body.size());
  size_t cursor = 0;  // in body
  for (sql::MacroCall call : calls) {
    out.append(body.substr(cursor, call.begin - cursor));
    cursor = call.end;
    call.begin += body_begin;
    call.end += body_begin;
    if (IsBuiltin(call.name)) {
      if (!call.arguments.empty()) {
        sql.Fail(call.begin, "SLU-MACRO-015", "@" + call.name + "() takes no arguments",
                 "write @" + call.name + "(); it renders the run's partition window bound as a DATE literal");
      }
      out.append(file_text, call.begin, call.end - call.begin);
      continue;
    }
    check_known(call.name, call.begin);
    MacroInvocation invocation = ParseMacroInvocation(sql, call);
    std::vector<const MacroInvocation*> nested;
    CollectNestedInvocations(invocation, nested);
    for (const MacroInvocation* inner : nested) {
      if (IsBuiltin(inner->name)) {
        sql.Fail(inner->offset, "SLU-MACRO-015",
                 "@" + inner->name + "() cannot be an argument of another macro: it is rendered when the model runs",
                 "use @" + inner->name + "() directly in the SQL body");
      }
      check_known(inner->name, inner->offset);
    }
    std::string result = interpreter_->Evaluate(invocation, sql, context);
    if (std::optional<std::string> inner = FirstMacroCall(result, dialect)) {
      const MacroDefinition& definition = *Find(call.name);
      sql.Fail(call.begin, "SLU-MACRO-014",
               "macro @" + call.name + " (" + Where(definition) + ") returned SQL containing another macro call @" +
                   *inner + "(",
               "macro results are not expanded again: compose macros in Python (call the function directly)");
    }
    out += result;
  }
  out.append(body.substr(cursor));
  return out;
}

const MacroDefinition& MacroEngine::NamingMacro(const std::string& macro_name, std::string_view setting,
                                                const SourceLocation& at) const {
  if (const MacroDefinition* definition = Find(macro_name)) return *definition;
  throw Error(MakeDiagnostic(
      "SLU-MACRO-017",
      std::string(setting) + " names the macro `" + macro_name + "`, which " +
          (macros_.empty() ? "this project does not define: it defines no macros"
                           : "this project does not define; known macros: " + KnownMacros(macros_)),
      at,
      "set " + std::string(setting) +
          " to the name of a public function of a public module under macros/ (names starting with `_` are "
          "private)"));
}

std::string MacroEngine::DeriveKafkaSourceName(const std::string& macro_name, const std::string& topic,
                                               const SourceLocation& at) const {
  const MacroDefinition& definition = NamingMacro(macro_name, kKafkaNamingSetting, at);
  std::string name = interpreter_->CallNamingMacro(macro_name, topic, at);
  if (!IsSourceName(name)) {
    throw Error(MakeDiagnostic("SLU-MACRO-021",
                               "the Kafka naming macro `" + macro_name + "` (" + std::string(kKafkaNamingSetting) +
                                   ", defined at " + Where(definition) + ") derived " + Quoted(name) + " from topic " +
                                   Quoted(topic) + ", which is not a source name",
                               at,
                               "make the macro return [A-Za-z_][A-Za-z0-9_]* (ASCII letters, digits and `_`, not "
                               "starting with a digit), or set `name` on this source"));
  }
  return name;
}

void MacroEngine::CheckPipelineName(const std::string& macro_name, const PipelineNamingContextValues& context,
                                    const SourceLocation& at) const {
  const MacroDefinition& definition = NamingMacro(macro_name, kPipelineNamingSetting, at);
  std::string name = interpreter_->CallNamingMacro(macro_name, context, at);
  if (name == context.name) return;
  throw Error(MakeDiagnostic("SLU-MACRO-022",
                             "the pipeline naming macro `" + macro_name + "` (" + std::string(kPipelineNamingSetting) +
                                 ", defined at " + Where(definition) + ") returned " + Quoted(name) +
                                 " for the pipeline directory " + Quoted(context.name) + " (" +
                                 context.relative_directory + "); the result must equal the directory name",
                             at,
                             "a pipeline naming macro checks names and never renames: rename the directory to "
                             "what the macro returns, or change the macro"));
}

std::string MacroEngine::MacroFingerprint(const std::string& macro_name) const {
  const MacroDefinition* definition = Find(macro_name);
  if (definition == nullptr) {
    throw Error(MakeDiagnostic("SLU-MACRO-017", "no macro named `" + macro_name + "` to fingerprint", {},
                               "fingerprint only a macro the project defines"));
  }
  std::string bytes;
  bytes.reserve(definition->name.size() + definition->file.size() + definition->source.size() + 2);
  bytes.append(definition->name).append(1, '\0').append(definition->file).append(1, '\0').append(definition->source);
  return Sha256Hex(bytes);
}

}  // namespace sluice
