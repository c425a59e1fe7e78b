// Pre-load gating: every row of the verdict tables of reference §4.2 and §4.3, the sentinel's path rules, scope and
// per-attempt substitution, consume-then-signal on a real file, and the poke timing.
#include "orchestrate/preload_gate.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/diagnostic.hpp"
#include "orchestrate/orchestrate_test_support.hpp"

namespace sluice {
namespace {

using orchestrate::ErrorOf;

using std::chrono::seconds;

PreloadVerdict Decide(bool sentinel, bool poke, bool soft_fail, int exit_code, bool marker, bool deadline = false,
                      bool dry_run = false) {
  return DecidePreload(PreloadGate{sentinel, poke, soft_fail}, PreloadAttempt{dry_run, exit_code, marker, deadline});
}

TEST(PreloadVerdict, WithoutTheSentinel) {
  // One-shot: exit 0 proceeds; a failure reads as "nothing to load" and skips the loads.
  EXPECT_EQ(Decide(false, false, false, 0, false), PreloadVerdict::kProceed);
  EXPECT_EQ(Decide(false, false, false, 1, false), PreloadVerdict::kSkip);
  // Poke mode: a failure pokes again until the deadline, then soft-fails (skip) or fails.
  EXPECT_EQ(Decide(false, true, false, 0, false), PreloadVerdict::kProceed);
  EXPECT_EQ(Decide(false, true, false, 1, false), PreloadVerdict::kPokeAgain);
  EXPECT_EQ(Decide(false, true, true, 1, false, /*deadline=*/true), PreloadVerdict::kSkip);
  EXPECT_EQ(Decide(false, true, false, 1, false, /*deadline=*/true), PreloadVerdict::kFail);
  // A marker means nothing when the sentinel is off.
  EXPECT_EQ(Decide(false, false, false, 0, true), PreloadVerdict::kProceed);
}

TEST(PreloadVerdict, WithTheSentinelEveryRowOfTheTable) {
  // exit != 0: a failure now, in both modes, no further pokes.
  EXPECT_EQ(Decide(true, false, false, 2, false), PreloadVerdict::kFail);
  EXPECT_EQ(Decide(true, true, true, 2, false), PreloadVerdict::kFail);
  // exit 0 with the marker: not ready — skip in one-shot, poke again in poke mode.
  EXPECT_EQ(Decide(true, false, false, 0, true), PreloadVerdict::kSkip);
  EXPECT_EQ(Decide(true, true, false, 0, true), PreloadVerdict::kPokeAgain);
  // exit 0 without the marker: ready.
  EXPECT_EQ(Decide(true, false, false, 0, false), PreloadVerdict::kProceed);
  EXPECT_EQ(Decide(true, true, false, 0, false), PreloadVerdict::kProceed);
  // Dry run: proceed, whatever else.
  EXPECT_EQ(Decide(true, false, false, 0, true, false, /*dry_run=*/true), PreloadVerdict::kProceed);
  EXPECT_EQ(Decide(true, true, false, 3, true, false, /*dry_run=*/true), PreloadVerdict::kProceed);
  // Deadline reached while not ready: soft fail skips, else a failure.
  EXPECT_EQ(Decide(true, true, true, 0, true, /*deadline=*/true), PreloadVerdict::kSkip);
  EXPECT_EQ(Decide(true, true, false, 0, true, /*deadline=*/true), PreloadVerdict::kFail);
  EXPECT_EQ(PreloadVerdictName(PreloadVerdict::kPokeAgain), "poke_again");
}

TEST(SentinelPath, ResolvesPerDomainWithTheScopeToken) {
  EXPECT_EQ(ResolveSentinelPath(std::nullopt, "starbake", ExecutorKind::kShell), std::nullopt);
  EXPECT_EQ(ResolveSentinelPath("  ", "starbake", ExecutorKind::kShell), std::nullopt);
  EXPECT_EQ(ResolveSentinelPath("gs://bucket/sentinels/", "starbake", ExecutorKind::kCloudRun),
            "gs://bucket/sentinels/starbake/__SL_SENTINEL_SCOPE__.notready");
  EXPECT_EQ(ResolveSentinelPath("gs://bucket", "starbake", ExecutorKind::kDataproc),
            "gs://bucket/starbake/__SL_SENTINEL_SCOPE__.notready");
  EXPECT_EQ(ResolveSentinelPath("s3://b/x", "d", ExecutorKind::kFargate), "s3://b/x/d/__SL_SENTINEL_SCOPE__.notready");
  EXPECT_EQ(ResolveSentinelPath("/var/s", "d", ExecutorKind::kShell), "/var/s/d/__SL_SENTINEL_SCOPE__.notready");
  EXPECT_EQ(ResolveSentinelPath("file:///var/s", "d", ExecutorKind::kShell),
            "file:///var/s/d/__SL_SENTINEL_SCOPE__.notready");
}

TEST(SentinelPath, RejectsSchemesAndPathsTheExecutorCannotUse) {
  EXPECT_EQ(ErrorOf([] { ResolveSentinelPath("http://x/y", "d", ExecutorKind::kShell); }).code, "SLU-PRELOAD-001");
  EXPECT_EQ(ErrorOf([] { ResolveSentinelPath("relative/dir", "d", ExecutorKind::kShell); }).code, "SLU-PRELOAD-002");
  EXPECT_EQ(ErrorOf([] { ResolveSentinelPath("file://relative", "d", ExecutorKind::kShell); }).code, "SLU-PRELOAD-002");
  EXPECT_EQ(ErrorOf([] { ResolveSentinelPath("gs://b", "d", ExecutorKind::kShell); }).code, "SLU-PRELOAD-003");
  EXPECT_EQ(ErrorOf([] { ResolveSentinelPath("/var/s", "d", ExecutorKind::kCloudRun); }).code, "SLU-PRELOAD-003");
  EXPECT_EQ(ErrorOf([] { ResolveSentinelPath("s3://b", "d", ExecutorKind::kDataproc); }).code, "SLU-PRELOAD-003");
  EXPECT_EQ(ErrorOf([] { ResolveSentinelPath("gs://b", "d", ExecutorKind::kFargate); }).code, "SLU-PRELOAD-003");
}

TEST(SentinelScope, IsSanitizedAndSubstitutedIntoACopy) {
  EXPECT_EQ(SentinelScope("load starbake", "pre_load/orders", "20261205T1000Z_ab+c:d=e-f.g"),
            "load_starbake__pre_load_orders__20261205T1000Z_ab+c:d=e-f.g");
  const std::vector<std::string> argv = {"preload", "--domain", "starbake", "--notReadySentinel",
                                         "\"gs://b/starbake/__SL_SENTINEL_SCOPE__.notready\""};
  std::vector<std::string> attempt = WithSentinelScope(argv, "job__op__run1");
  EXPECT_EQ(attempt[4], "\"gs://b/starbake/job__op__run1.notready\"");
  EXPECT_EQ(argv[4], "\"gs://b/starbake/__SL_SENTINEL_SCOPE__.notready\"");  // the template is untouched
  EXPECT_EQ(WithSentinelScope(attempt, "other"), attempt);                   // no token left to replace
}

TEST(SentinelMarker, ConsumeThenSignalOnARealFile) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sentinel_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  std::filesystem::path marker = dir / "job__op__run.notready";
  std::ofstream(marker).close();
  EXPECT_TRUE(ConsumeLocalMarker("file://" + marker.string()));
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_FALSE(ConsumeLocalMarker(marker.string()));  // already gone: not an error
  std::filesystem::remove_all(dir);
}

TEST(PokeOffsets, PokeWhileTheNextStillStartsBeforeTheTimeout) {
  EXPECT_EQ(PokeOffsets(seconds(42), seconds(120)), (std::vector<seconds>{seconds(0), seconds(42), seconds(84)}));
  EXPECT_EQ(PokeOffsets(seconds(60), seconds(60)), (std::vector<seconds>{seconds(0)}));
  EXPECT_EQ(PokeOffsets(seconds(10), seconds(30)), (std::vector<seconds>{seconds(0), seconds(10), seconds(20)}));
  EXPECT_EQ(ErrorOf([] { PokeOffsets(seconds(60), seconds(30)); }).code, "SLU-PRELOAD-004");
  EXPECT_EQ(ErrorOf([] { PokeOffsets(seconds(0), seconds(30)); }).code, "SLU-PRELOAD-004");
}

}  // namespace
}  // namespace sluice
