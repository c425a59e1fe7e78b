"""Sluice's Python side of SQL macros.

Compiled into the sluice binary (macro_interpreter.cpp runs it once, when the embedded interpreter starts).
It installs the modules macro files import (`streambuild.compiler.macros.models`, alias `sluice.macros`),
and gives C++ its entry points: load_module / unload_module, public_functions, make_context /
make_pipeline_naming_context, invoke and literal_problem. No entry point lets a macro's exception escape:
failures come back as plain tuples that C++ turns into located errors.
"""

import dataclasses
import inspect
import linecache
import sys
import traceback
import types
from collections.abc import Mapping

MODELS_MODULE = "streambuild.compiler.macros.models"
MODELS_ALIASES = ("sluice.macros",)
_SCALARS = (str, bool, int, float)
_MAX_DEPTH = 100


def _frozen(value):
    if isinstance(value, Mapping):
        return types.MappingProxyType({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    return value


class UnsetVariableError(KeyError):
    """A macro read a project variable that is not set, without giving a default."""

    def __init__(self, name, known):
        super().__init__(name)
        self.name = name
        self.known = known


class WithheldVariableError(Exception):
    """A macro read a project variable whose value is taken from an environment variable (`${ENV:…}`)."""

    def __init__(self, name, environment):
        super().__init__(f"variable {name!r} is taken from environment variable {environment!r} and is not given "
                         "to macros")
        self.name = name
        self.environment = environment


# Withheld variables read during the current call: (name, environment, stack), kept even when the macro
# catches the exception, so invoke() fails the call either way.
_withheld_reads = []


class MacroVariables(Mapping):
    """ctx.variables: a read-only mapping of the project variables.

    A variable whose value is taken from the environment is listed by name but its value never enters Python:
    reading it raises WithheldVariableError. Reading an unset variable raises UnsetVariableError (a KeyError),
    also from get() without a default, so a missing value never becomes the text `None`."""

    __slots__ = ("_values", "_withheld")

    def __init__(self, values=(), withheld=()):
        withheld = dict(withheld)
        object.__setattr__(self, "_withheld", withheld)
        object.__setattr__(self, "_values", {name: _frozen(value) for name, value in dict(values).items()
                                             if name not in withheld})

    def __setattr__(self, name, value):
        raise AttributeError("ctx.variables is read-only")

    def _read(self, name):
        if name in self._withheld:
            environment = self._withheld[name]
            _withheld_reads.append((name, environment, traceback.extract_stack(sys._getframe(1))))
            raise WithheldVariableError(name, environment)
        return self._values[name]

    def __getitem__(self, name):
        try:
            return self._read(name)
        except KeyError:
            raise UnsetVariableError(name, sorted(self)) from None

    def get(self, name, *default):
        if len(default) > 1:
            raise TypeError(f"get expected at most 2 arguments, got {1 + len(default)}")
        if default and name not in self:
            return default[0]
        return self[name]

    def __contains__(self, name):
        return name in self._values or name in self._withheld

    def __iter__(self):
        return iter(sorted([*self._values, *self._withheld]))

    def __len__(self):
        return len(self._values) + len(self._withheld)

    def __repr__(self):
        shown = {name: self._values[name] if name in self._values else _Withheld(self._withheld[name])
                 for name in self}
        return f"MacroVariables({shown!r})"


class _Withheld:
    def __init__(self, environment):
        self.environment = environment

    def __repr__(self):
        return f"<withheld: ${{ENV:{self.environment}}}>"


@dataclasses.dataclass(frozen=True)
class MacroContext:
    """Connection-free immutable context passed to a macro whose first parameter is `ctx: MacroContext`."""

    adapter_name: str
    dialect: str
    target_name: str | None
    database: str | None
    schema: str | None
    virtual_environments: bool
    variables: Mapping[str, object]

    def __post_init__(self):
        if not isinstance(self.variables, MacroVariables):
            object.__setattr__(self, "variables", MacroVariables(self.variables))


@dataclasses.dataclass(frozen=True)
class PipelineNamingContext:
    """What a `naming.pipeline_naming_macro` sees about one pipeline."""

    name: str
    source_name: str | None
    model_names: tuple[str, ...]
    relative_directory: str
    mode: str

    def __post_init__(self):
        object.__setattr__(self, "model_names", tuple(sorted(self.model_names)))


def _install_models():
    models = types.ModuleType(MODELS_MODULE, "Immutable values Sluice passes to SQL macros.")
    for cls in (MacroContext, PipelineNamingContext):
        cls.__module__ = MODELS_MODULE
        setattr(models, cls.__name__, cls)
    models.__all__ = ["MacroContext", "PipelineNamingContext"]
    for full_name in (MODELS_MODULE, *MODELS_ALIASES):
        parts = full_name.split(".")
        for depth in range(1, len(parts)):
            package_name = ".".join(parts[:depth])
            if package_name not in sys.modules:
                package = types.ModuleType(package_name)
                package.__path__ = []
                sys.modules[package_name] = package
            if depth > 1:
                setattr(sys.modules[".".join(parts[: depth - 1])], parts[depth - 1], sys.modules[package_name])
        sys.modules[full_name] = models
        setattr(sys.modules[".".join(parts[:-1])], parts[-1], models)


_install_models()


def make_context(adapter_name, dialect, target_name, database, schema, virtual_environments, variables, withheld):
    return MacroContext(adapter_name, dialect, target_name, database, schema, virtual_environments,
                        MacroVariables(variables, withheld))


def make_pipeline_naming_context(name, source_name, model_names, relative_directory, mode):
    return PipelineNamingContext(name, source_name, tuple(model_names), relative_directory, mode)


def _text(error):
    try:
        return str(error)
    except Exception:
        return object.__repr__(error)


def describe_failure(error, path):
    """(type name, message, line, column, ran_in_file, line text) of an exception raised for file `path`.

    line/column point at the last traceback frame inside `path` (a SyntaxError in `path` points at itself);
    0 when none. ran_in_file tells whether any frame ran inside `path`."""
    message = _text(error)
    line = column = 0
    if isinstance(error, SyntaxError) and error.filename == path:
        line, column = error.lineno or 0, error.offset or 0
        message = error.msg
    line_text = ""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == path]
    if frames and not line:
        line, line_text = frames[-1].lineno or 0, frames[-1].line or ""
    elif line:
        line_text = linecache.getline(path, line).strip()
    return (type(error).__qualname__, message, line, column, bool(frames), line_text)


def load_module(module_name, path, text):
    """Runs one macro file as a fresh module: (module, None) or (None, failure)."""
    module = types.ModuleType(module_name)
    module.__file__ = path
    # inspect.getsource and tracebacks read the text Sluice loaded, not a later version on disk.
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    sys.modules[module_name] = module
    try:
        exec(compile(text, path, "exec", dont_inherit=True), module.__dict__)
    except BaseException as error:
        del sys.modules[module_name]
        return None, describe_failure(error, path)
    return module, None


def unload_module(module_name, path):
    sys.modules.pop(module_name, None)
    linecache.cache.pop(path, None)


def _description(function):
    doc = inspect.getdoc(function) or ""
    paragraph = doc.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines() if line.strip())


def _source(function):
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def _context_parameter(function):
    """(takes_ctx, ctx_annotated_as_MacroContext)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False, True
    if not parameters or parameters[0].name != "ctx":
        return False, True
    annotation = parameters[0].annotation
    if annotation is MacroContext:
        return True, True
    return True, isinstance(annotation, str) and annotation.rsplit(".", 1)[-1] == "MacroContext"


def public_functions(module):
    """[(name, function, line, description, source, takes_ctx, ctx_annotated)] of the public, non-async
    functions defined in `module` (not imported into it), sorted by name."""
    found = []
    for name, function in inspect.getmembers(module, inspect.isfunction):
        if name.startswith("_") or function.__module__ != module.__name__:
            continue
        if inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function):
            continue
        unwrapped = inspect.unwrap(function)
        code = getattr(unwrapped, "__code__", function.__code__)
        found.append((name, function, code.co_firstlineno, _description(unwrapped), _source(unwrapped),
                      *_context_parameter(function)))
    return found


def _line_in(frames, path):
    """(line, line text) of the innermost of `frames` inside `path`; (0, "") when none is."""
    inside = [frame for frame in frames if frame.filename == path]
    if not inside:
        return 0, ""
    return inside[-1].lineno or 0, inside[-1].line or ""


def _variable_problem(error, path):
    """What the call did wrong with ctx.variables, or None:
    ("withheld", repr(name), repr(environment), line, line text, ()) for the first withheld variable it read,
    caught or not; ("unset", repr(name), "", line, line text, known names) for an unset variable whose
    UnsetVariableError escaped the macro."""
    if _withheld_reads:
        name, environment, frames = _withheld_reads[0]
        return ("withheld", repr(name), repr(environment), *_line_in(frames, path), ())
    if isinstance(error, UnsetVariableError):
        line = _line_in(traceback.extract_tb(error.__traceback__), path)
        return ("unset", repr(error.name), "", *line, tuple(str(name) for name in error.known))
    return None


def invoke(function, path, args, kwargs):
    """(True, result, None) or (False, failure, None) for function(*args, **kwargs), `path` being the
    function's file; (False, failure or None, problem) when the call misused ctx.variables (_variable_problem)."""
    _withheld_reads.clear()
    try:
        result = function(*args, **kwargs)
    except BaseException as error:
        return False, describe_failure(error, path), _variable_problem(error, path)
    problem = _variable_problem(None, path)
    if problem is not None:
        return False, None, problem
    return True, result, None


def literal_problem(value, depth=0):
    """None when `value` could be written as a macro-argument literal, else what is wrong with it."""
    if value is None or isinstance(value, _SCALARS):
        return None
    if depth > _MAX_DEPTH:
        return "a value nested too deeply"
    if isinstance(value, (list, tuple)):
        for item in value:
            problem = literal_problem(item, depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not (key is None or isinstance(key, _SCALARS)):
                return f"a dict key of type {type(key).__name__}"
            problem = literal_problem(item, depth + 1)
            if problem is not None:
                return problem
        return None
    return f"a value of type {type(value).__name__}"
