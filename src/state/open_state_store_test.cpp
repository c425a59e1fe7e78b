// Which store OpenStateStore opens: SLUICE_STATE_URL, then the project's [state] url, then SQLite in .sluice/.
#include "state/open_state_store.hpp"

#include <gtest/gtest.h>

#include <map>

#include "state/state_test_support.hpp"
#include "support/postgres_test_server.hpp"

namespace sluice {
namespace {

using Kind = StateLocation::Kind;

EnvironmentLookup Environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

const std::filesystem::path kProject = "/work/project";

// The diagnostic ResolveStateLocation throws for these inputs.
// A ConfiguredStateUrl giving `url`.
ConfiguredStateUrl Configured(std::optional<std::string> url) {
  return [url = std::move(url)] { return url; };
}

Diagnostic Refusal(const std::optional<std::string>& configured, std::map<std::string, std::string> environment) {
  try {
    ResolveStateLocation(kProject, Configured(configured), Environment(std::move(environment)));
  } catch (const Error& error) {
    return error.diagnostics().front();
  }
  ADD_FAILURE() << "expected SLU-STATE-001";
  return {};
}

TEST(StateLocation, WithNothingConfiguredIsSqliteInTheProjectsSluiceFolder) {
  StateLocation location = ResolveStateLocation(kProject, {}, Environment({}));
  EXPECT_EQ(location.kind, Kind::kSqlite);
  EXPECT_EQ(location.sqlite_file, kProject / ".sluice" / "state.db");
  EXPECT_EQ(location.origin, "default");
}

TEST(StateLocation, TheProjectsUrlSelectsPostgresql) {
  for (const std::string url : {"postgresql://u:p@db.internal:5432/sluice", "postgres://db.internal/sluice"}) {
    StateLocation location = ResolveStateLocation(kProject, Configured(url), Environment({}));
    EXPECT_EQ(location.kind, Kind::kPostgres);
    EXPECT_EQ(location.postgres_url, url);
    EXPECT_EQ(location.origin, "[state] url");
  }
}

TEST(StateLocation, TheEnvironmentVariableWinsOverTheProjectsUrl) {
  StateLocation location = ResolveStateLocation(kProject, Configured("postgresql://file-host/db"),
                                                Environment({{"SLUICE_STATE_URL", "postgresql://env-host/db"}}));
  EXPECT_EQ(location.kind, Kind::kPostgres);
  EXPECT_EQ(location.postgres_url, "postgresql://env-host/db");
  EXPECT_EQ(location.origin, "SLUICE_STATE_URL");
  // Set but empty is unset. With the variable set the project's URL is never asked for.
  EXPECT_NO_THROW(ResolveStateLocation(
      kProject, []() -> std::optional<std::string> { throw std::logic_error("read"); },
      Environment({{"SLUICE_STATE_URL", "postgresql://env-host/db"}})));
  location =
      ResolveStateLocation(kProject, Configured("postgresql://file-host/db"), Environment({{"SLUICE_STATE_URL", ""}}));
  EXPECT_EQ(location.postgres_url, "postgresql://file-host/db");
}

TEST(StateLocation, SqliteUrlsNameAFileAbsoluteOrRelativeToTheProject) {
  StateLocation absolute =
      ResolveStateLocation(kProject, {}, Environment({{"SLUICE_STATE_URL", "sqlite:///var/lib/sluice/state.db"}}));
  EXPECT_EQ(absolute.kind, Kind::kSqlite);
  EXPECT_EQ(absolute.sqlite_file, "/var/lib/sluice/state.db");
  StateLocation relative = ResolveStateLocation(kProject, Configured("sqlite://shared/state.db"), Environment({}));
  EXPECT_EQ(relative.sqlite_file, kProject / "shared/state.db");
}

TEST(StateLocation, AnUnsupportedOrMalformedUrlIsState001WithAHintAndNoPassword) {
  Diagnostic mysql = Refusal(std::nullopt, {{"SLUICE_STATE_URL", "mysql://u:hunter2@h/db"}});
  EXPECT_EQ(mysql.code, "SLU-STATE-001");
  EXPECT_NE(mysql.message.find("SLUICE_STATE_URL"), std::string::npos) << mysql.message;
  EXPECT_NE(mysql.message.find("mysql://u:***@h/db"), std::string::npos) << mysql.message;
  EXPECT_NE(mysql.hint.find("postgresql://"), std::string::npos) << mysql.hint;

  Diagnostic not_url = Refusal("db.internal:5432", {});
  EXPECT_EQ(not_url.code, "SLU-STATE-001");
  EXPECT_NE(not_url.message.find("[state] url"), std::string::npos) << not_url.message;

  Diagnostic bad_option = Refusal("postgresql://u:hunter2@h/db?colour=blue", {});
  EXPECT_EQ(bad_option.code, "SLU-STATE-001");
  EXPECT_NE(bad_option.message.find("colour"), std::string::npos) << bad_option.message;
  EXPECT_EQ(bad_option.message.find("hunter2"), std::string::npos) << bad_option.message;

  // Malformed URLs keep their password out of the message too, from the environment and from [state] url.
  for (const std::string& url : {std::string(" postgresql://u:hunter2@host/db"),
                                  std::string("postgres ql://u:hunter2@host/db"), std::string("u:hunter2@host/db"),
                                  std::string("postgresql ://u:hunter2@host:5432/db\t")}) {
    for (const Diagnostic& refusal : {Refusal(std::nullopt, {{"SLUICE_STATE_URL", url}}), Refusal(url, {})}) {
      EXPECT_EQ(refusal.code, "SLU-STATE-001") << url;
      EXPECT_EQ(refusal.message.find("hunter2"), std::string::npos) << refusal.message;
      EXPECT_NE(refusal.message.find("u:***@host"), std::string::npos) << refusal.message;
    }
  }

  EXPECT_EQ(Refusal("sqlite://", {}).code, "SLU-STATE-001");
  EXPECT_EQ(Refusal("", {}).code, "SLU-STATE-001");
}

TEST(OpenStateStore, APostgresqlUrlOpensThePostgresqlStore) {
  testing::PostgresTestServer server = testing::RequirePostgresTestServer();
  const std::string url = testing::PostgresTestUrl(server, testing::CreatePostgresTestDatabase(server, "open"));
  ScratchDirectory project;
  std::unique_ptr<StateStore> store =
      OpenStateStore(ResolveStateLocation(project.path(), Configured(url), Environment({})));
  RunRecord run;
  run.run_id = "r1";
  run.created_at = "2026-03-01T10:00:00.000Z";
  store->CreateRun(run);
  // A second store on the same URL sees it: it is in the database, not in the project folder.
  EXPECT_TRUE(OpenStateStore(ResolveStateLocation(project.path(), Configured(url), Environment({})))->GetRun("r1"));
  EXPECT_FALSE(std::filesystem::exists(project.path() / ".sluice" / "state.db"));
}

}  // namespace
}  // namespace sluice
