// The publisher's streamed artifacts (the manifest): written and fingerprinted like whole files, rendered
// once when unchanged or new, and never published half-consistent; and files a publication keeps as they are
// without their contents. The whole-file paths, crashes and kills are covered end to end in
// tests/e2e/publish_e2e_test.cpp.
#include "compile/artifact_publisher.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/sha256.hpp"
#include "core/diagnostic.hpp"
#include "core/file_system.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const std::string& contents) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
}

class ArtifactPublicationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sluice_publisher_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A stream handing `pieces` on one by one, counting how often it is rendered.
  ArtifactStream Stream(std::vector<std::string> pieces) {
    return [this, pieces](const std::function<void(std::string_view)>& sink) {
      ++renderings_;
      for (const std::string& piece : pieces) sink(piece);
    };
  }

  fs::path dir_;
  int renderings_ = 0;
};

TEST_F(ArtifactPublicationTest, AreWrittenWholeAndRenderedOnceWhenNewOrUnchanged) {
  ArtifactFiles files{{"compiled/a.sql", "SELECT 1\n"}};
  StreamedArtifacts streamed{{"manifest.json", Stream({"{\n", "  \"a\": 1\n", "}\n"})}};
  PublishSummary first = PublishArtifacts(dir_, files, streamed);
  EXPECT_EQ(first.written, 2u);
  EXPECT_EQ(renderings_, 1);  // fingerprinted while written
  EXPECT_EQ(ReadFile(dir_ / "manifest.json"), "{\n  \"a\": 1\n}\n");
  EXPECT_EQ(Materialize(streamed.at("manifest.json")), "{\n  \"a\": 1\n}\n");

  renderings_ = 0;
  PublishSummary again = PublishArtifacts(dir_, files, streamed);
  EXPECT_TRUE(again.incremental);
  EXPECT_EQ(again.written, 0u);
  EXPECT_EQ(again.unchanged, 2u);
  EXPECT_EQ(renderings_, 1);  // fingerprinted only
}

TEST_F(ArtifactPublicationTest, AChangedStreamIsRewrittenAndTheSameBytesWholeOrStreamedAreUnchanged) {
  PublishArtifacts(dir_, {{"manifest.json", "{}\n"}});
  PublishSummary same = PublishArtifacts(dir_, {}, {{"manifest.json", Stream({"{", "}", "\n"})}});
  EXPECT_EQ(same.written, 0u);  // the index entry of the whole file matches the streamed one
  EXPECT_EQ(same.unchanged, 1u);

  renderings_ = 0;
  PublishSummary changed = PublishArtifacts(dir_, {}, {{"manifest.json", Stream({"{\"b\"", ": 2}\n"})}});
  EXPECT_EQ(changed.written, 1u);
  EXPECT_EQ(renderings_, 2);  // fingerprinted, then written
  EXPECT_EQ(ReadFile(dir_ / "manifest.json"), "{\"b\": 2}\n");
}

TEST_F(ArtifactPublicationTest, AStreamThatRendersDifferentBytesTheSecondTimeFailsAndKeepsThePublishedFiles) {
  PublishArtifacts(dir_, {{"compiled/a.sql", "SELECT 1\n"}}, {{"manifest.json", Stream({"old\n"})}});
  int calls = 0;
  ArtifactStream unstable = [&](const std::function<void(std::string_view)>& sink) {
    sink(++calls == 1 ? "new\n" : "other\n");
  };
  try {
    PublishArtifacts(dir_, {{"compiled/a.sql", "SELECT 2\n"}}, {{"manifest.json", unstable}});
    FAIL() << "expected SLU-IO-003";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-IO-003");
    EXPECT_NE(error.diagnostics().front().message.find("changed between two renderings"), std::string::npos);
  }
  EXPECT_EQ(ReadFile(dir_ / "compiled/a.sql"), "SELECT 1\n");  // nothing was committed
  EXPECT_EQ(ReadFile(dir_ / "manifest.json"), "old\n");
  PublishSummary next =
      PublishArtifacts(dir_, {{"compiled/a.sql", "SELECT 2\n"}}, {{"manifest.json", Stream({"new\n"})}});
  EXPECT_EQ(next.written, 2u);
  EXPECT_EQ(ReadFile(dir_ / "manifest.json"), "new\n");
  EXPECT_FALSE(fs::exists(dir_ / ".sluice-publish"));
}

// A full publication (no index: the first, or after the index was lost) writes the streamed files on a thread of
// their own while the whole files are created, a folder's files on one thread. Every file arrives with its bytes,
// whatever the order of folders and subfolders, and the index lists every one of them.
TEST_F(ArtifactPublicationTest, AFullPublicationWritesEveryFolderWithTheStreamBeside) {
  ArtifactFiles files;
  for (int folder = 0; folder < 12; ++folder) {
    for (int file = 0; file < 40; ++file) {
      std::string name = "f" + std::to_string(file) + ".sql";
      files["compiled/p" + std::to_string(folder) + "/" + name] = "SELECT " + std::to_string(folder * 100 + file) + "\n";
    }
  }
  files["compiled/p3/a/deeper.sql"] = "SELECT 'between p3/a... and p3/f...'\n";  // splits p3's files in two runs
  files["compiled/top.sql"] = "SELECT 'top'\n";
  std::vector<std::string> pieces(2000, std::string(1000, 'x'));
  PublishSummary summary = PublishArtifacts(dir_, files, {{"manifest.json", Stream(pieces)}});
  EXPECT_FALSE(summary.incremental);
  EXPECT_EQ(summary.written, files.size() + 1);
  EXPECT_EQ(renderings_, 1);
  for (const auto& [path, contents] : files) EXPECT_EQ(ReadFile(dir_ / path), contents) << path;
  EXPECT_EQ(fs::file_size(dir_ / "manifest.json"), 2000u * 1000u);
  // The index lists them all: the same publication again writes nothing.
  renderings_ = 0;
  PublishSummary again = PublishArtifacts(dir_, files, {{"manifest.json", Stream(pieces)}});
  EXPECT_TRUE(again.incremental);
  EXPECT_EQ(again.unchanged, files.size() + 1);
  EXPECT_EQ(again.written, 0u);
}

// A failure on either side of a full publication (a stream that throws, a file the file system refuses) fails it
// once both sides have stopped: the published files stay as they were and no staging folder is left.
TEST_F(ArtifactPublicationTest, AFullPublicationThatFailsOnEitherSideKeepsThePublishedFiles) {
  PublishArtifacts(dir_, {{"compiled/a.sql", "SELECT 1\n"}}, {{"manifest.json", Stream({"old\n"})}});
  ArtifactStream throwing = [](const std::function<void(std::string_view)>& sink) {
    sink("half a manifest");
    throw std::runtime_error("the renderer failed");
  };
  ArtifactFiles many;
  for (int file = 0; file < 200; ++file) many["compiled/m/f" + std::to_string(file) + ".sql"] = "SELECT 2\n";
  ArtifactFiles refused = many;
  refused["compiled/m/" + std::string(300, 'n') + ".sql"] = "SELECT 3\n";  // longer than a file name may be
  auto full_publication = [&](const ArtifactFiles& files, const ArtifactStream& stream) {
    fs::remove(dir_ / ".sluice-artifacts.index");  // no index: the next publication is a full one
    PublishArtifacts(dir_, files, {{"manifest.json", stream}});
  };
  EXPECT_THROW(full_publication(many, throwing), std::runtime_error);
  try {
    full_publication(refused, Stream(std::vector<std::string>(500, std::string(1000, 'y'))));
    FAIL() << "expected SLU-IO-003";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-IO-003");
  }
  EXPECT_EQ(ReadFile(dir_ / "compiled/a.sql"), "SELECT 1\n");
  EXPECT_EQ(ReadFile(dir_ / "manifest.json"), "old\n");
  EXPECT_FALSE(fs::exists(dir_ / "compiled/m"));
  for (const auto& item : fs::directory_iterator(dir_)) {
    EXPECT_EQ(item.path().filename().string().rfind(".sluice-staging-", 0), std::string::npos) << item.path();
  }
}

TEST_F(ArtifactPublicationTest, APathGivenWholeAndStreamedIsRefused) {
  EXPECT_THROW(PublishArtifacts(dir_, {{"manifest.json", "{}\n"}}, {{"manifest.json", Stream({"{}\n"})}}),
               std::logic_error);
  EXPECT_FALSE(fs::exists(dir_ / "manifest.json"));  // refused before anything is written
}

// An index edited by hand, out of order and naming a file twice, is read in path order with the first entry of
// each path.
TEST_F(ArtifactPublicationTest, AnIndexOutOfOrderOrWithARepeatedPathIsReadInOrderFirstEntryFirst) {
  ArtifactFiles files{{"compiled/a.sql", "SELECT 1\n"}, {"compiled/b.sql", "SELECT 2\n"}};
  PublishArtifacts(dir_, files);
  auto line = [](const std::string& contents, const std::string& path) {
    return Sha256Hex(contents) + " " + std::to_string(contents.size()) + " " + path + "\n";
  };
  WriteFile(dir_ / ".sluice-artifacts.index", "sluice-artifacts 2\n" + line("SELECT 2\n", "compiled/b.sql") +
                                                        line("SELECT 1\n", "compiled/a.sql") +
                                                        line("SELECT 9\n", "compiled/a.sql"));
  {
    ArtifactPublication publication(dir_);
    ASSERT_EQ(publication.published_count(), 2u);
    EXPECT_EQ(publication.published_path(0), "compiled/a.sql");
    EXPECT_EQ(publication.PublishedPosition("compiled/a.sql", FingerprintOf("SELECT 1\n")), 0u);
    EXPECT_EQ(publication.PublishedPosition("compiled/b.sql", FingerprintOf("SELECT 2\n")), 1u);
    PublishSummary summary = publication.Publish({}, {}, {1, 1});
    EXPECT_EQ(summary.unchanged, 2u);
    EXPECT_EQ(summary.written, 0u);
  }
  EXPECT_EQ(PublishArtifacts(dir_, files).unchanged, 2u);
}

TEST_F(ArtifactPublicationTest, APublicationKeepsFilesPassedAsUnchangedWithoutTheirContents) {
  ArtifactFiles files{{"compiled/a.sql", "SELECT 1\n"}, {"compiled/b.sql", "SELECT 2\n"}};
  const ArtifactFingerprint a = FingerprintOf("SELECT 1\n");
  {
    ArtifactPublication first(dir_);
    EXPECT_FALSE(first.incremental());
    EXPECT_FALSE(first.IsPublished("compiled/a.sql", a));  // nothing published yet: a full publication
    first.Publish(files);
    EXPECT_THROW(first.Publish(files), std::logic_error);  // once
  }
  {
    ArtifactPublication second(dir_);
    EXPECT_TRUE(second.incremental());
    EXPECT_TRUE(second.IsPublished("compiled/a.sql", a));
    EXPECT_FALSE(second.IsPublished("compiled/a.sql", ArtifactFingerprint{a.sha256, 10}));
    EXPECT_FALSE(second.IsPublished("compiled/c.sql", a));
    // Published files are numbered in path order: a.sql is 0, b.sql 1.
    ASSERT_EQ(second.published_count(), 2u);
    EXPECT_EQ(second.PublishedPosition("compiled/a.sql", a), 0u);
    EXPECT_EQ(second.published_path(1), "compiled/b.sql");
    PublishSummary summary = second.Publish({{"compiled/b.sql", "SELECT 3\n"}}, {}, {1, 0});
    EXPECT_EQ(summary.written, 1u);
    EXPECT_EQ(summary.unchanged, 1u);
    EXPECT_EQ(summary.removed, 0u);
  }
  EXPECT_EQ(ReadFile(dir_ / "compiled/a.sql"), "SELECT 1\n");  // kept, and still in the index:
  EXPECT_EQ(ReadFile(dir_ / "compiled/b.sql"), "SELECT 3\n");
  PublishSummary again = PublishArtifacts(dir_, {{"compiled/a.sql", "SELECT 1\n"}, {"compiled/b.sql", "SELECT 3\n"}});
  EXPECT_EQ(again.written, 0u);
  EXPECT_EQ(again.unchanged, 2u);

  fs::remove(dir_ / "compiled/a.sql");  // deleted by hand: no longer published
  {
    ArtifactPublication third(dir_);
    EXPECT_FALSE(third.IsPublished("compiled/a.sql", a));
    ASSERT_EQ(third.published_count(), 1u);
    EXPECT_THROW(third.Publish({}, {}, {1, 1}), std::logic_error);  // marks for two files: one is published
  }
  {
    ArtifactPublication fourth(dir_);
    // b.sql kept and given whole: refused.
    EXPECT_THROW(fourth.Publish({{"compiled/b.sql", "SELECT 4\n"}}, {}, {1}), std::logic_error);
  }
  EXPECT_EQ(ReadFile(dir_ / "compiled/b.sql"), "SELECT 3\n");  // refused before anything changed
  EXPECT_FALSE(fs::exists(dir_ / "compiled/a.sql"));
  // A file nobody listed is found on disk and replaced or removed by the next publication; a listed file
  // deleted by hand is written again.
  WriteFile(dir_ / "compiled/stray.sql", "x");
  PublishSummary repaired =
      PublishArtifacts(dir_, {{"compiled/a.sql", "SELECT 1\n"}, {"compiled/b.sql", "SELECT 3\n"}});
  EXPECT_EQ(repaired.written, 1u);  // a.sql
  EXPECT_EQ(repaired.removed, 1u);  // stray.sql
  EXPECT_EQ(repaired.unchanged, 1u);
  EXPECT_FALSE(fs::exists(dir_ / "compiled/stray.sql"));
  EXPECT_EQ(ReadFile(dir_ / "compiled/a.sql"), "SELECT 1\n");
}

}  // namespace
}  // namespace sluice
