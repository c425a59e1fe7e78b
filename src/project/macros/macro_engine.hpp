// Python SQL macros (StreamBuild reference §4): loads a project's public `macros/**/*.py` into Sluice's
// embedded CPython and expands `@name(...)` calls in model, test and audit bodies.
//
// Registration: every public `macros/**/*.py` (no `__init__.py`, no path segment starting with `_`), in
// sorted path order, runs once per Load as a fresh synthetic module. Each public (no leading `_`), non-async
// function whose `__module__` is that module (imported functions are skipped) is a macro. Macro files may
// `from streambuild.compiler.macros.models import MacroContext, PipelineNamingContext` (also importable as
// `sluice.macros`). A project without macro files never starts Python.
//
// Expansion: top-level `@name(args)` calls in a body (found by sql::FindMacroCalls, so comments and strings
// are skipped) are replaced by the macro's `str` result. Arguments are Python literals parsed in C++ (str,
// int, float, bool, None, list, tuple, dict with scalar keys, unary ±, `name=value` keywords) and nested
// `@macro(...)` calls, evaluated first, whose results must be literal-compatible. A first parameter named
// `ctx` must be annotated `MacroContext` and receives the context. `@partition_start()` and
// `@partition_end()` are Sluice built-ins rendered at run time: they are left untouched, a macro result may
// contain them, and no macro file may define them.
//
// Variables: ctx.variables is a read-only mapping of the target's project variables (MacroContextValues::
// variables). A variable whose value is taken from the environment (`${ENV:…}`, directly or through other
// variables; MacroContextValues::withheld_variables) is listed by name, but its value is never passed to Python,
// so no macro result, derivation of it or error message can carry it: reading it fails the call with
// SLU-MACRO-023 even when the macro catches the exception, whether the environment variable is set or not.
// Reading a variable that is not set (`[name]`, or `.get(name)` without a default) raises a KeyError that,
// uncaught, is SLU-MACRO-024 rather than the text `None`; `.get(name, default)` returns the default.
//
// Errors: sluice::Error with one Diagnostic. Call errors are located at the `@` of the call (or at the
// offending argument) in the SQL file and, when Python is involved, the message names the macro's
// definition (`macros/x.py:LINE`) and, for an exception, the Python type, message and the line of the last
// traceback frame inside the macro's file.
//   SLU-MACRO-001  a macro file failed to load: syntax error or module-level exception (located at the
//                  macro file's line), or macros/ could not be listed
//   SLU-MACRO-002  two macro files define a macro with the same name (located at the second definition;
//                  names both files and lines)
//   SLU-MACRO-003  a macro file defines a built-in name (`partition_start`, `partition_end`)
//   SLU-MACRO-004  unknown macro `@name(`; the message lists the known macros
//   SLU-MACRO-005  an argument is not a Python literal (names, operators, sets, bytes, f-strings, complex
//                  numbers, malformed strings or numbers, non-scalar dict keys, invalid UTF-8, too deep)
//   SLU-MACRO-006  `*args` / `**kwargs` unpacking in a call, list, tuple or dict
//   SLU-MACRO-007  a keyword given twice, or a positional argument after a keyword argument
//   SLU-MACRO-008  `ctx=` passed explicitly (the context is supplied by Sluice)
//   SLU-MACRO-009  the macro's first parameter is `ctx` but is not annotated `MacroContext`
//   SLU-MACRO-010  the macro raised a Python exception
//   SLU-MACRO-011  the call's arguments do not match the macro's signature (TypeError raised by the call
//                  itself, before the macro's body ran)
//   SLU-MACRO-012  a top-level call returned something other than `str` (or a str with lone surrogates)
//   SLU-MACRO-013  a nested call returned a value that is not literal-compatible
//   SLU-MACRO-014  a top-level result contains another macro call `@name(`
//   SLU-MACRO-015  a built-in (`@partition_start`, `@partition_end`) called with arguments or nested in
//                  another macro's arguments
//   SLU-MACRO-016  the embedded Python interpreter could not start or Sluice's macro runtime failed
//   SLU-MACRO-017  a naming macro (`defaults.sources.kafka.naming_macro`, `naming.pipeline_naming_macro`) names
//                  no macro of the project (also MacroFingerprint() of an unknown name, without a location)
//   SLU-MACRO-018  a naming macro raised a Python exception
//   SLU-MACRO-019  a naming macro's parameters do not take the one argument it is given (TypeError raised by
//                  the call itself, before the macro's body ran)
//   SLU-MACRO-020  a naming macro returned something other than `str` (or a str with lone surrogates)
//   SLU-MACRO-021  the Kafka naming macro returned a str that is not a name `[A-Za-z_][A-Za-z0-9_]*`
//   SLU-MACRO-022  the pipeline naming macro returned a name other than the pipeline's directory name
//   SLU-MACRO-023  a macro read a variable whose value is taken from an environment variable (names the
//                  variable, the environment variable and the macro's line; never the value)
//   SLU-MACRO-024  a macro read a variable that is not set and did not catch the KeyError
//   plus SLU-SQL-001 / SLU-SQL-014 from the SQL scanner (unterminated string/comment, unclosed call) and
//   SLU-IO-001 when a macro file cannot be read.
//
// Naming macros (reference §4) are plain macros named by project settings and called with one positional
// argument: the Kafka naming macro `(topic) -> str` derives the name of a Kafka source declared without
// `name`; the pipeline naming macro `(ctx: PipelineNamingContext) -> str` only checks a pipeline's directory
// name (it never renames). Their errors (SLU-MACRO-017…022) are located at the setting's user (the source entry
// in its YAML file, the pipeline) and the message names the macro's definition (`macros/x.py:LINE`) and, for an
// exception, the Python type, message and the line of the last traceback frame inside the macro's file. The
// `ctx` rule for SQL calls (SLU-MACRO-009) does not apply to them; their annotations are not checked.
//
// Thread-safety: a loaded MacroEngine is immutable; Expand(), the naming calls and the accessors may be called
// from any number of threads. All Python work (loading, calls, destruction) is serialised by one process-wide
// mutex and runs with the GIL taken through PyGILState_Ensure, so any thread may use any engine; the GIL is released
// whenever Sluice is not running Python. The interpreter is started once per process, the first time an
// engine with macro files loads, and is never finalised (macros may keep threads or state alive).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"

namespace sluice {

// One registered macro, as listed in the manifest (`macros: {name: {file, source}}`).
struct MacroDefinition {
  std::string name;
  std::string file;         // relative to the project root, '/'-separated, e.g. "macros/common.py"
  int line = 0;             // 1-based line of the `def` (of its first decorator when decorated)
  std::string description;  // first paragraph of the docstring, lines joined by one space; may be empty
  std::string source;       // the function's source text (inspect.getsource); may be empty
};

// The values a macro sees as `ctx: MacroContext` (an immutable Python object).
struct MacroContextValues {
  std::string adapter_name;  // e.g. "clickhouse"; also selects the SQL lexical rules used to find calls
  std::string dialect;       // ctx.dialect
  std::optional<std::string> target_name;
  std::optional<std::string> database;
  std::optional<std::string> schema;
  bool virtual_environments = false;  // true when the model's pipeline is virtual
  // ctx.variables: a JSON object; objects become read-only mappings, arrays tuples, null None.
  nlohmann::json variables = nlohmann::json::object();
  // Variables whose values are taken from the environment: name → environment variable. Only their names
  // reach Python (a name here is never passed from `variables`); reading one is SLU-MACRO-023.
  std::map<std::string, std::string> withheld_variables;

  bool operator==(const MacroContextValues&) const = default;
};

// The values a pipeline naming macro sees as `ctx: PipelineNamingContext` (an immutable Python object).
struct PipelineNamingContextValues {
  std::string name;                        // the pipeline's directory name
  std::optional<std::string> source_name;  // the source the pipeline reads, if any
  std::vector<std::string> model_names;    // sorted (ctx.model_names is a sorted tuple either way)
  std::string relative_directory;          // "pipelines/<name>"
  std::string mode;                        // "direct" | "virtual"

  bool operator==(const PipelineNamingContextValues&) const = default;
};

class MacroInterpreter;

class MacroEngine {
 public:
  // Discovers and loads `root`/macros/**/*.py. Without macro files the engine holds no macros and Python is
  // not started. Throws SLU-MACRO-001/002/003/016 or SLU-IO-001.
  static std::unique_ptr<MacroEngine> Load(const std::filesystem::path& root);

  MacroEngine(const MacroEngine&) = delete;
  MacroEngine& operator=(const MacroEngine&) = delete;
  ~MacroEngine();

  // Every macro, sorted by name.
  const std::vector<MacroDefinition>& macros() const { return macros_; }

  // The macro named `name`, or nullptr.
  const MacroDefinition* Find(std::string_view name) const;

  // Expands the body `file_text[body_begin, body_end)` of the model/test/audit file `file` (a path relative to
  // the project root, used in diagnostics; `file_text` is that file's full text, so errors carry file
  // line:column and the caret line). Returns the body with every top-level macro call replaced by its result
  // and everything else (including `@partition_start()` / `@partition_end()`) byte-for-byte unchanged.
  // Offsets past the end of `file_text` are clamped. Throws sluice::Error (codes above).
  std::string Expand(const std::string& file, const std::string& file_text, size_t body_begin, size_t body_end,
                     const MacroContextValues& context) const;

  // The name of a Kafka source declared without `name`: the result of the Kafka naming macro `macro_name`
  // (defaults.sources.kafka.naming_macro) called as `macro_name(topic)`. Returns the result, which is a
  // `[A-Za-z_][A-Za-z0-9_]*` name (ASCII). Errors are located at `at` (the source entry in its YAML file):
  // throws SLU-MACRO-017 (no such macro; Python is not started), -018, -019, -020, -021, -016.
  std::string DeriveKafkaSourceName(const std::string& macro_name, const std::string& topic,
                                    const SourceLocation& at) const;

  // Checks a pipeline's directory name against the pipeline naming macro `macro_name`
  // (naming.pipeline_naming_macro) called as `macro_name(ctx)` with a PipelineNamingContext built from
  // `context`. Returns when the result equals `context.name`. Errors are located at `at` (the pipeline):
  // throws SLU-MACRO-017 (no such macro; Python is not started), -018, -019, -020, -022 (names both the
  // directory name and the result), -016.
  void CheckPipelineName(const std::string& macro_name, const PipelineNamingContextValues& context,
                         const SourceLocation& at) const;

  // The manifest's `name_origin.macro_fingerprint` of the macro `macro_name`: Sha256Hex (64 lowercase hex
  // characters) of the bytes
  //     name '\0' file '\0' source
  // i.e. MacroDefinition::name, ::file (relative to the project root, '/'-separated, e.g. "macros/naming.py")
  // and ::source (the function's own source text as loaded, possibly empty), each as UTF-8 with no length
  // prefix, joined by single NUL bytes (none can contain NUL: Python rejects source with NUL bytes). Helpers
  // the macro calls are not part of its source, so changing only them keeps the fingerprint. Runs no Python.
  // Throws SLU-MACRO-017 (without a location) when no macro has that name.
  std::string MacroFingerprint(const std::string& macro_name) const;

  // True once this process has started the embedded interpreter (never reset).
  static bool PythonStarted();

 private:
  MacroEngine();

  // The macro named by the naming setting `setting`, or SLU-MACRO-017 located at `at`.
  const MacroDefinition& NamingMacro(const std::string& macro_name, std::string_view setting,
                                     const SourceLocation& at) const;

  std::vector<MacroDefinition> macros_;
  std::unique_ptr<MacroInterpreter> interpreter_;  // null when the project has no macro files
};

}  // namespace sluice
