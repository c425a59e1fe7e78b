// Reads the literal values a generated Python module assigns at module level, without running Python.
//
// `starlake dag-generate` writes Python modules whose configuration is plain data: `options = {...}`,
// `cron = "None"`, `schedules = [...]`, `dependencies = StarlakeDependencies(dependencies="""[...]""")`. This
// reader walks the module token by token (strings of every kind, comments, brackets, line continuations), and at
// each statement that starts in column 1 with one of the requested names followed by `=` it reads the value as a
// Python literal: dicts, lists, tuples (read as lists), strings with either quote kind, triple quotes, the `r`/`u`
// prefixes, escapes and implicit concatenation, True/False/None, integers and floats. Every other statement is
// skipped, so code around the assignments may be anything Python accepts.
//
// Errors are sluice::Error with a diagnostic located file:line:col:
//   SLU-STARLAKE-001 a token that is not where the literal grammar allows it (the message names what was
//                    expected and what was found)
//   SLU-STARLAKE-002 a string or bracket that is never closed (located at its opening)
//   SLU-STARLAKE-003 a malformed escape in a string
//   SLU-STARLAKE-009 Python that is valid but not a literal Sluice reads: f-strings, bytes, sets, non-string
//                    dict keys
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::orchestrate {

// One module-level assignment `name = <literal>`. Python values map onto JSON: dict → object (string keys only),
// list and tuple → array, str → string, int/float → number, True/False → boolean, None → null.
struct PythonAssignment {
  std::string name;
  nlohmann::json value;
  size_t name_offset = 0;   // byte offset of the name in the module text
  size_t value_offset = 0;  // byte offset where the value starts
  // Set when the value is a single string literal with no escapes: byte k of the string is byte
  // verbatim_offset + k of the module text, so errors inside the string (embedded JSON) can be located exactly.
  std::optional<size_t> verbatim_offset;
};

struct PythonLiteralRules {
  std::set<std::string> names;  // the module-level names whose assignments are read
  // Calls read as their single argument (positional or keyword): `StarlakeDependencies(dependencies=x)` is x.
  std::set<std::string> transparent_calls;
};

// The requested assignments of `text` (the module, named `file` in diagnostics) in file order; a name assigned
// twice appears twice. Throws sluice::Error (codes above) at the first malformed requested value, or at a string
// anywhere in the module that is never closed.
std::vector<PythonAssignment> ReadPythonAssignments(const std::string& file, std::string_view text,
                                                    const PythonLiteralRules& rules);

}  // namespace sluice::orchestrate
