// The Python macro plugin, libsluice_macro_python.so (see macro_interpreter.hpp), and the only file that
// includes pybind11 / Python.h. Python.h must come before any standard header (it sets feature macros), hence
// the include order. The file is compiled with hidden visibility, as pybind11 requires; Sluice's own headers
// keep default visibility, so what they declare resolves against the executable that loads the plugin.
// clang-format off
#include <pybind11/pybind11.h>
// clang-format on

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#pragma GCC visibility push(default)
#include "core/diagnostic.hpp"
#include "project/macros/macro_interpreter.hpp"
#pragma GCC visibility pop
#include "project/macros/macro_runtime_py.hpp"

namespace py = pybind11;

namespace sluice {

namespace {

// Serialises every use of the interpreter by Sluice. Never destroyed, so engines destroyed during static
// destruction still find it.
std::mutex& InterpreterMutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}

std::atomic<bool> g_started{false};
std::atomic<uint64_t> g_next_load_id{1};

// Entry points of macro_runtime.py; created with the interpreter and kept for the life of the process.
struct Runtime {
  py::object load_module;
  py::object unload_module;
  py::object public_functions;
  py::object invoke;
  py::object literal_problem;
  py::object make_context;
  py::object make_pipeline_naming_context;
};
Runtime* g_runtime = nullptr;

// Holds the GIL for its scope, from any thread.
class GilHold {
 public:
  GilHold() : state_(PyGILState_Ensure()) {}
  GilHold(const GilHold&) = delete;
  GilHold& operator=(const GilHold&) = delete;
  ~GilHold() { PyGILState_Release(state_); }

 private:
  PyGILState_STATE state_;
};

constexpr const char* kRuntimeFailed = "SLU-MACRO-016";
constexpr const char* kRuntimeHint =
    "this is a failure of Sluice's embedded Python (Debian's python3.11), not of the project; check that "
    "libpython3.11 and its standard library are installed";

[[noreturn]] void FailStart(const std::string& detail) {
  throw Error(
      MakeDiagnostic(kRuntimeFailed, "the embedded Python interpreter could not start: " + detail, {}, kRuntimeHint));
}

// UTF-8 text of a Python object's str(), never failing (lone surrogates are backslash-escaped).
std::string Text(py::handle object) {
  PyObject* text = PyObject_Str(object.ptr());
  if (text == nullptr) {
    PyErr_Clear();
    return "<unprintable>";
  }
  py::object owned = py::reinterpret_steal<py::object>(text);
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text, &size);
  if (data != nullptr) return std::string(data, static_cast<size_t>(size));
  PyErr_Clear();
  PyObject* bytes = PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace");
  if (bytes == nullptr) {
    PyErr_Clear();
    return "<unprintable>";
  }
  py::object owned_bytes = py::reinterpret_steal<py::object>(bytes);
  return std::string(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
}

void SetConfigPath(PyConfig& config, wchar_t** field, const char* value) {
  PyStatus status = PyConfig_SetBytesString(&config, field, value);
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    FailStart(status.err_msg != nullptr ? status.err_msg : "bad interpreter path");
  }
}

// Loads macro_runtime.py as the module `_sluice_macro_runtime`. Needs the GIL.
void LoadRuntime() {
  py::module_ sys = py::module_::import("sys");
  py::object module = py::module_::import("types").attr("ModuleType")("_sluice_macro_runtime");
  sys.attr("modules")["_sluice_macro_runtime"] = module;
  py::dict globals = module.attr("__dict__");
  globals["__builtins__"] = py::module_::import("builtins");
  PyObject* code = Py_CompileString(kMacroRuntimePython, "<sluice macro runtime>", Py_file_input);
  if (code == nullptr) throw py::error_already_set();
  py::object owned_code = py::reinterpret_steal<py::object>(code);
  PyObject* result = PyEval_EvalCode(code, globals.ptr(), globals.ptr());
  if (result == nullptr) throw py::error_already_set();
  Py_DECREF(result);
  g_runtime = new Runtime{globals["load_module"],
                          globals["unload_module"],
                          globals["public_functions"],
                          globals["invoke"],
                          globals["literal_problem"],
                          globals["make_context"],
                          globals["make_pipeline_naming_context"]};
}

// Starts the interpreter and the runtime once per process. Called with InterpreterMutex held.
void StartInterpreter() {
  if (g_runtime != nullptr) return;
  if (!Py_IsInitialized()) {
    PyConfig config;
    // Isolated: PYTHONHOME, PYTHONPATH and the user site are ignored, so a pyenv python on PATH cannot
    // leak in; home and executable pin Debian's python3.11 that Sluice was built against.
    PyConfig_InitIsolatedConfig(&config);
    config.install_signal_handlers = 0;  // Ctrl-C stays with Sluice
    config.buffered_stdio = 0;           // print() in a macro shows up although Python is never finalised
    config.write_bytecode = 0;           // never write __pycache__ into a project
    config.parse_argv = 0;
#ifdef SLUICE_PYTHON_HOME
    SetConfigPath(config, &config.home, SLUICE_PYTHON_HOME);
#endif
#ifdef SLUICE_PYTHON_EXECUTABLE
    SetConfigPath(config, &config.executable, SLUICE_PYTHON_EXECUTABLE);
#endif
    PyStatus status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) FailStart(status.err_msg != nullptr ? status.err_msg : "unknown error");
    g_started = true;
    // This thread holds the GIL after initialisation; it gives it up for good once the runtime is loaded,
    // so every later use (from any thread) takes it with PyGILState_Ensure.
    std::string failure;
    try {
      LoadRuntime();
    } catch (py::error_already_set& error) {
      failure = error.what();
    }
    PyEval_SaveThread();
    if (!failure.empty()) FailStart("Sluice's macro runtime failed to load: " + failure);
    return;
  }
  std::string failure;
  {
    GilHold gil;
    try {
      LoadRuntime();
    } catch (py::error_already_set& error) {
      failure = error.what();
    }
  }
  if (!failure.empty()) FailStart("Sluice's macro runtime failed to load: " + failure);
}

py::object JsonToPython(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(value.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(value.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(value.get<double>());
    case nlohmann::json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      return py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
    }
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const nlohmann::json& item : value) list.append(JsonToPython(item));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = JsonToPython(item);
      return dict;
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded:
      break;
  }
  return py::none();
}

py::object OptionalText(const std::optional<std::string>& value) {
  if (!value) return py::none();
  return py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(value->data(), static_cast<Py_ssize_t>(value->size()), "replace"));
}

bool IsScalar(py::handle value) {
  return value.is_none() || PyUnicode_Check(value.ptr()) || PyBool_Check(value.ptr()) || PyLong_Check(value.ptr()) ||
         PyFloat_Check(value.ptr());
}

std::string TypeName(py::handle value) { return Py_TYPE(value.ptr())->tp_name; }

py::object StrObject(const std::string& text) {
  return py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
}

// The UTF-8 text of a str result; nullopt when it holds lone surrogates. `value` must be a str.
std::optional<std::string> StrUtf8(py::handle value) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  return std::string(data, static_cast<size_t>(size));
}

// A macro's exception, as macro_runtime.describe_failure reports it.
struct PythonFailure {
  std::string type;
  std::string message;
  int line = 0;  // of the last traceback frame inside the macro's file; 0 when none
  bool ran_in_file = false;
  std::string line_text;

  explicit PythonFailure(py::handle failure) {
    py::tuple info = py::reinterpret_borrow<py::tuple>(failure);
    type = Text(info[0]);
    message = Text(info[1]);
    line = info[2].cast<int>();
    ran_in_file = info[4].cast<bool>();
    line_text = Text(info[5]);
  }

  // `Type: message`, or `Type` alone.
  std::string Exception() const { return message.empty() ? type : type + ": " + message; }
  // A TypeError raised by the call itself: the arguments do not fit the parameters.
  bool IsSignatureMismatch() const { return !ran_in_file && type == "TypeError"; }
};

}  // namespace

struct MacroFunction {
  py::object callable;
  std::string path;  // the file name the function was compiled with (its traceback frames carry it)
  MacroDefinition definition;
  bool takes_context = false;
  bool context_annotated = true;
};

class PythonMacroInterpreter final : public MacroInterpreter {
 public:
  PythonMacroInterpreter();
  ~PythonMacroInterpreter() override;

  std::vector<MacroDefinition> LoadFile(const std::string& relative_file, const std::filesystem::path& absolute_file,
                                        const std::string& text) override;
  std::string Evaluate(const MacroInvocation& call, const MacroSqlText& sql,
                       const MacroContextValues& context) const override;
  std::string CallNamingMacro(const std::string& name, const NamingArgument& argument,
                              const SourceLocation& at) const override;

  struct State;  // Python objects

 private:
  std::unique_ptr<State> state_;
};

struct PythonMacroInterpreter::State {
  uint64_t load_id = 0;
  std::vector<std::pair<std::string, std::string>> modules;  // (module name, path) to unload
  std::unordered_map<std::string, MacroFunction> functions;
  // The MacroContext built for the last values seen; guarded by InterpreterMutex.
  std::optional<MacroContextValues> context_values;
  py::object context_object;
};

namespace {

std::string Where(const MacroDefinition& definition) { return definition.file + ":" + std::to_string(definition.line); }

// Evaluates one top-level call and its nested calls. Needs the interpreter mutex and the GIL.
class Evaluator {
 public:
  Evaluator(PythonMacroInterpreter::State& state, const MacroSqlText& sql, const MacroContextValues& context)
      : state_(state), sql_(sql), context_(context) {}

  py::object Invoke(const MacroInvocation& call, bool top_level) {
    const MacroFunction& function = state_.functions.at(call.name);
    if (function.takes_context && !function.context_annotated) {
      sql_.Fail(call.offset, "SLU-MACRO-009",
                "macro @" + call.name + " (" + Where(function.definition) +
                    ") takes `ctx` as its first parameter but does not annotate it as MacroContext",
                "write `def " + call.name +
                    "(ctx: MacroContext, ...)` with `from streambuild.compiler.macros.models import MacroContext`");
    }
    py::list arguments;
    if (function.takes_context) arguments.append(ContextObject());
    for (const MacroArgument& argument : call.positional) arguments.append(Convert(argument));
    py::dict keywords;
    for (const KeywordArgument& keyword : call.keywords) keywords[py::str(keyword.name)] = Convert(keyword.value);

    py::tuple outcome = g_runtime->invoke(function.callable, function.path, py::tuple(arguments), keywords);
    if (!outcome[2].is_none()) MisreadVariable(call, function, outcome[2]);
    if (!outcome[0].cast<bool>()) Raised(call, function, outcome[1]);
    py::object result = outcome[1];
    if (!top_level) {
      py::object problem = g_runtime->literal_problem(result);
      if (!problem.is_none()) {
        sql_.Fail(call.offset, "SLU-MACRO-013",
                  "nested macro @" + call.name + " (" + Where(function.definition) + ") returned " + Text(problem) +
                      ", which cannot be passed as a macro argument",
                  "a nested macro must return str, int, float, bool, None, or lists, tuples and dicts of them");
      }
    }
    return result;
  }

 private:
  [[noreturn]] void Raised(const MacroInvocation& call, const MacroFunction& function, py::handle raised) {
    PythonFailure failure(raised);
    int line = failure.line;
    const std::string& line_text = failure.line_text;
    std::string exception = failure.Exception();
    const MacroDefinition& definition = function.definition;
    if (failure.IsSignatureMismatch()) {
      sql_.Fail(call.offset, "SLU-MACRO-011",
                "the arguments of @" + call.name + " do not match its parameters (def " + call.name + " at " +
                    Where(definition) + "): " + exception,
                "pass the parameters the macro declares; `ctx` is supplied by Sluice");
    }
    std::string at = line > 0 ? definition.file + ":" + std::to_string(line) + ", " : "";
    sql_.Fail(call.offset, "SLU-MACRO-010",
              "macro @" + call.name + " raised " + exception + " (" + at + "in @" + call.name + " defined at " +
                  Where(definition) + ")",
              line > 0 && !line_text.empty() ? definition.file + ":" + std::to_string(line) + ": " + line_text
                                             : "fix the macro or the arguments of this call");
  }

  // A call that read a withheld variable (SLU-MACRO-023), even if it caught the exception, or let the error
  // of an unset one escape (SLU-MACRO-024); `problem` as macro_runtime._variable_problem describes it. The
  // messages carry names only: a withheld value never reached Python.
  [[noreturn]] void MisreadVariable(const MacroInvocation& call, const MacroFunction& function, py::handle problem) {
    py::tuple info = py::reinterpret_borrow<py::tuple>(problem);
    const MacroDefinition& definition = function.definition;
    std::string name = Text(info[1]);
    int line = info[3].cast<int>();
    std::string at = line > 0 ? definition.file + ":" + std::to_string(line) + ", " : "";
    std::string read = "macro @" + call.name + " read ctx.variables[" + name + "] (" + at + "in @" + call.name +
                       " defined at " + Where(definition) + ")";
    if (Text(info[0]) == "withheld") {
      sql_.Fail(call.offset, "SLU-MACRO-023",
                read + ", whose value is taken from environment variable " + Text(info[2]) +
                    "; values from ${ENV:…} are never given to macros, so they cannot reach SQL artifacts",
                "keep secrets in [connection] settings, which only commands that connect expand; a value that "
                "differs per environment belongs in [targets.<name>.vars] or --vars");
    }
    std::string known;
    for (py::handle known_name : py::reinterpret_borrow<py::tuple>(info[5])) {
      known += (known.empty() ? "" : ", ") + Text(known_name);
    }
    sql_.Fail(call.offset, "SLU-MACRO-024", read + ", which is not set",
              (known.empty() ? std::string("no variables are set") : "set variables: " + known) +
                  "; define it under [vars] or pass it with --vars, or give a default: ctx.variables.get(" + name +
                  ", default)");
  }

  py::object ContextObject() {
    if (state_.context_values && *state_.context_values == context_) return state_.context_object;
    const MacroContextValues& c = context_;
    nlohmann::json variables = c.variables;
    py::dict withheld;
    for (const auto& [name, environment] : c.withheld_variables) {
      variables.erase(name);
      withheld[StrObject(name)] = StrObject(environment);
    }
    py::object object = g_runtime->make_context(
        py::str(c.adapter_name), py::str(c.dialect), OptionalText(c.target_name), OptionalText(c.database),
        OptionalText(c.schema), py::bool_(c.virtual_environments), JsonToPython(variables), withheld);
    state_.context_values = c;
    state_.context_object = object;
    return object;
  }

  py::object Convert(const MacroArgument& argument) {
    return std::visit(
        [&](const auto& value) -> py::object {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, NoneLiteral>) {
            return py::none();
          } else if constexpr (std::is_same_v<T, BoolLiteral>) {
            return py::bool_(value.value);
          } else if constexpr (std::is_same_v<T, IntLiteral>) {
            PyObject* number = PyLong_FromString(value.text.c_str(), nullptr, 0);
            if (number == nullptr) FailPython(argument.offset, "invalid int literal");
            return py::reinterpret_steal<py::object>(number);
          } else if constexpr (std::is_same_v<T, FloatLiteral>) {
            double number = PyOS_string_to_double(value.text.c_str(), nullptr, nullptr);
            if (number == -1.0 && PyErr_Occurred()) FailPython(argument.offset, "invalid float literal");
            return py::float_(number);
          } else if constexpr (std::is_same_v<T, StrLiteral>) {
            PyObject* text =
                PyUnicode_DecodeUTF8(value.value.data(), static_cast<Py_ssize_t>(value.value.size()), "strict");
            if (text == nullptr) FailPython(argument.offset, "string argument is not valid UTF-8");
            return py::reinterpret_steal<py::object>(text);
          } else if constexpr (std::is_same_v<T, ListLiteral>) {
            py::list list;
            for (const MacroArgument& item : value.items) list.append(Convert(item));
            return list;
          } else if constexpr (std::is_same_v<T, TupleLiteral>) {
            py::list list;
            for (const MacroArgument& item : value.items) list.append(Convert(item));
            return py::tuple(list);
          } else if constexpr (std::is_same_v<T, DictLiteral>) {
            py::dict dict;
            for (const DictEntry& entry : value.entries) {
              py::object key = Convert(entry.key);
              if (!IsScalar(key)) {
                sql_.Fail(entry.key.offset, "SLU-MACRO-013",
                          "this dict key evaluated to " + TypeName(key) + "; dict keys must be scalars",
                          "use a str, int, float, bool or None key");
              }
              dict[key] = Convert(entry.value);
            }
            return dict;
          } else {
            static_assert(std::is_same_v<T, MacroInvocation>);
            return Invoke(value, false);
          }
        },
        argument.value);
  }

  // An argument Python itself rejects (the pending Python error is cleared and quoted).
  [[noreturn]] void FailPython(size_t offset, const std::string& what) {
    py::error_already_set error;
    sql_.Fail(offset, "SLU-MACRO-005", what + ": " + std::string(error.what()),
              "macro arguments are Python literals (str, int, float, bool, None, list, tuple, dict)");
  }

  PythonMacroInterpreter::State& state_;
  const MacroSqlText& sql_;
  const MacroContextValues& context_;
};

}  // namespace

PythonMacroInterpreter::PythonMacroInterpreter() : state_(std::make_unique<State>()) {
  std::lock_guard lock(InterpreterMutex());
  StartInterpreter();
  state_->load_id = g_next_load_id++;
}

PythonMacroInterpreter::~PythonMacroInterpreter() {
  std::lock_guard lock(InterpreterMutex());
  GilHold gil;
  for (const auto& [module, path] : state_->modules) {
    try {
      g_runtime->unload_module(module, path);
    } catch (const py::error_already_set&) {
      // A destructor must not throw; the module merely stays in sys.modules.
    }
  }
  state_.reset();
}

std::vector<MacroDefinition> PythonMacroInterpreter::LoadFile(const std::string& relative_file,
                                                        const std::filesystem::path& absolute_file,
                                                        const std::string& text) {
  std::lock_guard lock(InterpreterMutex());
  GilHold gil;
  std::vector<MacroDefinition> definitions;
  std::string path = absolute_file.string();
  try {
    PyObject* source = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "strict");
    if (source == nullptr) {
      py::error_already_set error;
      throw Error(MakeDiagnostic("SLU-MACRO-001", relative_file + " is not valid UTF-8: " + std::string(error.what()),
                                 SourceLocation{relative_file, 0, 0}, "save the macro file as UTF-8"));
    }
    py::object owned_source = py::reinterpret_steal<py::object>(source);
    std::string module_name =
        "sluice_macros_" + std::to_string(state_->load_id) + "_" + std::to_string(state_->modules.size());
    py::tuple loaded = g_runtime->load_module(module_name, path, owned_source);
    if (!loaded[1].is_none()) {
      py::tuple failure = loaded[1];
      std::string type = Text(failure[0]);
      std::string message = Text(failure[1]);
      int line = failure[2].cast<int>();
      int column = failure[3].cast<int>();
      SourceLocation at{relative_file, line, line > 0 ? std::max(column, 1) : 0};
      throw Error(MakeDiagnostic(
          "SLU-MACRO-001", relative_file + " failed to load: " + (message.empty() ? type : type + ": " + message), at,
          "module-level code of a macro file runs when the project loads; fix it, or move "
          "the work into a function",
          text));
    }
    state_->modules.emplace_back(module_name, path);
    py::list functions = g_runtime->public_functions(loaded[0]);
    for (py::handle item : functions) {
      py::tuple found = py::reinterpret_borrow<py::tuple>(item);
      MacroFunction function;
      function.callable = found[1];
      function.path = path;
      function.definition =
          MacroDefinition{Text(found[0]), relative_file, found[2].cast<int>(), Text(found[3]), Text(found[4])};
      function.takes_context = found[5].cast<bool>();
      function.context_annotated = found[6].cast<bool>();
      definitions.push_back(function.definition);
      state_->functions.try_emplace(function.definition.name, std::move(function));
    }
  } catch (py::error_already_set& error) {
    throw Error(MakeDiagnostic(kRuntimeFailed,
                               "Sluice's macro runtime failed while loading " + relative_file + ": " + error.what(),
                               SourceLocation{relative_file, 0, 0}, kRuntimeHint));
  }
  return definitions;
}

std::string PythonMacroInterpreter::Evaluate(const MacroInvocation& call, const MacroSqlText& sql,
                                       const MacroContextValues& context) const {
  std::lock_guard lock(InterpreterMutex());
  GilHold gil;
  try {
    py::object result = Evaluator(*state_, sql, context).Invoke(call, true);
    const MacroDefinition& definition = state_->functions.at(call.name).definition;
    if (!PyUnicode_Check(result.ptr())) {
      sql.Fail(call.offset, "SLU-MACRO-012",
               "macro @" + call.name + " (" + Where(definition) + ") returned " + TypeName(result) +
                   ", but a macro called directly in SQL must return str",
               "return the SQL text as a str; values for other macros are passed by nesting calls");
    }
    std::optional<std::string> text = StrUtf8(result);
    if (!text) {
      sql.Fail(call.offset, "SLU-MACRO-012",
               "macro @" + call.name + " (" + Where(definition) + ") returned a str that is not valid Unicode text",
               "remove lone surrogate characters from the result");
    }
    return std::move(*text);
  } catch (py::error_already_set& error) {
    sql.Fail(call.offset, kRuntimeFailed,
             "Sluice's macro runtime failed while calling @" + call.name + ": " + std::string(error.what()),
             kRuntimeHint);
  }
}

namespace {

// How a naming macro is named in messages and what it must look like, per kind of argument.
struct NamingRole {
  std::string subject;      // "the Kafka naming macro `x`"
  std::string setting;      // "defaults.sources.kafka.naming_macro"
  std::string called_with;  // "topic 'orders.v1'"
  std::string shape;        // the signature to write
};

NamingRole RoleOf(const std::string& name, const MacroInterpreter::NamingArgument& argument, py::handle value) {
  if (std::holds_alternative<std::string>(argument)) {
    return {"the Kafka naming macro `" + name + "`", "defaults.sources.kafka.naming_macro",
            "topic " + Text(py::repr(value)),
            "a Kafka naming macro is called with the topic as its only argument: write `def " + name +
                "(topic: str) -> str`"};
  }
  const auto& context = std::get<PipelineNamingContextValues>(argument);
  return {"the pipeline naming macro `" + name + "`", "naming.pipeline_naming_macro",
          "pipeline " + Text(py::repr(StrObject(context.name))),
          "a pipeline naming macro is called with the pipeline's context as its only argument: write `def " + name +
              "(ctx: PipelineNamingContext) -> str` with `from streambuild.compiler.macros.models import "
              "PipelineNamingContext`"};
}

[[noreturn]] void FailAt(const SourceLocation& at, const char* code, std::string message, std::string hint) {
  throw Error(MakeDiagnostic(code, std::move(message), at, std::move(hint)));
}

py::object NamingObject(const MacroInterpreter::NamingArgument& argument) {
  if (const auto* topic = std::get_if<std::string>(&argument)) return StrObject(*topic);
  const auto& context = std::get<PipelineNamingContextValues>(argument);
  py::list model_names;
  for (const std::string& model : context.model_names) model_names.append(StrObject(model));
  return g_runtime->make_pipeline_naming_context(StrObject(context.name), OptionalText(context.source_name),
                                                 model_names, StrObject(context.relative_directory),
                                                 StrObject(context.mode));
}

}  // namespace

std::string PythonMacroInterpreter::CallNamingMacro(const std::string& name, const NamingArgument& argument,
                                              const SourceLocation& at) const {
  std::lock_guard lock(InterpreterMutex());
  GilHold gil;
  const MacroFunction& function = state_->functions.at(name);
  const MacroDefinition& definition = function.definition;
  try {
    py::object value = NamingObject(argument);
    NamingRole role = RoleOf(name, argument, value);
    std::string defined = " (" + role.setting + ", defined at " + Where(definition) + ")";
    py::tuple outcome = g_runtime->invoke(function.callable, function.path, py::make_tuple(value), py::dict());
    if (!outcome[0].cast<bool>()) {
      PythonFailure failure(outcome[1]);
      if (failure.IsSignatureMismatch()) {
        FailAt(at, "SLU-MACRO-019",
               "the parameters of " + role.subject + defined + " do not take its one argument, the " +
                   role.called_with + ": " + failure.Exception(),
               role.shape);
      }
      std::string line = failure.line > 0 ? definition.file + ":" + std::to_string(failure.line) + ", " : "";
      FailAt(at, "SLU-MACRO-018",
             role.subject + " (" + role.setting + ") raised " + failure.Exception() + " for " + role.called_with +
                 " (" + line + "in " + name + " defined at " + Where(definition) + ")",
             failure.line > 0 && !failure.line_text.empty()
                 ? definition.file + ":" + std::to_string(failure.line) + ": " + failure.line_text
                 : "fix the macro");
    }
    py::object result = outcome[1];
    if (!PyUnicode_Check(result.ptr())) {
      FailAt(at, "SLU-MACRO-020",
             role.subject + defined + " returned " + TypeName(result) + " for " + role.called_with +
                 ", but a naming macro must return str",
             "return the name as a str");
    }
    std::optional<std::string> text = StrUtf8(result);
    if (!text) {
      FailAt(at, "SLU-MACRO-020",
             role.subject + defined + " returned a str that is not valid Unicode text for " + role.called_with,
             "remove lone surrogate characters from the result");
    }
    return std::move(*text);
  } catch (py::error_already_set& error) {
    throw Error(MakeDiagnostic(
        kRuntimeFailed,
        "Sluice's macro runtime failed while calling the naming macro `" + name + "`: " + std::string(error.what()), at,
        kRuntimeHint));
  }
}

}  // namespace sluice

// The entry points the loader looks up (macro_interpreter_loader.cpp).
extern "C" __attribute__((visibility("default"))) sluice::MacroInterpreter* sluice_macro_interpreter_start() {
  return new sluice::PythonMacroInterpreter();
}

extern "C" __attribute__((visibility("default"))) bool sluice_macro_interpreter_started() {
  return sluice::g_started.load();
}
