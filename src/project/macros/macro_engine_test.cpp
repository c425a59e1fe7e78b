// Macro engine: discovery and registration rules, Python-literal arguments, nested calls, the ctx contract,
// StreamBuild compatibility, error locations, built-ins, and a speed sanity check — on macro files written into
// temporary project folders.
#include "project/macros/macro_engine.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "core/sha256.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;

class TempProject {
 public:
  TempProject() {
    std::string pattern = (fs::temp_directory_path() / "sluice_macro_test_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
  }
  ~TempProject() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  void Write(const std::string& relative, const std::string& text) const {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::trunc) << text;
  }
  std::unique_ptr<MacroEngine> Load() const { return MacroEngine::Load(root_); }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

MacroContextValues DuckDbContext() {
  MacroContextValues context;
  context.adapter_name = "duckdb";
  context.dialect = "duckdb";
  context.target_name = "dev";
  context.database = "analytics";
  return context;
}

constexpr const char* kModelFile = "pipelines/main/model.sql";
constexpr const char* kHeader = "MODEL (\n  kind VIEW\n);\n";

// The text a model file holding `body` after a three-line header expands to.
std::string ExpandBody(const MacroEngine& engine, const std::string& body,
                       const MacroContextValues& context = DuckDbContext()) {
  std::string text = std::string(kHeader) + body;
  return engine.Expand(kModelFile, text, std::string(kHeader).size(), text.size(), context);
}

Diagnostic ErrorOf(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().size(), 1u);
    return error.diagnostics().front();
  }
  ADD_FAILURE() << "expected a sluice::Error";
  return Diagnostic{"no error", "", {}, "", ""};
}

std::vector<std::string> Names(const MacroEngine& engine) {
  std::vector<std::string> names;
  for (const MacroDefinition& macro : engine.macros()) names.push_back(macro.name);
  return names;
}

// Whether this process has libpython mapped (the macro plugin links it; nothing else does).
bool LibpythonMapped() { return ReadFile("/proc/self/maps").find("libpython") != std::string::npos; }

// Runs first in the file (and, through the death-test machinery, in a fresh process), so nothing else has
// started Python yet.
TEST(MacroEngineWithoutMacros, NeverStartsPython) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        bool ok = false;
        {  // the project is removed before exit, which unwinds nothing
          TempProject project;
          project.Write("macros/README.md", "no python here\n");
          project.Write("macros/_private/helper.py", "raise RuntimeError('must not run')\n");
          project.Write("macros/__init__.py", "raise RuntimeError('must not run')\n");
          std::unique_ptr<MacroEngine> engine = project.Load();
          ok = engine->macros().empty() &&
               ExpandBody(*engine, "SELECT 1 WHERE d >= @partition_start() AND d < @partition_end()") ==
                   "SELECT 1 WHERE d >= @partition_start() AND d < @partition_end()" &&
               ErrorOf([&] { ExpandBody(*engine, "SELECT @nope(1)"); }).code == "SLU-MACRO-004" &&
               ErrorOf([&] {
                 engine->DeriveKafkaSourceName("name_from_topic", "orders", {"sources/s.yml", 3, 5});
               }).code == "SLU-MACRO-017" &&
               ErrorOf([&] {
                 engine->CheckPipelineName("pipeline_name", {}, {"pipelines/orders", 0, 0});
               }).code == "SLU-MACRO-017" &&
               ErrorOf([&] { engine->MacroFingerprint("name_from_topic"); }).code == "SLU-MACRO-017";
        }
        std::exit(ok && !MacroEngine::PythonStarted() && !LibpythonMapped() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(MacroEngineWithoutMacros, UnknownMacroSaysTheProjectHasNone) {
  TempProject project;
  std::unique_ptr<MacroEngine> engine = project.Load();
  Diagnostic error = ErrorOf([&] { ExpandBody(*engine, "SELECT\n  @missing()"); });
  EXPECT_EQ(error.code, "SLU-MACRO-004");
  EXPECT_NE(error.message.find("defines no macros"), std::string::npos) << error.message;
  EXPECT_EQ(error.location.file, kModelFile);
  EXPECT_EQ(error.location.line, 5);
  EXPECT_EQ(error.location.column, 3);
}

TEST(MacroEngineRegistration, RegistersOnlyPublicFunctionsDefinedInPublicModules) {
  TempProject project;
  project.Write("macros/common.py",
                "import os.path\n"
                "from os.path import join\n"
                "from math import *\n"
                "import asyncio\n"
                "\n"
                "\n"
                "def public_one(x: str) -> str:\n"
                "    \"\"\"Doubles a name.\n"
                "\n"
                "    Longer text that is not the description.\n"
                "    \"\"\"\n"
                "    return x + x\n"
                "\n"
                "\n"
                "def _private(x):\n"
                "    return x\n"
                "\n"
                "\n"
                "async def asynchronous() -> str:\n"
                "    return 'no'\n"
                "\n"
                "\n"
                "async def asynchronous_generator():\n"
                "    yield 'no'\n"
                "\n"
                "\n"
                "class NotAFunction:\n"
                "    def method(self):\n"
                "        return 'no'\n"
                "\n"
                "\n"
                "CONSTANT = 'no'\n");
  project.Write("macros/nested/deeper/more.py",
                "def another() -> str:\n"
                "    \"\"\"First paragraph\n"
                "    spans two lines.\"\"\"\n"
                "    return 'x'\n");
  project.Write("macros/__init__.py", "def from_init() -> str:\n    return 'no'\n");
  project.Write("macros/_helpers.py", "def from_private_module() -> str:\n    return 'no'\n");
  project.Write("macros/_internal/inside.py", "def from_private_dir() -> str:\n    return 'no'\n");
  project.Write("macros/nested/__pycache__/cached.py", "def from_cache() -> str:\n    return 'no'\n");
  project.Write("macros/notes.txt", "def from_text(): pass\n");

  std::unique_ptr<MacroEngine> engine = project.Load();
  EXPECT_EQ(Names(*engine), (std::vector<std::string>{"another", "public_one"}));

  const MacroDefinition* one = engine->Find("public_one");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->file, "macros/common.py");
  EXPECT_EQ(one->line, 7);
  EXPECT_EQ(one->description, "Doubles a name.");
  EXPECT_EQ(one->source.rfind("def public_one(x: str) -> str:\n", 0), 0u) << one->source;
  EXPECT_NE(one->source.find("return x + x"), std::string::npos);
  EXPECT_EQ(one->source.find("_private"), std::string::npos);

  const MacroDefinition* another = engine->Find("another");
  ASSERT_NE(another, nullptr);
  EXPECT_EQ(another->file, "macros/nested/deeper/more.py");
  EXPECT_EQ(another->description, "First paragraph spans two lines.");
  EXPECT_EQ(engine->Find("join"), nullptr);
  EXPECT_EQ(engine->Find("sqrt"), nullptr);
  EXPECT_TRUE(MacroEngine::PythonStarted());
  EXPECT_TRUE(LibpythonMapped());

  EXPECT_EQ(ExpandBody(*engine, "SELECT @public_one('ab') AS x -- @ignored(\n"), "SELECT abab AS x -- @ignored(\n");
}

TEST(MacroEngineRegistration, ModuleLevelCodeRunsOncePerLoad) {
  TempProject project;
  fs::path marker = project.root() / "loads.txt";
  project.Write("macros/m.py", "with open(" + std::string("r'") + marker.string() +
                                   "', 'a') as f:\n    f.write('x')\n\n\ndef m() -> str:\n    return '1'\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ExpandBody(*engine, "SELECT @m()"), "SELECT 1");
  EXPECT_EQ(ReadFile(marker), "x");
  std::unique_ptr<MacroEngine> second = project.Load();
  EXPECT_EQ(ReadFile(marker), "xx");
}

TEST(MacroEngineRegistration, DuplicateNamesAcrossFilesNameBothFiles) {
  TempProject project;
  project.Write("macros/a.py", "def shared() -> str:\n    return 'a'\n");
  project.Write("macros/b/b.py", "\n\ndef shared() -> str:\n    return 'b'\n");
  Diagnostic error = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(error.code, "SLU-MACRO-002");
  EXPECT_NE(error.message.find("macros/a.py:1"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("macros/b/b.py:3"), std::string::npos) << error.message;
  EXPECT_EQ(error.location.file, "macros/b/b.py");
  EXPECT_EQ(error.location.line, 3);
  EXPECT_EQ(error.source_line, "def shared() -> str:");
}

TEST(MacroEngineRegistration, BuiltInNamesAreReserved) {
  TempProject project;
  project.Write("macros/a.py", "def partition_start() -> str:\n    return 'x'\n");
  Diagnostic error = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(error.code, "SLU-MACRO-003");
  EXPECT_EQ(error.location.file, "macros/a.py");
  EXPECT_EQ(error.location.line, 1);
}

TEST(MacroEngineRegistration, ModuleLevelExceptionIsLocatedInTheMacroFile) {
  TempProject project;
  project.Write("macros/broken.py", "import os\n\nVALUE = 1 / 0\n");
  Diagnostic error = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(error.code, "SLU-MACRO-001");
  EXPECT_EQ(error.location.file, "macros/broken.py");
  EXPECT_EQ(error.location.line, 3);
  EXPECT_NE(error.message.find("ZeroDivisionError: division by zero"), std::string::npos) << error.message;
  EXPECT_EQ(error.source_line, "VALUE = 1 / 0");

  TempProject syntax;
  syntax.Write("macros/bad.py", "def ok() -> str:\n    return 'x'\n\ndef broken(:\n    pass\n");
  Diagnostic syntax_error = ErrorOf([&] { syntax.Load(); });
  EXPECT_EQ(syntax_error.code, "SLU-MACRO-001");
  EXPECT_EQ(syntax_error.location.line, 4);
  EXPECT_NE(syntax_error.message.find("SyntaxError"), std::string::npos) << syntax_error.message;

  TempProject import_error;
  import_error.Write("macros/imports.py", "\nimport definitely_not_a_module_here\n");
  Diagnostic missing = ErrorOf([&] { import_error.Load(); });
  EXPECT_EQ(missing.location.line, 2);
  EXPECT_NE(missing.message.find("ModuleNotFoundError"), std::string::npos) << missing.message;
}

class MacroEngineArguments : public ::testing::Test {
 protected:
  void SetUp() override {
    project_.Write("macros/show.py",
                   "def show(*args, **kwargs) -> str:\n"
                   "    \"\"\"repr of what the macro received.\"\"\"\n"
                   "    return repr(args) + ' ' + repr(sorted(kwargs.items()))\n"
                   "\n"
                   "\n"
                   "def codes(text: str) -> str:\n"
                   "    return ' '.join(str(ord(c)) for c in text)\n"
                   "\n"
                   "\n"
                   "def types(*args) -> str:\n"
                   "    return ' '.join(type(a).__name__ for a in args)\n"
                   "\n"
                   "\n"
                   "def two(a, b=2) -> str:\n"
                   "    return f'{a}-{b}'\n"
                   "\n"
                   "\n"
                   "def number(n: int) -> int:\n"
                   "    return n\n");
    engine_ = project_.Load();
  }

  std::string Show(const std::string& arguments) {
    std::string expanded = ExpandBody(*engine_, "@show(" + arguments + ")");
    return expanded;
  }

  TempProject project_;
  std::unique_ptr<MacroEngine> engine_;
};

TEST_F(MacroEngineArguments, AcceptsPythonLiteralForms) {
  EXPECT_EQ(Show(""), "() []");
  EXPECT_EQ(Show("'a', \"b\", '''c''', r'\\d', u'x', R'y'"), "('a', 'b', 'c', '\\\\d', 'x', 'y') []");
  EXPECT_EQ(Show("'a' \"b\"  'c'"), "('abc',) []");
  EXPECT_EQ(Show("\"\"\"multi\nline\"\"\""), "('multi\\nline',) []");
  EXPECT_EQ(Show("1, -2, +3, 0x1F, 0o17, 0b101, 1_000, 0, 00, -0x10"), "(1, -2, 3, 31, 15, 5, 1000, 0, 0, -16) []");
  EXPECT_EQ(Show("1.5, -2.5, .5, 1., 1e3, 2E-2, 1_0.5, -0.0"), "(1.5, -2.5, 0.5, 1.0, 1000.0, 0.02, 10.5, -0.0) []");
  EXPECT_EQ(Show("123456789012345678901234567890"), "(123456789012345678901234567890,) []");
  EXPECT_EQ(Show("True, False, None"), "(True, False, None) []");
  EXPECT_EQ(Show("[], [1, [2, 'x']], (), (1,), (1, 2,), (1), {}, {'k': [1], 2: None, True: 1.5, None: (),}"),
            "([], [1, [2, 'x']], (), (1,), (1, 2), 1, {}, {'k': [1], 2: None, True: 1.5, None: ()}) []");
  EXPECT_EQ(Show("1,\n  key = 'v',\n  other=[1, 2],\n"), "(1,) [('key', 'v'), ('other', [1, 2])]");
  EXPECT_EQ(Show("  ( 1 , 2 )  ,  x = - 3  "), "((1, 2),) [('x', -3)]");
  EXPECT_EQ(ExpandBody(*engine_, "@types(1, 1.0, 'a', True, None, [], (), {})"),
            "int float str bool NoneType list tuple dict");
  EXPECT_EQ(ExpandBody(*engine_, "@two(1) @two(1, 3) @two(b=4, a=5)"), "1-2 1-3 5-4");
}

TEST_F(MacroEngineArguments, DecodesStringEscapesAsPython) {
  EXPECT_EQ(ExpandBody(*engine_, "@codes('\\n\\t\\r\\a\\b\\f\\v\\0\\101\\x41\\u00e9\\U0001F600\\\\')"),
            "10 9 13 7 8 12 11 0 65 65 233 128512 92");
  // Backslash-escaped quotes need a dialect whose SQL strings take backslash escapes too (the call's extent is
  // found by the SQL tokenizer first).
  MacroContextValues clickhouse = DuckDbContext();
  clickhouse.adapter_name = "clickhouse";
  EXPECT_EQ(ExpandBody(*engine_, "@codes('\\q\\'\\\"')", clickhouse), "92 113 39 34");
  EXPECT_EQ(ExpandBody(*engine_, "@codes(r'\\n\\'')", clickhouse), "92 110 92 39");
  EXPECT_EQ(ExpandBody(*engine_, "@codes('a\\\nb')"), "97 98");
  EXPECT_EQ(ExpandBody(*engine_, "@codes('é')"), "233");
}

TEST_F(MacroEngineArguments, RejectsEverythingThatIsNotALiteral) {
  struct Case {
    std::string arguments;
    std::string code;
  };
  const std::vector<Case> cases = {
      {"name", "SLU-MACRO-005"},
      {"1 + 2", "SLU-MACRO-005"},
      {"len('x')", "SLU-MACRO-005"},
      {"a.b", "SLU-MACRO-005"},
      {"'x'.upper()", "SLU-MACRO-005"},
      {"{1, 2}", "SLU-MACRO-005"},
      {"{[1]: 2}", "SLU-MACRO-005"},
      {"{(1, 2): 2}", "SLU-MACRO-005"},
      {"b'x'", "SLU-MACRO-005"},
      {"f'x'", "SLU-MACRO-005"},
      {"x'00'", "SLU-MACRO-005"},
      {"1j", "SLU-MACRO-005"},
      {"007", "SLU-MACRO-005"},
      {"1__0", "SLU-MACRO-005"},
      {"1_", "SLU-MACRO-005"},
      {"0x", "SLU-MACRO-005"},
      {"1e", "SLU-MACRO-005"},
      {"1.2.3", "SLU-MACRO-005"},
      {"- -1", "SLU-MACRO-005"},
      {"-True", "SLU-MACRO-005"},
      {"-'x'", "SLU-MACRO-005"},
      {"'\\N{BULLET}'", "SLU-MACRO-005"},
      {"'\\x4'", "SLU-MACRO-005"},
      {"'\\ud800'", "SLU-MACRO-005"},
      {"'\\U00110000'", "SLU-MACRO-005"},
      {"\"\"\"unterminated\"", "SLU-MACRO-005"},
      {"[1, 2", "SLU-MACRO-005"},
      {",", "SLU-MACRO-005"},
      {"1 2", "SLU-MACRO-005"},
      {"lambda: 1", "SLU-MACRO-005"},
      {"True=1", "SLU-MACRO-005"},
      {std::string(70, '[') + std::string(70, ']'), "SLU-MACRO-005"},
      {"*[1]", "SLU-MACRO-006"},
      {"**{'a': 1}", "SLU-MACRO-006"},
      {"[*[1]]", "SLU-MACRO-006"},
      {"{**{'a': 1}}", "SLU-MACRO-006"},
      {"a=1, a=2", "SLU-MACRO-007"},
      {"a=1, 2", "SLU-MACRO-007"},
      {"ctx=1", "SLU-MACRO-008"},
      {"1, ctx='x'", "SLU-MACRO-008"},
  };
  for (const Case& c : cases) {
    Diagnostic error = ErrorOf([&] { Show(c.arguments); });
    EXPECT_EQ(error.code, c.code) << c.arguments << " → " << error.message;
    EXPECT_EQ(error.location.file, kModelFile) << c.arguments;
    EXPECT_EQ(error.location.line, 4) << c.arguments;
    EXPECT_GT(error.location.column, 6) << c.arguments << " (located at the offending argument)";
  }
  Diagnostic newline = ErrorOf([&] { Show("'a\nb'"); });
  EXPECT_EQ(newline.code, "SLU-MACRO-005");
  Diagnostic located = ErrorOf([&] { Show("1, [2, nope]"); });
  EXPECT_EQ(located.location.column, 14);
  EXPECT_EQ(located.source_line, "@show(1, [2, nope])");
  EXPECT_NE(FormatDiagnostic(located).find("pipelines/main/model.sql:4:14: error[SLU-MACRO-005]"), std::string::npos)
      << FormatDiagnostic(located);
}

TEST_F(MacroEngineArguments, ArgumentsThatDoNotMatchTheSignature) {
  Diagnostic error = ErrorOf([&] { ExpandBody(*engine_, "SELECT @two()"); });
  EXPECT_EQ(error.code, "SLU-MACRO-011");
  EXPECT_NE(error.message.find("TypeError"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("macros/show.py:14"), std::string::npos) << error.message;
  EXPECT_EQ(error.location.column, 8);
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*engine_, "@two(1, c=3)"); }).code, "SLU-MACRO-011");
}

TEST_F(MacroEngineArguments, TopLevelResultMustBeStr) {
  Diagnostic error = ErrorOf([&] { ExpandBody(*engine_, "SELECT @number(1)"); });
  EXPECT_EQ(error.code, "SLU-MACRO-012");
  EXPECT_NE(error.message.find("returned int"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("macros/show.py:18"), std::string::npos) << error.message;
}

TEST(MacroEngineNesting, NestedCallsAreEvaluatedFirstAndMustBeLiteral) {
  TempProject project;
  project.Write("macros/n.py",
                "def inner(n: int) -> int:\n"
                "    return n * 10\n"
                "\n"
                "\n"
                "def items() -> list:\n"
                "    return [1, ('a', None), {'k': 2.5}]\n"
                "\n"
                "\n"
                "def as_set() -> set:\n"
                "    return {1}\n"
                "\n"
                "\n"
                "def as_list() -> list:\n"
                "    return [1]\n"
                "\n"
                "\n"
                "def with_object() -> list:\n"
                "    return [object()]\n"
                "\n"
                "\n"
                "def outer(*args, **kwargs) -> str:\n"
                "    return repr(args) + ' ' + repr(kwargs)\n"
                "\n"
                "\n"
                "def emits_call() -> str:\n"
                "    return 'SELECT @inner(1)'\n"
                "\n"
                "\n"
                "def emits_quoted_call() -> str:\n"
                "    return \"'@inner(1)' AS text, user@inner(2)\"\n"
                "\n"
                "\n"
                "def emits_open_call() -> str:\n"
                "    return \"@inner(\"\n"
                "\n"
                "\n"
                "def emits_builtin() -> str:\n"
                "    return 'd >= @partition_start()'\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  EXPECT_EQ(ExpandBody(*engine, "@outer(@inner(2), [@inner(3)], k=@items(), m={@inner(1): @inner(4)})"),
            "(20, [30]) {'k': [1, ('a', None), {'k': 2.5}], 'm': {10: 40}}");
  EXPECT_EQ(ExpandBody(*engine, "@outer(@outer(@inner(1)))"), "('(10,) {}',) {}");

  Diagnostic set = ErrorOf([&] { ExpandBody(*engine, "SELECT @outer(1, @as_set())"); });
  EXPECT_EQ(set.code, "SLU-MACRO-013");
  EXPECT_EQ(set.location.column, 18);
  EXPECT_NE(set.message.find("set"), std::string::npos) << set.message;
  EXPECT_NE(set.message.find("macros/n.py:9"), std::string::npos) << set.message;
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*engine, "@outer(@with_object())"); }).code, "SLU-MACRO-013");
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*engine, "@outer({@as_list(): 1})"); }).code, "SLU-MACRO-013");

  Diagnostic unknown = ErrorOf([&] { ExpandBody(*engine, "@outer(1, @nope())"); });
  EXPECT_EQ(unknown.code, "SLU-MACRO-004");
  EXPECT_EQ(unknown.location.column, 11);
  EXPECT_NE(unknown.message.find("as_list, as_set, emits_builtin"), std::string::npos) << unknown.message;

  Diagnostic emits = ErrorOf([&] { ExpandBody(*engine, "SELECT\n  @emits_call()"); });
  EXPECT_EQ(emits.code, "SLU-MACRO-014");
  EXPECT_EQ(emits.location.line, 5);
  EXPECT_NE(emits.message.find("@inner("), std::string::npos) << emits.message;
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*engine, "@emits_open_call()"); }).code, "SLU-MACRO-014");
  EXPECT_EQ(ExpandBody(*engine, "SELECT @emits_quoted_call()"), "SELECT '@inner(1)' AS text, user@inner(2)");
  EXPECT_EQ(ExpandBody(*engine, "WHERE @emits_builtin()"), "WHERE d >= @partition_start()");
}

TEST(MacroEngineBuiltins, PartitionMacrosAreLeftForTheEngine) {
  TempProject project;
  project.Write("macros/m.py", "def one(x='1') -> str:\n    return x\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  EXPECT_EQ(ExpandBody(*engine, "SELECT @one() FROM t WHERE d >= @partition_start() AND d < @partition_end( )"),
            "SELECT 1 FROM t WHERE d >= @partition_start() AND d < @partition_end( )");
  Diagnostic arguments = ErrorOf([&] { ExpandBody(*engine, "WHERE d >= @partition_start(1)"); });
  EXPECT_EQ(arguments.code, "SLU-MACRO-015");
  EXPECT_EQ(arguments.location.column, 12);
  Diagnostic nested = ErrorOf([&] { ExpandBody(*engine, "WHERE @one(@partition_end())"); });
  EXPECT_EQ(nested.code, "SLU-MACRO-015");
  EXPECT_EQ(nested.location.column, 12);
}

TEST(MacroEngineContext, MacroContextCarriesTheTargetValuesAndIsImmutable) {
  TempProject project;
  project.Write("macros/c.py",
                "from streambuild.compiler.macros.models import MacroContext\n"
                "from sluice.macros import MacroContext as SluiceContext\n"
                "from collections.abc import Mapping\n"
                "import dataclasses\n"
                "\n"
                "\n"
                "def values(ctx: MacroContext, suffix: str = '') -> str:\n"
                "    assert MacroContext is SluiceContext\n"
                "    assert dataclasses.is_dataclass(ctx)\n"
                "    assert isinstance(ctx.variables, Mapping)\n"
                "    assert ctx.variables['limits'] == (1, 2)\n"
                "    assert ctx.variables['nested']['on'] is True\n"
                "    return '|'.join([ctx.adapter_name, ctx.dialect, repr(ctx.target_name), repr(ctx.database),\n"
                "                     repr(ctx.schema), repr(ctx.virtual_environments), ctx.variables['region'],\n"
                "                     suffix])\n"
                "\n"
                "\n"
                "def mutate(ctx: MacroContext) -> str:\n"
                "    ctx.database = 'other'\n"
                "    return 'no'\n"
                "\n"
                "\n"
                "def mutate_variables(ctx: MacroContext) -> str:\n"
                "    ctx.variables['region'] = 'us'\n"
                "    return 'no'\n"
                "\n"
                "\n"
                "def unannotated(ctx) -> str:\n"
                "    return 'no'\n"
                "\n"
                "\n"
                "def wrongly_annotated(ctx: dict) -> str:\n"
                "    return 'no'\n"
                "\n"
                "\n"
                "def late_ctx(x, ctx) -> str:\n"
                "    return f'{x}{ctx}'\n");
  project.Write("macros/future.py",
                "from __future__ import annotations\n"
                "from streambuild.compiler.macros.models import MacroContext\n"
                "\n"
                "\n"
                "def stringly(ctx: MacroContext) -> str:\n"
                "    return ctx.database\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  MacroContextValues context = DuckDbContext();
  context.schema = std::nullopt;
  context.target_name = std::nullopt;
  context.virtual_environments = true;
  context.variables = nlohmann::json::parse(R"({"region": "eu", "limits": [1, 2], "nested": {"on": true}})");
  EXPECT_EQ(ExpandBody(*engine, "@values() @values(suffix='!')", context),
            "duckdb|duckdb|None|'analytics'|None|True|eu| duckdb|duckdb|None|'analytics'|None|True|eu|!");
  context.database = "other_db";
  EXPECT_EQ(ExpandBody(*engine, "@stringly()", context), "other_db");
  EXPECT_EQ(ExpandBody(*engine, "@late_ctx(1, 2)", context), "12");

  Diagnostic frozen = ErrorOf([&] { ExpandBody(*engine, "@mutate()", context); });
  EXPECT_EQ(frozen.code, "SLU-MACRO-010");
  EXPECT_NE(frozen.message.find("FrozenInstanceError"), std::string::npos) << frozen.message;
  Diagnostic mapping = ErrorOf([&] { ExpandBody(*engine, "@mutate_variables()", context); });
  EXPECT_EQ(mapping.code, "SLU-MACRO-010") << "a TypeError raised inside the macro is not a signature mismatch";
  EXPECT_NE(mapping.message.find("TypeError"), std::string::npos) << mapping.message;
  EXPECT_NE(mapping.message.find("macros/c.py:24"), std::string::npos) << mapping.message;

  Diagnostic unannotated = ErrorOf([&] { ExpandBody(*engine, "@unannotated()"); });
  EXPECT_EQ(unannotated.code, "SLU-MACRO-009");
  EXPECT_NE(unannotated.message.find("macros/c.py:28"), std::string::npos) << unannotated.message;
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*engine, "@wrongly_annotated()"); }).code, "SLU-MACRO-009");
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*engine, "@values(ctx=1)"); }).code, "SLU-MACRO-008");
}

TEST(MacroEngineVariables, VariablesFromTheEnvironmentAreListedButNeverGivenToPython) {
  TempProject project;
  project.Write("macros/v.py",
                "from streambuild.compiler.macros.models import MacroContext\n"
                "\n"
                "\n"
                "def names(ctx: MacroContext) -> str:\n"
                "    assert 'api_key' in ctx.variables and len(ctx.variables) == 3\n"
                "    return ','.join(ctx.variables) + ' ' + repr(ctx.variables)\n"
                "\n"
                "\n"
                "def direct(ctx: MacroContext) -> str:\n"
                "    return ctx.variables['api_key']\n"
                "\n"
                "\n"
                "def derived(ctx: MacroContext, prefix: str) -> str:\n"
                "    return prefix + ctx.variables['dsn'].upper()\n"
                "\n"
                "\n"
                "def with_default(ctx: MacroContext) -> str:\n"
                "    return ctx.variables.get('api_key', 'none')\n"
                "\n"
                "\n"
                "def every_value(ctx: MacroContext) -> str:\n"
                "    return str(dict(ctx.variables.items()))\n"
                "\n"
                "\n"
                "def swallowed(ctx: MacroContext) -> str:\n"
                "    try:\n"
                "        return ctx.variables['api_key']\n"
                "    except Exception:\n"
                "        return 'fallback'\n"
                "\n"
                "\n"
                "def passed_on(ctx: MacroContext) -> str:\n"
                "    return ctx.variables['region']\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  MacroContextValues context = DuckDbContext();
  // The values given here would be the secret; a withheld name is never passed from `variables`.
  context.variables = nlohmann::json({{"region", "eu"}, {"api_key", "sk-live-123"}, {"dsn", "token=sk-live-123"}});
  context.withheld_variables = {{"api_key", "API_KEY"}, {"dsn", "API_KEY"}};

  EXPECT_EQ(ExpandBody(*engine, "@names()", context),
            "api_key,dsn,region MacroVariables({'api_key': <withheld: ${ENV:API_KEY}>, 'dsn': <withheld: "
            "${ENV:API_KEY}>, 'region': 'eu'})");
  EXPECT_EQ(ExpandBody(*engine, "@passed_on()", context), "eu");
  for (const char* call : {"@direct()", "@with_default()", "@every_value()", "@swallowed()", "@derived('x')",
                           "@passed_on(@derived('x'))"}) {
    Diagnostic d = ErrorOf([&] { ExpandBody(*engine, std::string("SELECT ") + call, context); });
    EXPECT_EQ(d.code, "SLU-MACRO-023") << call << ": " << d.message;
    EXPECT_EQ(d.message.find("sk-live"), std::string::npos) << d.message;
    EXPECT_EQ(d.hint.find("sk-live"), std::string::npos) << d.hint;
    EXPECT_NE(d.message.find("environment variable 'API_KEY'"), std::string::npos) << d.message;
  }
  Diagnostic derived = ErrorOf([&] { ExpandBody(*engine, "SELECT @passed_on(@derived('x'))", context); });
  EXPECT_EQ(derived.location.line, 4);
  EXPECT_EQ(derived.location.column, 19) << "at the nested call that read it";
  EXPECT_NE(derived.message.find("ctx.variables['dsn'] (macros/v.py:14, in @derived defined at macros/v.py:13)"),
            std::string::npos)
      << derived.message;
  Diagnostic swallowed = ErrorOf([&] { ExpandBody(*engine, "@swallowed()", context); });
  EXPECT_NE(swallowed.message.find("macros/v.py:27"), std::string::npos) << swallowed.message;
}

TEST(MacroEngineVariables, AnUnsetVariableIsAnErrorNotNone) {
  TempProject project;
  project.Write("macros/u.py",
                "from streambuild.compiler.macros.models import MacroContext\n"
                "\n"
                "\n"
                "def implicit(ctx: MacroContext) -> str:\n"
                "    return f\"'{ctx.variables.get('missing')}'\"\n"
                "\n"
                "\n"
                "def indexed(ctx: MacroContext) -> str:\n"
                "    return ctx.variables['missing']\n"
                "\n"
                "\n"
                "def explicit(ctx: MacroContext) -> str:\n"
                "    return repr(ctx.variables.get('missing', None)) + ctx.variables.get('missing', '!')\n"
                "\n"
                "\n"
                "def handled(ctx: MacroContext) -> str:\n"
                "    try:\n"
                "        return ctx.variables['missing']\n"
                "    except KeyError:\n"
                "        return 'default'\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  MacroContextValues context = DuckDbContext();
  context.variables = nlohmann::json({{"region", "eu"}});
  context.withheld_variables = {{"api_key", "API_KEY"}};
  EXPECT_EQ(ExpandBody(*engine, "@explicit() @handled()", context), "None! default");
  Diagnostic implicit = ErrorOf([&] { ExpandBody(*engine, "SELECT @implicit()", context); });
  EXPECT_EQ(implicit.code, "SLU-MACRO-024");
  EXPECT_EQ(implicit.location.column, 8);
  EXPECT_EQ(implicit.message,
            "macro @implicit read ctx.variables['missing'] (macros/u.py:5, in @implicit defined at macros/u.py:4), "
            "which is not set");
  EXPECT_EQ(implicit.hint,
            "set variables: api_key, region; define it under [vars] or pass it with --vars, or give a default: "
            "ctx.variables.get('missing', default)");
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*engine, "@indexed()", context); }).code, "SLU-MACRO-024");
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*engine, "@indexed()"); }).hint.rfind("no variables are set", 0), 0u);
}

TEST(MacroEngineContext, PipelineNamingContextIsAvailable) {
  TempProject project;
  project.Write("macros/naming.py",
                "from streambuild.compiler.macros.models import PipelineNamingContext\n"
                "\n"
                "\n"
                "def naming_check() -> str:\n"
                "    c = PipelineNamingContext('orders', 'events', ['b', 'a'], 'pipelines/orders', 'direct')\n"
                "    return ','.join(c.model_names) + ' ' + c.relative_directory + ' ' + str(c.source_name)\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  EXPECT_EQ(ExpandBody(*engine, "@naming_check()"), "a,b pipelines/orders events");
}

constexpr const char* kSourcesFile = "sources/kafka.yml";

// A Kafka source entry at sources/kafka.yml:4:5.
SourceLocation SourceEntry() { return SourceLocation{kSourcesFile, 4, 5}; }

TEST(MacroEngineNaming, KafkaNamingMacroDerivesTheSourceNameFromTheTopic) {
  TempProject project;
  project.Write("macros/naming.py",
                "def name_from_topic(topic: str) -> str:\n"
                "    \"\"\"source.<name>.<event> -> <name>\"\"\"\n"
                "    parts = topic.split('.')\n"
                "    return parts[1]\n"
                "\n"
                "\n"
                "def as_written(topic):\n"
                "    return topic\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  EXPECT_EQ(engine->DeriveKafkaSourceName("name_from_topic", "source.orders.created", SourceEntry()), "orders");
  EXPECT_EQ(engine->DeriveKafkaSourceName("name_from_topic", "source._Line_items2.v1", SourceEntry()), "_Line_items2");
  EXPECT_EQ(engine->DeriveKafkaSourceName("as_written", "orders", SourceEntry()), "orders");
}

TEST(MacroEngineNaming, KafkaNamingMacroResultMustBeASourceName) {
  TempProject project;
  project.Write("macros/naming.py",
                "def as_written(topic):\n"
                "    return topic\n"
                "\n"
                "\n"
                "def number(topic):\n"
                "    return 7\n"
                "\n"
                "\n"
                "def nothing(topic):\n"
                "    pass\n"
                "\n"
                "\n"
                "def surrogate(topic):\n"
                "    return '\\ud800'\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  for (const std::string topic : {"", "1orders", "orders-created", "source.orders", "ordérs", "orders ", "a\nb"}) {
    Diagnostic error = ErrorOf([&] { engine->DeriveKafkaSourceName("as_written", topic, SourceEntry()); });
    EXPECT_EQ(error.code, "SLU-MACRO-021") << topic;
    EXPECT_EQ(error.location.file, kSourcesFile) << topic;
    EXPECT_EQ(error.location.line, 4) << topic;
    EXPECT_EQ(error.location.column, 5) << topic;
    EXPECT_NE(error.message.find("macros/naming.py:1"), std::string::npos) << error.message;
    EXPECT_NE(error.message.find("not a source name"), std::string::npos) << error.message;
  }
  Diagnostic dashed = ErrorOf([&] { engine->DeriveKafkaSourceName("as_written", "orders-created", SourceEntry()); });
  EXPECT_NE(dashed.message.find("derived 'orders-created' from topic 'orders-created'"), std::string::npos)
      << dashed.message;
  Diagnostic newline = ErrorOf([&] { engine->DeriveKafkaSourceName("as_written", "a\nb", SourceEntry()); });
  EXPECT_NE(newline.message.find("'a\\nb'"), std::string::npos) << newline.message;
  std::string long_topic(200, 'x');
  long_topic += '-';
  Diagnostic cut = ErrorOf([&] { engine->DeriveKafkaSourceName("as_written", long_topic, SourceEntry()); });
  EXPECT_NE(cut.message.find("… (201 bytes)"), std::string::npos) << cut.message;
  EXPECT_LT(cut.message.size(), 400u) << cut.message;

  Diagnostic number = ErrorOf([&] { engine->DeriveKafkaSourceName("number", "orders", SourceEntry()); });
  EXPECT_EQ(number.code, "SLU-MACRO-020");
  EXPECT_EQ(number.location.file, kSourcesFile);
  EXPECT_NE(number.message.find("returned int"), std::string::npos) << number.message;
  EXPECT_NE(number.message.find("macros/naming.py:5"), std::string::npos) << number.message;
  EXPECT_NE(number.message.find("topic 'orders'"), std::string::npos) << number.message;
  Diagnostic nothing = ErrorOf([&] { engine->DeriveKafkaSourceName("nothing", "orders", SourceEntry()); });
  EXPECT_EQ(nothing.code, "SLU-MACRO-020");
  EXPECT_NE(nothing.message.find("returned NoneType"), std::string::npos) << nothing.message;
  EXPECT_EQ(ErrorOf([&] { engine->DeriveKafkaSourceName("surrogate", "orders", SourceEntry()); }).code,
            "SLU-MACRO-020");
}

TEST(MacroEngineNaming, NamingMacroErrorsNameTheSettingUserAndTheMacroSource) {
  TempProject project;
  project.Write("macros/naming.py",
                "def _prefix(topic):\n"
                "    if not topic.startswith('source.'):\n"
                "        raise ValueError(f'unexpected topic {topic!r}')\n"
                "    return topic[len('source.'):]\n"
                "\n"
                "\n"
                "def name_from_topic(topic: str) -> str:\n"
                "    return _prefix(topic).split('.')[0]\n"
                "\n"
                "\n"
                "def two_parameters(topic, other) -> str:\n"
                "    return topic\n"
                "\n"
                "\n"
                "def inner_type_error(topic) -> str:\n"
                "    return topic + 1\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  Diagnostic raised = ErrorOf([&] { engine->DeriveKafkaSourceName("name_from_topic", "orders.v1", SourceEntry()); });
  EXPECT_EQ(raised.code, "SLU-MACRO-018");
  EXPECT_EQ(raised.location.file, kSourcesFile);
  EXPECT_EQ(raised.location.line, 4);
  EXPECT_EQ(raised.location.column, 5);
  EXPECT_NE(raised.message.find("ValueError: unexpected topic 'orders.v1'"), std::string::npos) << raised.message;
  EXPECT_NE(raised.message.find("defaults.sources.kafka.naming_macro"), std::string::npos) << raised.message;
  EXPECT_NE(raised.message.find("macros/naming.py:3"), std::string::npos) << raised.message;
  EXPECT_NE(raised.message.find("defined at macros/naming.py:7"), std::string::npos) << raised.message;
  EXPECT_NE(raised.hint.find("raise ValueError"), std::string::npos) << raised.hint;
  EXPECT_NE(FormatDiagnostic(raised).find("sources/kafka.yml:4:5: error[SLU-MACRO-018]"), std::string::npos)
      << FormatDiagnostic(raised);

  Diagnostic signature = ErrorOf([&] { engine->DeriveKafkaSourceName("two_parameters", "orders", SourceEntry()); });
  EXPECT_EQ(signature.code, "SLU-MACRO-019");
  EXPECT_NE(signature.message.find("macros/naming.py:11"), std::string::npos) << signature.message;
  EXPECT_NE(signature.hint.find("(topic: str) -> str"), std::string::npos) << signature.hint;
  Diagnostic inner = ErrorOf([&] { engine->DeriveKafkaSourceName("inner_type_error", "orders", SourceEntry()); });
  EXPECT_EQ(inner.code, "SLU-MACRO-018") << "a TypeError raised inside the macro is not a signature mismatch";
  EXPECT_NE(inner.message.find("macros/naming.py:16"), std::string::npos) << inner.message;

  Diagnostic unknown = ErrorOf([&] { engine->DeriveKafkaSourceName("missing", "orders", SourceEntry()); });
  EXPECT_EQ(unknown.code, "SLU-MACRO-017");
  EXPECT_EQ(unknown.location.file, kSourcesFile);
  EXPECT_NE(unknown.message.find("defaults.sources.kafka.naming_macro names the macro `missing`"), std::string::npos)
      << unknown.message;
  EXPECT_NE(unknown.message.find("known macros: inner_type_error, name_from_topic, two_parameters"), std::string::npos)
      << unknown.message;
  EXPECT_EQ(ErrorOf([&] { engine->DeriveKafkaSourceName("_prefix", "orders", SourceEntry()); }).code, "SLU-MACRO-017");

  EXPECT_EQ(engine->DeriveKafkaSourceName("name_from_topic", "source.orders.created", SourceEntry()), "orders")
      << "the engine stays usable after errors";
}

PipelineNamingContextValues OrdersPipeline() {
  PipelineNamingContextValues context;
  context.name = "pl__orders";
  context.source_name = "orders";
  context.model_names = {"a_model", "b_model"};
  context.relative_directory = "pipelines/pl__orders";
  context.mode = "virtual";
  return context;
}

TEST(MacroEngineNaming, PipelineNamingMacroChecksTheDirectoryName) {
  TempProject project;
  project.Write("macros/pipelines.py",
                "from streambuild.compiler.macros.models import PipelineNamingContext\n"
                "\n"
                "\n"
                "def pipeline_name(ctx: PipelineNamingContext) -> str:\n"
                "    assert isinstance(ctx, PipelineNamingContext)\n"
                "    assert ctx.relative_directory == 'pipelines/' + ctx.name\n"
                "    assert ctx.mode in ('direct', 'virtual'), ctx.mode\n"
                "    assert isinstance(ctx.model_names, tuple)\n"
                "    if ctx.source_name is None:\n"
                "        return 'pl__' + '_'.join(ctx.model_names)\n"
                "    return 'pl__' + ctx.source_name\n"
                "\n"
                "\n"
                "def frozen(ctx: PipelineNamingContext) -> str:\n"
                "    ctx.name = 'other'\n"
                "    return ctx.name\n"
                "\n"
                "\n"
                "def no_parameters() -> str:\n"
                "    return 'pl__orders'\n"
                "\n"
                "\n"
                "def listed(ctx: PipelineNamingContext) -> list:\n"
                "    return [ctx.name]\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  SourceLocation at{"pipelines/pl__orders", 0, 0};
  engine->CheckPipelineName("pipeline_name", OrdersPipeline(), at);

  PipelineNamingContextValues sourceless = OrdersPipeline();
  sourceless.source_name = std::nullopt;
  sourceless.model_names = {"b", "a"};
  sourceless.name = "pl__a_b";
  sourceless.relative_directory = "pipelines/pl__a_b";
  sourceless.mode = "direct";
  engine->CheckPipelineName("pipeline_name", sourceless, at);

  PipelineNamingContextValues renamed = OrdersPipeline();
  renamed.name = "orders";
  renamed.relative_directory = "pipelines/orders";
  Diagnostic mismatch = ErrorOf([&] {
    engine->CheckPipelineName("pipeline_name", renamed, {"pipelines/orders", 0, 0});
  });
  EXPECT_EQ(mismatch.code, "SLU-MACRO-022");
  EXPECT_EQ(mismatch.location.file, "pipelines/orders");
  EXPECT_NE(mismatch.message.find("returned 'pl__orders' for the pipeline directory 'orders' (pipelines/orders)"),
            std::string::npos)
      << mismatch.message;
  EXPECT_NE(mismatch.message.find("naming.pipeline_naming_macro"), std::string::npos) << mismatch.message;
  EXPECT_NE(mismatch.message.find("macros/pipelines.py:4"), std::string::npos) << mismatch.message;
  EXPECT_NE(mismatch.hint.find("never renames"), std::string::npos) << mismatch.hint;

  PipelineNamingContextValues bad_mode = OrdersPipeline();
  bad_mode.mode = "sideways";
  Diagnostic raised = ErrorOf([&] { engine->CheckPipelineName("pipeline_name", bad_mode, at); });
  EXPECT_EQ(raised.code, "SLU-MACRO-018");
  EXPECT_EQ(raised.location.file, "pipelines/pl__orders");
  EXPECT_NE(raised.message.find("AssertionError: sideways"), std::string::npos) << raised.message;
  EXPECT_NE(raised.message.find("pipeline 'pl__orders'"), std::string::npos) << raised.message;
  EXPECT_NE(raised.message.find("macros/pipelines.py:7"), std::string::npos) << raised.message;

  Diagnostic frozen = ErrorOf([&] { engine->CheckPipelineName("frozen", OrdersPipeline(), at); });
  EXPECT_EQ(frozen.code, "SLU-MACRO-018");
  EXPECT_NE(frozen.message.find("FrozenInstanceError"), std::string::npos) << frozen.message;
  Diagnostic signature = ErrorOf([&] { engine->CheckPipelineName("no_parameters", OrdersPipeline(), at); });
  EXPECT_EQ(signature.code, "SLU-MACRO-019");
  EXPECT_NE(signature.hint.find("(ctx: PipelineNamingContext) -> str"), std::string::npos) << signature.hint;
  EXPECT_EQ(ErrorOf([&] { engine->CheckPipelineName("listed", OrdersPipeline(), at); }).code, "SLU-MACRO-020");
  Diagnostic unknown = ErrorOf([&] { engine->CheckPipelineName("missing", OrdersPipeline(), at); });
  EXPECT_EQ(unknown.code, "SLU-MACRO-017");
  EXPECT_NE(unknown.message.find("naming.pipeline_naming_macro names the macro `missing`"), std::string::npos)
      << unknown.message;
}

TEST(MacroEngineNaming, FingerprintCoversNameFileAndSource) {
  const std::string text =
      "def name_from_topic(topic: str) -> str:\n"
      "    return topic.split('.')[1]\n";
  TempProject project;
  project.Write("macros/naming.py", text);
  std::unique_ptr<MacroEngine> engine = project.Load();
  std::string fingerprint = engine->MacroFingerprint("name_from_topic");
  EXPECT_EQ(fingerprint.size(), 64u);
  EXPECT_EQ(fingerprint, Sha256Hex(std::string("name_from_topic") + '\0' + "macros/naming.py" + '\0' + text));
  EXPECT_EQ(project.Load()->MacroFingerprint("name_from_topic"), fingerprint) << "stable across loads";

  TempProject elsewhere;
  elsewhere.Write("macros/naming.py", text);
  EXPECT_EQ(elsewhere.Load()->MacroFingerprint("name_from_topic"), fingerprint) << "independent of the root";
  TempProject moved_down;
  moved_down.Write("macros/naming.py", "import re\n\n\n" + text + "\n\ndef other() -> str:\n    return 'x'\n");
  EXPECT_EQ(moved_down.Load()->MacroFingerprint("name_from_topic"), fingerprint)
      << "only the function's own source counts";

  TempProject changed;
  changed.Write("macros/naming.py",
                "def name_from_topic(topic: str) -> str:\n"
                "    return topic.split('.')[2]\n");
  EXPECT_NE(changed.Load()->MacroFingerprint("name_from_topic"), fingerprint);
  TempProject renamed_file;
  renamed_file.Write("macros/names.py", text);
  EXPECT_NE(renamed_file.Load()->MacroFingerprint("name_from_topic"), fingerprint);

  Diagnostic unknown = ErrorOf([&] { engine->MacroFingerprint("missing"); });
  EXPECT_EQ(unknown.code, "SLU-MACRO-017");
  EXPECT_FALSE(unknown.location.known());
}

TEST(MacroEngineNaming, NamingCallsAreThreadSafeWithExpansion) {
  TempProject project;
  project.Write("macros/m.py",
                "def name_from_topic(topic: str) -> str:\n"
                "    return topic.split('.')[1]\n"
                "\n"
                "\n"
                "def which() -> str:\n"
                "    return 'x'\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  std::vector<std::thread> threads;
  std::vector<int> good(6, 0);
  for (size_t t = 0; t < good.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        std::string topic = "source.s" + std::to_string(t) + "_" + std::to_string(i) + ".created";
        bool ok = t % 2 ? ExpandBody(*engine, "@which()") == "x"
                        : engine->DeriveKafkaSourceName("name_from_topic", topic, SourceEntry()) ==
                              "s" + std::to_string(t) + "_" + std::to_string(i);
        good[t] += ok ? 1 : 0;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int count : good) EXPECT_EQ(count, 100);
}

TEST(MacroEngineCompatibility, StreamBuildProjectMacrosRunUnchanged) {
  fs::path root = fs::path(SLUICE_SOURCE_DIR) / "tests/projects/streambuild_compat";
  std::unique_ptr<MacroEngine> engine = MacroEngine::Load(root);
  EXPECT_EQ(Names(*engine),
            (std::vector<std::string>{"line_total_expression", "pipeline_name", "qualified", "replay_columns",
                                      "source_name_from_topic", "timestamp_literal"}));
  EXPECT_EQ(engine->Find("qualified")->description, "A table name qualified with the target database.");

  std::string file = "pipelines/pl__order_events/order_items.sql";
  std::string text = ReadFile(root / file);
  size_t body = text.find(");\n") + 3;
  MacroContextValues context;
  context.adapter_name = "clickhouse";
  context.dialect = "clickhouse";
  context.target_name = "dev";
  context.database = "orders_db";
  std::string expanded = engine->Expand(file, text, body, text.size(), context);
  EXPECT_NE(expanded.find("CAST(coalesce(JSONExtractFloat(item, 'quantity'), 0) * "
                          "coalesce(JSONExtractFloat(item, 'price'), 0) AS Float64) AS line_total"),
            std::string::npos)
      << expanded;
  EXPECT_EQ(expanded.find('@'), std::string::npos);
  std::string qualified = "SELECT * FROM @qualified(\"orders\")";
  EXPECT_EQ(engine->Expand("m.sql", qualified, 0, qualified.size(), context), "SELECT * FROM orders_db.orders");
}

TEST(MacroEngineErrors, PythonErrorsNameTheCallSiteAndTheMacroSource) {
  TempProject project;
  project.Write("macros/failing.py",
                "def _check(name):\n"
                "    if not name.isidentifier():\n"
                "        raise ValueError(f'bad table name {name!r}')\n"
                "    return name\n"
                "\n"
                "\n"
                "def table(name: str) -> str:\n"
                "    \"\"\"A checked table name.\"\"\"\n"
                "    return _check(name)\n"
                "\n"
                "\n"
                "def direct() -> str:\n"
                "    raise RuntimeError('direct failure')\n"
                "\n"
                "\n"
                "def exits() -> str:\n"
                "    raise SystemExit(3)\n"
                "\n"
                "\n"
                "def uses_library() -> str:\n"
                "    import json\n"
                "    return json.loads('{')\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  Diagnostic helper = ErrorOf([&] { ExpandBody(*engine, "SELECT *\nFROM @table('x y')"); });
  EXPECT_EQ(helper.code, "SLU-MACRO-010");
  EXPECT_EQ(helper.location.file, kModelFile);
  EXPECT_EQ(helper.location.line, 5);
  EXPECT_EQ(helper.location.column, 6);
  EXPECT_EQ(helper.source_line, "FROM @table('x y')");
  EXPECT_NE(helper.message.find("ValueError: bad table name 'x y'"), std::string::npos) << helper.message;
  EXPECT_NE(helper.message.find("macros/failing.py:3"), std::string::npos) << helper.message;
  EXPECT_NE(helper.message.find("defined at macros/failing.py:7"), std::string::npos) << helper.message;
  EXPECT_NE(helper.hint.find("raise ValueError"), std::string::npos) << helper.hint;
  std::string rendered = FormatDiagnostic(helper);
  EXPECT_NE(rendered.find("pipelines/main/model.sql:5:6: error[SLU-MACRO-010]"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("     ^"), std::string::npos) << rendered;

  Diagnostic direct = ErrorOf([&] { ExpandBody(*engine, "@direct()"); });
  EXPECT_NE(direct.message.find("RuntimeError: direct failure (macros/failing.py:13"), std::string::npos)
      << direct.message;

  Diagnostic exits = ErrorOf([&] { ExpandBody(*engine, "@exits()"); });
  EXPECT_EQ(exits.code, "SLU-MACRO-010");
  EXPECT_NE(exits.message.find("SystemExit"), std::string::npos) << exits.message;

  Diagnostic library = ErrorOf([&] { ExpandBody(*engine, "@uses_library()"); });
  EXPECT_NE(library.message.find("JSONDecodeError"), std::string::npos) << library.message;
  EXPECT_NE(library.message.find("macros/failing.py:22"), std::string::npos) << library.message;

  EXPECT_EQ(ExpandBody(*engine, "@table('ok')"), "ok") << "the engine stays usable after errors";
}

TEST(MacroEngineErrors, ScannerErrorsAreLocatedInTheWholeFile) {
  TempProject project;
  project.Write("macros/m.py", "def m() -> str:\n    return 'x'\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  Diagnostic unclosed = ErrorOf([&] { ExpandBody(*engine, "SELECT\n  @m(1"); });
  EXPECT_EQ(unclosed.code, "SLU-SQL-014");
  EXPECT_EQ(unclosed.location.file, kModelFile);
  EXPECT_EQ(unclosed.location.line, 5);
  EXPECT_EQ(unclosed.location.column, 3);
  EXPECT_EQ(unclosed.source_line, "  @m(1");

  std::string text = "MODEL (kind VIEW); SELECT @m('x";
  Diagnostic same_line = ErrorOf([&] { engine->Expand("a.sql", text, 18, text.size(), DuckDbContext()); });
  EXPECT_EQ(same_line.code, "SLU-SQL-001");
  EXPECT_EQ(same_line.location.line, 1);
  EXPECT_EQ(same_line.location.column, 30);
}

TEST(MacroEngineExpansion, KeepsTheBodyByteForByteOutsideCalls) {
  TempProject project;
  project.Write("macros/m.py", "def m(x: str) -> str:\n    return x.upper()\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  EXPECT_EQ(ExpandBody(*engine, "SELECT '@m(1)', \"@m(\", email@m('x') /* @m( */ ,@m('y')\n"),
            "SELECT '@m(1)', \"@m(\", email@m('x') /* @m( */ ,Y\n");
  EXPECT_EQ(ExpandBody(*engine, "SELECT 1"), "SELECT 1");
  std::string text = "MODEL ();\nSELECT @m('a') -- trailing";
  EXPECT_EQ(engine->Expand("x.sql", text, 10, 24, DuckDbContext()), "SELECT A");
  EXPECT_EQ(engine->Expand("x.sql", text, 10, 1000, DuckDbContext()), "SELECT A -- trailing");
}

TEST(MacroEngineExpansion, EnginesAreIndependentAndThreadSafe) {
  TempProject first;
  first.Write("macros/m.py", "def which() -> str:\n    return 'first'\n");
  TempProject second;
  second.Write("macros/m.py", "def which() -> str:\n    return 'second'\n\n\ndef extra() -> str:\n    return 'e'\n");
  std::unique_ptr<MacroEngine> a = first.Load();
  std::unique_ptr<MacroEngine> b = second.Load();
  EXPECT_EQ(ExpandBody(*a, "@which()"), "first");
  EXPECT_EQ(ExpandBody(*b, "@which() @extra()"), "second e");
  EXPECT_EQ(ErrorOf([&] { ExpandBody(*a, "@extra()"); }).code, "SLU-MACRO-004");

  std::string body;
  for (int i = 0; i < 200; ++i) body += "@which(),";
  std::vector<std::thread> threads;
  std::vector<std::string> results(8);
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] { results[t] = ExpandBody(t % 2 ? *a : *b, body); });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < results.size(); ++t) {
    std::string expected;
    for (int i = 0; i < 200; ++i) expected += t % 2 ? "first," : "second,";
    EXPECT_EQ(results[t], expected);
  }
  b.reset();
  EXPECT_EQ(ExpandBody(*a, "@which()"), "first");
}

TEST(MacroEngineExpansion, InterpreterIsIsolatedFromTheEnvironment) {
  TempProject project;
  project.Write("macros/env.py",
                "import sys\n"
                "\n"
                "\n"
                "def interpreter() -> str:\n"
                "    return f'{sys.version_info[0]}.{sys.version_info[1]} {sys.flags.isolated} {sys.executable}'\n");
  ::setenv("PYTHONPATH", "/nonexistent/sluice", 1);
  std::unique_ptr<MacroEngine> engine = project.Load();
  std::string info = ExpandBody(*engine, "@interpreter()");
  EXPECT_EQ(info.rfind("3.11 1 ", 0), 0u) << info;
  EXPECT_EQ(info.find(".pyenv"), std::string::npos) << info;
  ::unsetenv("PYTHONPATH");
}

TEST(MacroEngineSpeed, TenThousandCallsExpandQuickly) {
  TempProject project;
  project.Write("macros/speed.py",
                "from streambuild.compiler.macros.models import MacroContext\n"
                "\n"
                "\n"
                "def column(name: str, n: int) -> str:\n"
                "    return f'{name}_{n}'\n"
                "\n"
                "\n"
                "def qualified(ctx: MacroContext, table: str) -> str:\n"
                "    return f'{ctx.database}.{table}'\n");
  std::unique_ptr<MacroEngine> engine = project.Load();
  std::string body = "SELECT ";
  for (int i = 0; i < 5000; ++i) body += "@column('c', " + std::to_string(i) + "), ";
  for (int i = 0; i < 5000; ++i) body += "@qualified('t'), ";
  body += "1";
  auto start = std::chrono::steady_clock::now();
  std::string expanded = ExpandBody(*engine, body);
  auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ speed    ] expanding 10000 macro calls took %.1f ms\n", elapsed);
  EXPECT_NE(expanded.find("c_4999, analytics.t"), std::string::npos);
  EXPECT_EQ(expanded.find('@'), std::string::npos);
}

}  // namespace
}  // namespace sluice
