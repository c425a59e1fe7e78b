// The Python side of one MacroEngine: the process-wide embedded CPython (started once, isolated from
// PYTHONHOME/PYTHONPATH and the user site, never finalised) and this engine's macro modules and functions.
//
// The implementation lives in a plugin, libsluice_macro_python.so (macro_interpreter.cpp, the only file that
// includes pybind11 and Python.h), which links libpython. Start() loads it on first use (macro_interpreter_
// loader.cpp), so a process that never evaluates a macro never loads Python and its relocations. The plugin is
// looked for at its build path and next to the running executable; it resolves Sluice's own symbols (Error,
// MakeDiagnostic …) against the executable, which exports them (CMAKE_ENABLE_EXPORTS). Internal to
// project/macros.
//
// Thread-safety: every member function takes the process-wide interpreter mutex and then the GIL
// (PyGILState_Ensure), and releases both before returning; the GIL is not held between calls.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "project/macros/macro_arguments.hpp"
#include "project/macros/macro_engine.hpp"

namespace sluice {

class MacroInterpreter {
 public:
  // Loads the plugin and starts the interpreter when this is the process's first; a new engine's interpreter.
  // Throws SLU-MACRO-016 (the plugin or Python cannot be loaded or started).
  static std::unique_ptr<MacroInterpreter> Start();
  // Whether this process has started Python (false until a project with macro files is loaded).
  static bool Started();

  MacroInterpreter() = default;
  MacroInterpreter(const MacroInterpreter&) = delete;
  MacroInterpreter& operator=(const MacroInterpreter&) = delete;
  // Drops this engine's modules and functions.
  virtual ~MacroInterpreter() = default;

  // Runs `text` (the file `relative_file`, at `absolute_file`) as a fresh module and returns the public,
  // non-async functions it defines, sorted by name; they become callable by name through Evaluate().
  // A name already loaded keeps its first function (the engine rejects duplicates). Throws SLU-MACRO-001
  // located in the macro file.
  virtual std::vector<MacroDefinition> LoadFile(const std::string& relative_file,
                                                const std::filesystem::path& absolute_file,
                                                const std::string& text) = 0;

  // Evaluates a top-level call whose name and nested names are all loaded macros, and returns its str
  // result as UTF-8. Errors are located in `sql`: SLU-MACRO-005 (an argument Python rejects, e.g. invalid
  // UTF-8), -009, -010, -011, -012, -013, -016.
  virtual std::string Evaluate(const MacroInvocation& call, const MacroSqlText& sql,
                               const MacroContextValues& context) const = 0;

  // The one argument a naming macro is called with: a Kafka topic (passed as str) or a pipeline's naming
  // context (passed as a PipelineNamingContext).
  using NamingArgument = std::variant<std::string, PipelineNamingContextValues>;

  // Calls the loaded macro `name` as a naming macro with `argument` as its only positional argument and
  // returns its str result as UTF-8 (not yet checked as a name). Errors are located at `at` and name the
  // macro's definition: SLU-MACRO-018 (raised), -019 (the parameters do not take the argument), -020 (not a
  // str, or lone surrogates), -016.
  virtual std::string CallNamingMacro(const std::string& name, const NamingArgument& argument,
                                      const SourceLocation& at) const = 0;
};

// The plugin's entry points, `extern "C"` and looked up with dlsym: sluice_macro_interpreter_start returns a
// new interpreter owned by the caller (or throws sluice::Error); sluice_macro_interpreter_started tells
// whether Python is running.
using MacroInterpreterStartFunction = MacroInterpreter* (*)();
using MacroInterpreterStartedFunction = bool (*)();

}  // namespace sluice
