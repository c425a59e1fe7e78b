// Hostile inputs: `sluice compile` on projects no one should write — a 10 MB model, 10,000-deep nesting, a
// 100,000-model chain, a cycle through 1,000 models, binary garbage in a .sql file. Each either succeeds or
// fails with exactly one located error (exit 1, nothing written), within bounded time and memory: the child
// runs under an address-space limit and is killed after a wall-time limit; its peak RSS (wait4) is asserted.
// The limits are generous — they catch a crash, a hang, a quadratic walk or a runaway allocation, not a
// slowdown — and each case prints what it measured.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/utf8.hpp"
#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Sanitizers reserve terabytes of address space and use several times the memory and time.
constexpr rlim_t kAddressSpaceLimit = rlim_t{4} << 30;
constexpr long kPeakRssLimitKb = (kSanitized ? 6L : 2L) << 20;
constexpr std::chrono::seconds kWallTimeLimit(kSanitized ? 600 : 120);

struct BoundedRun {
  int exit_code = -1;  // 128 + signal when killed
  bool timed_out = false;
  double seconds = 0;
  long peak_rss_kb = 0;
  std::string out;
  std::string err;
};

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `sluice --project-dir <root> args...` with the address-space limit, killing it at the wall-time limit.
BoundedRun RunBounded(const ScratchProject& project, const std::vector<std::string>& args) {
  const std::filesystem::path out = project.root().parent_path() / "bounded.out";
  const std::filesystem::path err = project.root().parent_path() / "bounded.err";
  std::vector<std::string> argv{SluiceBinary(), "--project-dir", project.root().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!kSanitized) {
      rlimit limit{kAddressSpaceLimit, kAddressSpaceLimit};
      ::setrlimit(RLIMIT_AS, &limit);
    }
    int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::dup2(null_fd, 0);
    std::vector<char*> pointers;
    for (std::string& arg : argv) pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    ::execv(pointers[0], pointers.data());
    ::_exit(127);
  }
  BoundedRun run;
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, WNOHANG, &usage) == 0) {
    if (std::chrono::steady_clock::now() - start > kWallTimeLimit) {
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      run.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.peak_rss_kb = usage.ru_maxrss;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  run.out = Slurp(out);
  run.err = Slurp(err);
  return run;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

bool HasControlBytes(const std::string& text) {
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7F) return true;
  }
  return false;
}

// Runs `sluice compile` and checks the bounds every case shares; prints the measurements.
BoundedRun Compile(const ScratchProject& project, const std::string& what) {
  BoundedRun run = RunBounded(project, {"compile"});
  std::printf("[ hostile  ] %-44s exit %d, %.2f s, peak RSS %ld MiB, stderr %zu bytes\n", what.c_str(), run.exit_code,
              run.seconds, run.peak_rss_kb / 1024, run.err.size());
  ::testing::Test::RecordProperty("seconds", std::to_string(run.seconds));
  ::testing::Test::RecordProperty("peak_rss_kb", std::to_string(run.peak_rss_kb));
  EXPECT_FALSE(run.timed_out) << what << " ran past " << kWallTimeLimit.count() << " s";
  EXPECT_LT(run.peak_rss_kb, kPeakRssLimitKb) << what;
  EXPECT_FALSE(HasControlBytes(run.err)) << "stderr holds control bytes";
  return run;
}

void ExpectSuccess(const ScratchProject& project, const BoundedRun& run, const std::string& summary) {
  ASSERT_EQ(run.exit_code, 0) << run.err.substr(0, 4000);
  EXPECT_NE(run.out.find(summary), std::string::npos) << run.out;
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target" / "manifest.json"));
}

// Exactly one error, `location: error[code]`, with a hint; exit 1; short output; nothing written.
void ExpectOneLocatedError(const ScratchProject& project, const BoundedRun& run, const std::string& location,
                           const std::string& code) {
  EXPECT_EQ(run.exit_code, 1) << run.err.substr(0, 4000);
  EXPECT_EQ(Count(run.err, "error["), 1u) << run.err.substr(0, 4000);
  EXPECT_EQ(run.err.rfind(location + ": error[" + code + "]", 0), 0u) << run.err.substr(0, 4000);
  EXPECT_NE(run.err.find("hint: "), std::string::npos) << run.err.substr(0, 4000);
  EXPECT_LT(run.err.size(), 2000u) << run.err.substr(0, 4000);
  EXPECT_FALSE(std::filesystem::exists(project.root() / "target"));
  EXPECT_FALSE(std::filesystem::exists(project.root() / "warehouse.duckdb"));
  EXPECT_FALSE(std::filesystem::exists(project.root() / ".sluice"));
}

// The `shop` fixture with one more model in its `core` pipeline (which reads the `events` source).
constexpr const char* kModel = "pipelines/core/hostile.sql";
constexpr const char* kHeader = "MODEL (kind table);\n";

std::string Repeated(const std::string& piece, size_t times) {
  std::string text;
  text.reserve(piece.size() * times);
  for (size_t i = 0; i < times; ++i) text += piece;
  return text;
}

// m000000, m000001, …: fixed width so that file order is chain order.
std::string ChainName(size_t i) {
  char name[16];
  std::snprintf(name, sizeof(name), "m%06zu", i);
  return name;
}

// The `shop` fixture with its pipelines replaced by one `chain` pipeline of `count` models, model i reading
// model i-1; model 0 reads the `events` source, or the last model when `closed` (a cycle through all).
void WriteChain(const ScratchProject& project, size_t count, bool closed) {
  project.Remove("pipelines");
  std::filesystem::path folder = project.root() / "pipelines" / "chain";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "pipeline.toml") << "database = \"chain\"\n";
  for (size_t i = 0; i < count; ++i) {
    std::string input = i > 0    ? "__ref(\"" + ChainName(i - 1) + "\")"
                        : closed ? "__ref(\"" + ChainName(count - 1) + "\")"
                                 : std::string("__source(\"events\")");
    std::ofstream(folder / (ChainName(i) + ".sql"), std::ios::binary)
        << "MODEL (kind table);\nSELECT CAST(event_id AS BIGINT) AS event_id FROM " << input << "\n";
  }
}

// ---- a 10 MB model ---------------------------------------------------------------------------------------

TEST(HostileInputs, ATenMegabyteModelWithAQuarterMillionColumnsCompiles) {
  ScratchProject project("shop");
  std::string model = std::string(kHeader) + "SELECT\n";
  for (int i = 0; i < 250000; ++i) {
    model += (i > 0 ? ",\n" : "") + std::string("  CAST(amount + ") + std::to_string(i) + " AS BIGINT) AS c" +
             std::to_string(i);
  }
  model += "\nFROM __ref(\"clean_events\")\n";
  ASSERT_GT(model.size(), 10u << 20);
  project.Write(kModel, model);
  BoundedRun run = Compile(project, "10 MB model, 250,000 columns");
  ExpectSuccess(project, run, "6 model(s)");
}

TEST(HostileInputs, ATenMegabyteCommentStringAndLineCommentCompile) {
  ScratchProject project("shop");
  const std::string big(10 << 20, 'x');
  project.Write(kModel, std::string(kHeader) + "/* " + big + " */\nSELECT\n  CAST('" + big + "' AS VARCHAR) AS s -- " +
                            big + "\nFROM __ref(\"clean_events\")\n");
  BoundedRun run = Compile(project, "30 MB model, 10 MB comment/string/line");
  ExpectSuccess(project, run, "6 model(s)");
}

TEST(HostileInputs, AnErrorAtTheEndOfATenMegabyteLineIsLocatedWithAShortSnippet) {
  ScratchProject project("shop");
  const std::string big(10 << 20, 'x');
  std::string body = "SELECT CAST('" + big + "' AS VARCHAR) AS s, amount AS bare FROM __ref(\"clean_events\")\n";
  project.Write(kModel, std::string(kHeader) + body);
  BoundedRun run = Compile(project, "error at the end of a 10 MB line");
  ExpectOneLocatedError(project, run, std::string(kModel) + ":2:" + std::to_string(body.find("amount AS") + 1),
                        "SLU-MODEL-105");
}

// ---- 10,000-deep nesting ---------------------------------------------------------------------------------

TEST(HostileInputs, TenThousandNestedParenthesesInTheSelectAreALocatedError) {
  ScratchProject project("shop");
  const std::string prefix = "SELECT CAST(";
  project.Write(kModel, std::string(kHeader) + prefix + Repeated("(", 10000) + "amount" + Repeated(")", 10000) +
                            " AS BIGINT) AS a FROM __ref(\"clean_events\")\n");
  BoundedRun run = Compile(project, "10,000 nested parentheses in SELECT");
  // The 257th `(` is one too deep (kMaxSelectNesting counts CAST's own bracket).
  ExpectOneLocatedError(project, run, std::string(kModel) + ":2:" + std::to_string(prefix.size() + 256), "SLU-SQL-102");
}

TEST(HostileInputs, TenThousandNestedSubqueriesAreALocatedError) {
  ScratchProject project("shop");
  const std::string prefix = "SELECT CAST(amount AS BIGINT) AS a FROM ";
  project.Write(kModel, std::string(kHeader) + prefix + Repeated("(SELECT * FROM ", 10000) + "__ref(\"clean_events\")" +
                            Repeated(")", 10000) + "\n");
  BoundedRun run = Compile(project, "10,000 nested subqueries");
  ExpectOneLocatedError(project, run, std::string(kModel) + ":2:" + std::to_string(prefix.size() + 1 + 15 * 256),
                        "SLU-SQL-102");
}

TEST(HostileInputs, TenThousandNestedBracketsInTheModelHeaderAreALocatedError) {
  ScratchProject project("shop");
  for (const std::string& open : {std::string("["), std::string("(a ")}) {
    SCOPED_TRACE(open);
    const std::string prefix = "MODEL (kind table, description ";
    const std::string close = open == "[" ? "]" : ")";
    project.Write(kModel, prefix + Repeated(open, 10000) + "\"x\"" + Repeated(close, 10000) +
                              ");\nSELECT CAST(amount AS BIGINT) AS a FROM __ref(\"clean_events\")\n");
    BoundedRun run = Compile(project, "10,000 nested " + open + " in the MODEL header");
    // The header's own `(` is level 1, so the 256th nested bracket is the first one too deep.
    ExpectOneLocatedError(project, run,
                          std::string(kModel) + ":1:" + std::to_string(prefix.size() + 1 + 255 * open.size()),
                          "SLU-HEADER-011");
  }
}

// ---- graphs ----------------------------------------------------------------------------------------------

TEST(HostileInputs, AHundredThousandModelChainCompiles) {
  ScratchProject project("shop");
  WriteChain(project, 100000, false);
  BoundedRun run = Compile(project, "100,000-model dependency chain");
  ExpectSuccess(project, run, "1 pipeline(s), 100000 model(s)");

  // A SQL test of the chain's last model, mocking only the source, would inline all 100,000 models.
  project.Remove("target");
  project.Remove(".sluice");  // the parse cache the successful compile wrote
  project.Write("tests/tip.sql",
                "TEST ();\nWITH __source__events AS (SELECT 1 AS event_id),\n"
                "  __expected__m099999 AS (SELECT 1 AS event_id)\nSELECT 1\n");
  BoundedRun tested = Compile(project, "a SQL test of that chain's last model");
  ExpectOneLocatedError(project, tested, "tests/tip.sql:3:3", "SLU-TEST-021");
  EXPECT_NE(tested.err.find("(the next one is 'm099743')"), std::string::npos) << tested.err;
}

TEST(HostileInputs, ACycleThroughAThousandModelsIsOneLocatedErrorWithTheMiddleElided) {
  ScratchProject project("shop");
  WriteChain(project, 1000, true);
  BoundedRun run = Compile(project, "cycle through 1,000 models");
  ExpectOneLocatedError(project, run, "pipelines/chain/m000001.sql:2:50", "SLU-GRAPH-001");
  EXPECT_NE(run.err.find("dependency cycle: chain.m000000 -> chain.m000001 -> chain.m000002 -> chain.m000003 -> "
                         "chain.m000004 -> … 991 more … -> chain.m000996 -> chain.m000997 -> chain.m000998 -> "
                         "chain.m000999 -> chain.m000000\n"),
            std::string::npos)
      << run.err;
}

// ---- binary garbage --------------------------------------------------------------------------------------

std::string RandomBytes(std::mt19937& random, size_t size) {
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random() & 0xFF);
  return bytes;
}

TEST(HostileInputs, BinaryGarbageInASqlFileIsALocatedError) {
  std::mt19937 random(20261202);
  for (int round = 0; round < 3; ++round) {
    ScratchProject project("shop");
    std::string garbage = RandomBytes(random, 64 << 10);
    garbage[0] = '\0';
    project.Write(kModel, garbage);
    BoundedRun run = Compile(project, "64 KiB of random bytes, round " + std::to_string(round));
    // The file is not text: the error is at its first byte that starts no UTF-8 character.
    const SourceLocation at = LocationAt(kModel, garbage, FindInvalidUtf8(garbage));
    ExpectOneLocatedError(project, run,
                          std::string(kModel) + ":" + std::to_string(at.line) + ":" + std::to_string(at.column),
                          "SLU-MODEL-006");
  }
}

TEST(HostileInputs, BinaryGarbageAfterAValidHeaderIsALocatedError) {
  std::mt19937 random(20261203);
  for (int round = 0; round < 3; ++round) {
    ScratchProject project("shop");
    project.Write(kModel, std::string(kHeader) + "SELECT CAST(amount AS BIGINT) AS a FROM __ref(\"clean_events\") " +
                              RandomBytes(random, 64 << 10));
    BoundedRun run = Compile(project, "random bytes after a valid model, round " + std::to_string(round));
    EXPECT_EQ(run.exit_code, 1) << run.err.substr(0, 4000);
    EXPECT_EQ(Count(run.err, "error["), 1u) << run.err.substr(0, 4000);
    EXPECT_EQ(run.err.rfind(std::string(kModel) + ":", 0), 0u) << run.err.substr(0, 4000);
    EXPECT_LT(run.err.size(), 2000u);
    EXPECT_FALSE(std::filesystem::exists(project.root() / "target"));
  }
}

}  // namespace
}  // namespace sluice::testing
