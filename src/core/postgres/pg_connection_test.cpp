#include "core/postgres/pg_connection.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "support/postgres_test_server.hpp"

namespace sluice::pg {
namespace {

using testing::CreatePostgresTestDatabase;
using testing::PostgresTestConnection;
using testing::PostgresTestUrl;
using testing::RequirePostgresTestServer;

TEST(PgConnection, RunsStatementsWithTextParametersAndNulls) {
  auto server = RequirePostgresTestServer();
  auto connection = Connection::Open(PostgresTestUrl(server, CreatePostgresTestDatabase(server, "client")));
  connection->Exec("CREATE TABLE t (k text PRIMARY KEY, v bigint)");
  Result inserted = connection->Exec("INSERT INTO t VALUES ($1, $2), ($3, $4)", {"a", "1", "it's", std::nullopt});
  EXPECT_EQ(inserted.affected, 2);
  Result rows = connection->Exec("SELECT k, v FROM t ORDER BY k");
  ASSERT_EQ(rows.columns, (std::vector<std::string>{"k", "v"}));
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(rows.rows[0][0], "a");
  EXPECT_EQ(rows.rows[0][1], "1");
  EXPECT_EQ(rows.rows[1][0], "it's");
  EXPECT_EQ(rows.rows[1][1], std::nullopt);
  EXPECT_EQ(connection->Exec("SELECT " + QuoteLiteral("it's") + " AS " + QuoteIdentifier("we\"ird")).Scalar(), "it's");
}

TEST(PgConnection, ReportsSqlstatePositionAndKeepsTheConnectionUsable) {
  auto server = RequirePostgresTestServer();
  auto connection = Connection::Open(
      ConnectionStringFromKeys(PostgresTestConnection(server, CreatePostgresTestDatabase(server, "errors"))));
  try {
    connection->Exec("SELECT missing_column FROM pg_class");
    FAIL() << "expected an error";
  } catch (const PgError& error) {
    EXPECT_EQ(error.sqlstate(), "42703");
    EXPECT_EQ(error.position(), 8);
    EXPECT_FALSE(error.connection_lost());
  }
  EXPECT_EQ(connection->Exec("SELECT 1").Scalar(), "1");
}

TEST(PgConnection, AWrongPasswordFailsWithoutPrintingIt) {
  auto server = RequirePostgresTestServer();
  server.password = "not-the-secret-x";
  try {
    Connection::Open(PostgresTestUrl(server, "postgres"));
    FAIL() << "expected an error";
  } catch (const PgError& error) {
    EXPECT_TRUE(error.connection_lost());
    EXPECT_EQ(std::string(error.what()).find("not-the-secret-x"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("***"), std::string::npos) << error.what();
  }
}

TEST(PgConnection, CancelStopsARunningStatement) {
  auto server = RequirePostgresTestServer();
  auto connection = Connection::Open(PostgresTestUrl(server, "postgres"));
  std::thread canceler([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    connection->Cancel();
  });
  try {
    connection->Exec("SELECT pg_sleep(30)");
    ADD_FAILURE() << "expected the statement to be canceled";
  } catch (const PgError& error) {
    EXPECT_EQ(error.sqlstate(), kQueryCanceled);
  }
  canceler.join();
}

TEST(PgConnectionString, RedactsPasswordsInEveryForm) {
  EXPECT_EQ(RedactConnectionString("postgresql://u:secret@h:5432/db"), "postgresql://u:***@h:5432/db");
  EXPECT_EQ(RedactConnectionString("postgres://h/db?user=u&password=secret&sslmode=disable"),
            "postgres://h/db?user=u&password=***&sslmode=disable");
  EXPECT_EQ(RedactConnectionString("host=h password='se cret' dbname=d"), "host=h password=*** dbname=d");
  EXPECT_EQ(ConnectionStringFromKeys({{"host", "h"}, {"username", "u"}, {"password", "a b"}, {"dbname", "d"}}),
            "connect_timeout=10 dbname=d host=h password='a b' user=u");
}

TEST(PgConnectionString, ParseErrorsAreFoundWithoutConnectingAndNeverShowThePassword) {
  EXPECT_EQ(ConnectionStringError("postgresql://u:secret@h:5432/db?sslmode=disable"), std::nullopt);
  EXPECT_EQ(ConnectionStringError("host=h dbname=d"), std::nullopt);
  std::optional<std::string> bad_option = ConnectionStringError("postgresql://u:secret@h/db?colour=blue");
  ASSERT_TRUE(bad_option);
  EXPECT_NE(bad_option->find("colour"), std::string::npos) << *bad_option;
  std::optional<std::string> bad_escape = ConnectionStringError("postgresql://u:se%zzcret@h/db");
  ASSERT_TRUE(bad_escape);
  EXPECT_EQ(bad_escape->find("se%zzcret"), std::string::npos) << *bad_escape;
  EXPECT_TRUE(ConnectionStringError("host=h dbname"));
}

}  // namespace
}  // namespace sluice::pg
