// The BigQuery client and Application Default Credentials at the HTTP level, against the local double: what is sent
// (bodies, headers, parameters) and how each scripted answer is handled. No BigQuery is reachable from here.
#include "warehouse/bigquery/bigquery_client.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/diagnostic.hpp"
#include "support/bigquery_double.hpp"
#include "warehouse/bigquery/google_credentials.hpp"

namespace sluice {
namespace {

using test::BigQueryDouble;
using test::ErrorBody;
using test::JobBody;
using test::RecordedRequest;
using test::ResultsBody;
using namespace std::chrono_literals;

constexpr const char* kMetadataPath = "/computeMetadata/v1/instance/service-accounts/default/token";

EnvironmentLookup Environment(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

std::string TokenBody(const std::string& token, int expires_in = 3600) {
  return nlohmann::json{{"access_token", token}, {"expires_in", expires_in}, {"token_type", "Bearer"}}.dump();
}

struct KeyPair {
  std::string private_pem;
  std::string public_pem;
};

KeyPair NewRsaKey() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_RSA_gen(2048), &EVP_PKEY_free);
  auto pem = [](auto write) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    write(bio.get());
    char* data = nullptr;
    long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(size));
  };
  KeyPair pair;
  pair.private_pem =
      pem([&](BIO* bio) { PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  pair.public_pem = pem([&](BIO* bio) { PEM_write_bio_PUBKEY(bio, key.get()); });
  return pair;
}

// A clock the test moves.
class SteppedClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override { return now_.load(); }
  void Advance(std::chrono::seconds by) { now_ = now_.load() + by; }

 private:
  std::atomic<std::chrono::system_clock::time_point> now_{std::chrono::system_clock::time_point(1'800'000'000s)};
};

class BigQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_bq_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteFile(const std::string& name, const std::string& text) {
    std::filesystem::path path = dir_ / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }
  std::string ServiceAccountFile(const std::string& name, const KeyPair& key, const std::string& email) {
    return WriteFile(name, nlohmann::json{{"type", "service_account"},
                                          {"project_id", "proj"},
                                          {"private_key_id", "k1"},
                                          {"private_key", key.private_pem},
                                          {"client_email", email},
                                          {"token_uri", double_.url() + "/token"}}
                               .dump());
  }
  std::string AuthorizedUserFile(const std::string& name) {
    return WriteFile(name, nlohmann::json{{"type", "authorized_user"},
                                          {"client_id", "cid.apps.googleusercontent.com"},
                                          {"client_secret", "very-secret-client"},
                                          {"refresh_token", "1//refresh-secret"}}
                               .dump());
  }

  // A client whose token comes from the double's metadata endpoint.
  std::unique_ptr<BigQueryClient> Client(int cap = 2, int attempts = 4) {
    double_.Respond("GET", kMetadataPath, 200, TokenBody("tok-1"), -1);
    auto transport = std::make_unique<HttpTransport>(2s, 20s);
    CredentialSearch search;
    search.environment = Environment({{"GCE_METADATA_HOST", double_.host()}});
    auto credentials = GoogleCredentials::Find(search, *transport);
    RetryPolicy retry{attempts, 1ms, 4ms, 7};
    return std::make_unique<BigQueryClient>(BigQueryEndpoint{"proj", "EU", double_.url()}, std::move(transport),
                                            std::move(credentials), retry, cap);
  }
  static nlohmann::json Json(const RecordedRequest& request) { return nlohmann::json::parse(request.body); }
  static std::string JobId(const RecordedRequest& insert) { return Json(insert)["jobReference"]["jobId"]; }

  BigQueryDouble double_;
  std::filesystem::path dir_;
  HttpTransport transport_{2s, 20s};
};

// --- the client -------------------------------------------------------------------------------------------------

TEST_F(BigQueryTest, AJobIsInsertedUnderOurIdWithItsLocationAndPolledUntilComplete) {
  auto client = Client();
  double_.Respond("POST", "/bigquery/v2/projects/proj/jobs", 200, JobBody("x"));
  double_.Respond("GET", "/bigquery/v2/projects/proj/queries/", 200, ResultsBody("x", false));
  double_.Respond("GET", "/bigquery/v2/projects/proj/queries/", 200,
                  ResultsBody("x", true, {"a", "b"}, {{"1", std::nullopt}, {"2", "two"}}));

  BigQueryResult result = client->RunJob({"SELECT 1 AS a, NULL AS b"}, JobOptions{"sales.daily", "run-42", false, ""});

  std::vector<RecordedRequest> inserts = double_.Requests("POST", "/jobs");
  ASSERT_EQ(inserts.size(), 1u);
  nlohmann::json body = Json(inserts[0]);
  std::string job_id = body["jobReference"]["jobId"];
  EXPECT_EQ(job_id.rfind("sluice_run-42_", 0), 0u) << job_id;
  EXPECT_EQ(body["jobReference"]["projectId"], "proj");
  EXPECT_EQ(body["jobReference"]["location"], "EU");
  EXPECT_EQ(body["configuration"]["query"]["query"], "SELECT 1 AS a, NULL AS b");
  EXPECT_EQ(body["configuration"]["query"]["useLegacySql"], false);
  EXPECT_FALSE(body["configuration"]["query"].contains("destinationTable"));
  EXPECT_FALSE(body["configuration"].contains("dryRun"));
  EXPECT_EQ(inserts[0].Header("authorization"), "Bearer tok-1");
  EXPECT_EQ(inserts[0].Header("content-type"), "application/json; charset=utf-8");

  std::vector<RecordedRequest> polls = double_.Requests("GET", "/queries/");
  ASSERT_EQ(polls.size(), 2u);  // jobComplete false, then true
  for (const RecordedRequest& poll : polls) {
    EXPECT_EQ(poll.path, "/bigquery/v2/projects/proj/queries/" + job_id);
    EXPECT_EQ(poll.Param("location"), "EU");
    EXPECT_EQ(poll.Param("timeoutMs"), "10000");
    EXPECT_EQ(poll.Header("authorization"), "Bearer tok-1");
  }
  EXPECT_EQ(result.job_id, job_id);
  EXPECT_EQ(result.rows.columns, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(result.rows.rows.size(), 2u);
  EXPECT_EQ(result.rows.rows[0][0], "1");
  EXPECT_EQ(result.rows.rows[0][1], std::nullopt);
  EXPECT_EQ(result.rows.rows[1][1], "two");
}

TEST_F(BigQueryTest, PagesAreReadByPageToken) {
  auto client = Client();
  double_.Respond("POST", "/jobs", 200, JobBody("x"));
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", true, {"n"}, {{"1"}, {"2"}}, "page-2"));
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", true, {"n"}, {{"3"}}));

  BigQueryResult result = client->RunJob({"SELECT n FROM t"}, JobOptions{});

  std::vector<RecordedRequest> polls = double_.Requests("GET", "/queries/");
  ASSERT_EQ(polls.size(), 2u);
  EXPECT_EQ(polls[0].Param("pageToken"), "");
  EXPECT_EQ(polls[1].Param("pageToken"), "page-2");
  EXPECT_EQ(polls[1].Param("location"), "EU");
  ASSERT_EQ(result.rows.rows.size(), 3u);
  EXPECT_EQ(result.rows.rows[2][0], "3");
}

TEST_F(BigQueryTest, AQueryIsOneJobsQueryCallFollowedByItsJobWhenNotCompleteInTime) {
  auto client = Client();
  double_.Respond("POST", "/bigquery/v2/projects/proj/queries", 200, ResultsBody("job_q", false));
  double_.Respond("GET", "/bigquery/v2/projects/proj/queries/job_q", 200, ResultsBody("job_q", true, {"x"}, {{"7"}}));

  BigQueryResult result = client->Query({"SELECT 7 AS x"}, "");

  std::vector<RecordedRequest> queries = double_.Requests("POST", "/queries");
  ASSERT_EQ(queries.size(), 1u);
  nlohmann::json body = Json(queries[0]);
  EXPECT_EQ(body["query"], "SELECT 7 AS x");
  EXPECT_EQ(body["useLegacySql"], false);
  EXPECT_EQ(body["location"], "EU");
  EXPECT_EQ(body["requestId"].get<std::string>().size(), 36u);  // a UUID: a retried call is not run twice
  EXPECT_TRUE(body.contains("timeoutMs"));
  EXPECT_EQ(double_.Requests("GET", "/queries/job_q").size(), 1u);
  EXPECT_EQ(result.rows.rows.at(0).at(0), "7");
}

TEST_F(BigQueryTest, ARateLimitedInsertIsSentAgainWithTheSameJobId) {
  auto client = Client();
  double_.Respond("POST", "/jobs", 403, ErrorBody(403, "rateLimitExceeded", "Exceeded rate limits: too many jobs"));
  double_.Respond("POST", "/jobs", 200, JobBody("x"));
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", true));

  client->RunJob({"SELECT 1"}, JobOptions{});

  std::vector<RecordedRequest> inserts = double_.Requests("POST", "/jobs");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(JobId(inserts[0]), JobId(inserts[1]));
}

TEST_F(BigQueryTest, ADuplicateAnswerToAResentInsertMeansOurJobExistsAndItIsPolled) {
  auto client = Client();
  double_.Respond("POST", "/jobs", 503, ErrorBody(503, "backendError", "Service unavailable"));
  double_.Respond("POST", "/jobs", 409, ErrorBody(409, "duplicate", "Already Exists: Job proj:EU.sluice_q_1"));
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", true, {"n"}, {{"1"}}));

  BigQueryResult result = client->RunJob({"INSERT INTO t VALUES (1)"}, JobOptions{});

  std::vector<RecordedRequest> inserts = double_.Requests("POST", "/jobs");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(JobId(inserts[0]), JobId(inserts[1]));
  std::vector<RecordedRequest> polls = double_.Requests("GET", "/queries/");
  ASSERT_EQ(polls.size(), 1u);
  EXPECT_EQ(polls[0].path, "/bigquery/v2/projects/proj/queries/" + JobId(inserts[0]));
  EXPECT_EQ(result.job_id, JobId(inserts[0]));
}

TEST_F(BigQueryTest, AJobAbortedByAConcurrentUpdateRunsAgainUnderANewId) {
  auto client = Client();
  double_.Respond("POST", "/jobs", 200, JobBody("x"), 2);
  double_.Respond(
      "GET", "/queries/", 400,
      ErrorBody(400, "invalidQuery", "Could not serialize access to table proj:sales.daily due to concurrent update"));
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", true));

  client->RunJob({"MERGE …"}, JobOptions{"sales.daily", "r1", false, "sales.daily"});

  std::vector<RecordedRequest> inserts = double_.Requests("POST", "/jobs");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(JobId(inserts[1]), JobId(inserts[0]) + "_r2");
  EXPECT_EQ(Json(inserts[1])["configuration"]["query"]["query"], "MERGE …");
}

TEST_F(BigQueryTest, AJobFailingForAnotherReasonIsNotRunAgainAndNamesJobReasonAndMessage) {
  auto client = Client();
  double_.Respond("POST", "/jobs", 200, JobBody("x"), -1);
  double_.Respond("GET", "/queries/", 400, ErrorBody(400, "invalidQuery", "Unrecognized name: revenue"), -1);

  try {
    client->RunJob({"SELECT revenue FROM t"}, JobOptions{"sales.daily", "", false, ""});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-WAREHOUSE-024");
    std::string job_id = JobId(double_.Requests("POST", "/jobs").at(0));
    EXPECT_NE(diagnostic.message.find(job_id), std::string::npos) << diagnostic.message;
    EXPECT_NE(diagnostic.message.find("Unrecognized name: revenue"), std::string::npos) << diagnostic.message;
    EXPECT_NE(diagnostic.message.find("reason invalidQuery"), std::string::npos) << diagnostic.message;
    EXPECT_NE(diagnostic.message.find("sales.daily"), std::string::npos) << diagnostic.message;
  }
  EXPECT_EQ(double_.Requests("POST", "/jobs").size(), 1u);
  EXPECT_EQ(double_.Requests("GET", "/queries/").size(), 1u);
}

TEST_F(BigQueryTest, AnErrorBigQueryPlacesInTheEmbeddedSelectIsASqlErrorAtItsOffset) {
  auto client = Client();
  double_.Respond("POST", "/jobs", 200,
                  JobBody("x", "invalidQuery", "Syntax error: Unexpected identifier \"FORM\" at [4:10]"));
  const std::string select = "SELECT a,\n       b FORM t";
  BigQueryStatement statement{"CREATE TABLE x AS\nSELECT * FROM (\n" + select + "\n)"};
  statement.select_begin = statement.sql.find(select);
  statement.select_size = select.size();
  try {
    client->RunJob(statement, JobOptions{});
    FAIL() << "expected a SqlError";
  } catch (const SqlError& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-022");
    EXPECT_EQ(error.offset(), select.find("b FORM") + 2);  // line 2 of the SELECT, column 10
  }
  EXPECT_EQ(double_.Requests("POST", "/jobs").size(), 1u);
}

TEST_F(BigQueryTest, ErrorOffsetsCountColumnsInCharacters) {
  EXPECT_EQ(ErrorOffset("at [1:1]", "SELECT"), 0u);
  EXPECT_EQ(ErrorOffset("x [2:3] y", "ab\ncdef"), 5u);
  EXPECT_EQ(ErrorOffset("at [1:3]", "\xC3\xA9\xC3\xA9x"), 4u);  // two two-byte characters before it
  EXPECT_EQ(ErrorOffset("no place", "SELECT"), std::nullopt);
}

TEST_F(BigQueryTest, RateLimitsThatOutlastTheRetriesAreReportedAsQuota) {
  auto client = Client(2, 3);
  double_.Respond("POST", "/jobs", 403, ErrorBody(403, "rateLimitExceeded", "Exceeded rate limits"), -1);
  try {
    client->RunJob({"SELECT 1"}, JobOptions{});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-054");
  }
  EXPECT_EQ(double_.Requests("POST", "/jobs").size(), 3u);
}

TEST_F(BigQueryTest, AnAnswerThatIsNotBigQuerysJsonIsReportedWithItsBeginning) {
  auto client = Client(2, 2);
  double_.Respond("POST", "/jobs", 502, "<html><title>502 Bad Gateway</title></html>", -1);
  double_.Respond("POST", "/queries", 200, "not json");
  try {
    client->RunJob({"SELECT 1"}, JobOptions{});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-020");
    EXPECT_NE(error.diagnostics().front().message.find("502 Bad Gateway"), std::string::npos)
        << error.diagnostics().front().message;
  }
  EXPECT_EQ(double_.Requests("POST", "/jobs").size(), 2u);  // a 502 is retried, within the attempts
  try {
    client->Query({"SELECT 1"}, "");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(error.diagnostics().front().message.find("not a JSON object"), std::string::npos)
        << error.diagnostics().front().message;
  }
}

TEST_F(BigQueryTest, AResourceIsReadWithGetAndAbsentOn404AndAccessDeniedNamesTheRolesNeeded) {
  auto client = Client();
  double_.Respond("GET", "/datasets/sales$", 200, R"({"location": "EU"})");
  double_.Respond("GET", "/datasets/gone$", 404, ErrorBody(404, "notFound", "Not found: Dataset proj:gone"));
  double_.Respond("GET", "/datasets/secret$", 403,
                  ErrorBody(403, "accessDenied",
                            "Access Denied: Dataset proj:secret: Permission bigquery.datasets.get "
                            "denied"));

  EXPECT_EQ(client->Get("datasets/sales", "dataset sales")->value("location", ""), "EU");
  EXPECT_EQ(client->Get("datasets/gone", "dataset gone"), std::nullopt);
  try {
    client->Get("datasets/secret", "dataset secret");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-053");
    EXPECT_NE(error.diagnostics().front().message.find("Permission bigquery.datasets.get denied"), std::string::npos);
    EXPECT_NE(error.diagnostics().front().hint.find("BigQuery Job User on project proj"), std::string::npos);
  }
  EXPECT_EQ(double_.Requests("GET", "/datasets/secret$").size(), 1u);  // not retried
  EXPECT_EQ(double_.Requests("GET", "/datasets/sales$").at(0).path, "/bigquery/v2/projects/proj/datasets/sales");
}

TEST_F(BigQueryTest, AServerErrorWhilePollingIsRetriedAndAnExpiredTokenFetchedAgain) {
  auto client = Client();
  double_.Respond("POST", "/jobs", 401, ErrorBody(401, "authError", "Request had invalid authentication credentials"));
  double_.Respond("POST", "/jobs", 200, JobBody("x"));
  double_.Respond("GET", "/queries/", 500, ErrorBody(500, "backendError", "Backend error"));
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", true));

  client->RunJob({"SELECT 1"}, JobOptions{});

  EXPECT_EQ(double_.Requests("GET", kMetadataPath).size(), 2u);  // the 401 dropped the cached token
  EXPECT_EQ(double_.Requests("POST", "/jobs").size(), 2u);
  EXPECT_EQ(double_.Requests("GET", "/queries/").size(), 2u);
}

TEST_F(BigQueryTest, NoMoreThanTheCapOfJobsOfOneTableAreInFlightAtOnce) {
  auto client = Client(/*cap=*/2);
  double_.Respond("POST", "/jobs", 200, JobBody("x"), -1, 20ms);
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", true), -1, 60ms);

  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] { client->RunJob({"MERGE t"}, JobOptions{"d.t", "", false, "d.t"}); });
  }
  for (std::thread& thread : threads) thread.join();

  // A job is in flight from its insert arriving to its results being answered.
  std::map<std::string, std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point>> spans;
  for (const RecordedRequest& insert : double_.Requests("POST", "/jobs")) spans[JobId(insert)].first = insert.received;
  for (const RecordedRequest& poll : double_.Requests("GET", "/queries/")) {
    spans[poll.path.substr(poll.path.rfind('/') + 1)].second = poll.answered;
  }
  ASSERT_EQ(spans.size(), 6u);
  size_t most = 0;
  for (const auto& [id, span] : spans) {
    size_t overlapping = 0;
    for (const auto& [other, other_span] : spans) {
      if (other_span.first <= span.first && span.first < other_span.second) ++overlapping;
    }
    most = std::max(most, overlapping);
  }
  EXPECT_EQ(most, 2u);
}

TEST_F(BigQueryTest, InterruptCancelsTheJobsInFlightAndFailsLaterCalls) {
  auto client = Client();
  double_.Respond("POST", "/cancel", 200, R"({"kind": "bigquery#jobCancelResponse"})", -1);
  double_.Respond("POST", "/jobs", 200, JobBody("x"));
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", false), -1, 10ms);

  std::optional<std::string> code;
  std::thread runner([&] {
    try {
      client->RunJob({"SELECT slow()"}, JobOptions{});
    } catch (const Error& error) {
      code = error.diagnostics().front().code;
    }
  });
  while (double_.Requests("GET", "/queries/").empty()) std::this_thread::sleep_for(5ms);
  client->Interrupt();
  runner.join();

  EXPECT_EQ(code, "SLU-WAREHOUSE-008");
  std::string job_id = JobId(double_.Requests("POST", "/jobs").at(0));
  // Interrupt cancels it, and so does the interrupted call once its insert is answered (Interrupt's cancel could
  // have overtaken the insert).
  std::vector<RecordedRequest> cancels = double_.Requests("POST", "/cancel");
  ASSERT_EQ(cancels.size(), 2u);
  for (const RecordedRequest& cancel : cancels) {
    EXPECT_EQ(cancel.path, "/bigquery/v2/projects/proj/jobs/" + job_id + "/cancel");
    EXPECT_EQ(cancel.Param("location"), "EU");
  }
  size_t sent = double_.Requests().size();
  try {
    client->RunJob({"SELECT 1"}, JobOptions{});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-008");
  }
  EXPECT_EQ(double_.Requests().size(), sent);
}

// --- Application Default Credentials ----------------------------------------------------------------------------

TEST_F(BigQueryTest, AServiceAccountSignsAnRs256JwtAndExchangesItAtItsTokenUri) {
  KeyPair key = NewRsaKey();
  double_.VerifyJwtWith(key.public_pem);
  double_.Respond("POST", "/token", 200, TokenBody("sa-token"));
  std::string file = ServiceAccountFile("sa.json", key, "loader@proj.iam.gserviceaccount.com");
  SteppedClock clock;
  CredentialSearch search{Environment({{"GOOGLE_APPLICATION_CREDENTIALS", file}}), std::nullopt, std::nullopt, &clock};
  auto credentials = GoogleCredentials::Find(search, transport_);

  EXPECT_EQ(credentials->AccessToken(), "sa-token");

  std::vector<RecordedRequest> exchanges = double_.Requests("POST", "/token");
  ASSERT_EQ(exchanges.size(), 1u);
  const RecordedRequest& exchange = exchanges[0];
  EXPECT_EQ(exchange.Header("content-type"), "application/x-www-form-urlencoded");
  EXPECT_NE(exchange.body.find("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"), std::string::npos)
      << exchange.body;
  EXPECT_TRUE(exchange.jwt_signature_valid);
  ASSERT_TRUE(exchange.jwt_claims.has_value());
  nlohmann::json claims = nlohmann::json::parse(*exchange.jwt_claims);
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(clock.Now().time_since_epoch()).count();
  EXPECT_EQ(claims["iss"], "loader@proj.iam.gserviceaccount.com");
  EXPECT_EQ(claims["scope"], "https://www.googleapis.com/auth/bigquery");
  EXPECT_EQ(claims["aud"], double_.url() + "/token");
  EXPECT_EQ(claims["iat"], now);
  EXPECT_EQ(claims["exp"], now + 3600);
  EXPECT_NE(credentials->description().find("loader@proj.iam.gserviceaccount.com"), std::string::npos);
  EXPECT_NE(credentials->description().find("GOOGLE_APPLICATION_CREDENTIALS"), std::string::npos);
}

TEST_F(BigQueryTest, AJwtSignedWithAnotherKeyIsRefusedWithoutShowingAnySecret) {
  KeyPair key = NewRsaKey();
  double_.VerifyJwtWith(NewRsaKey().public_pem);
  double_.Respond("POST", "/token", 200, TokenBody("never"));
  std::string file = ServiceAccountFile("sa.json", key, "loader@proj.iam.gserviceaccount.com");
  auto credentials = GoogleCredentials::Find({Environment({{"GOOGLE_APPLICATION_CREDENTIALS", file}})}, transport_);
  try {
    credentials->AccessToken();
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-WAREHOUSE-051");
    EXPECT_NE(diagnostic.message.find("invalid_grant"), std::string::npos) << diagnostic.message;
    EXPECT_EQ(diagnostic.message.find("PRIVATE KEY"), std::string::npos);
    EXPECT_EQ(diagnostic.message.find("eyJ"), std::string::npos);  // no JWT
  }
}

TEST_F(BigQueryTest, AnAuthorizedUserFileUsesTheRefreshTokenGrantAndKeepsItsSecrets) {
  std::string config = (dir_ / "gcloud").string();
  AuthorizedUserFile("gcloud/application_default_credentials.json");
  double_.Respond("POST", "/token", 200, TokenBody("user-token"));
  double_.Respond("POST", "/token", 400,
                  R"({"error": "invalid_grant", "error_description": "Token has been expired"})");
  CredentialSearch search{Environment({{"CLOUDSDK_CONFIG", config}}), std::nullopt, double_.url() + "/token", nullptr};
  auto credentials = GoogleCredentials::Find(search, transport_);

  EXPECT_EQ(credentials->AccessToken(), "user-token");
  const RecordedRequest exchange = double_.Requests("POST", "/token").at(0);
  EXPECT_NE(exchange.body.find("grant_type=refresh_token"), std::string::npos) << exchange.body;
  EXPECT_NE(exchange.body.find("client_id=cid.apps.googleusercontent.com"), std::string::npos);
  EXPECT_NE(exchange.body.find("client_secret=very-secret-client"), std::string::npos);
  EXPECT_NE(exchange.body.find("refresh_token=1%2F%2Frefresh-secret"), std::string::npos);

  credentials->Invalidate();
  try {
    credentials->AccessToken();
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-WAREHOUSE-051");
    EXPECT_NE(diagnostic.message.find("Token has been expired"), std::string::npos);
    for (const char* secret : {"refresh-secret", "very-secret-client", "user-token"}) {
      EXPECT_EQ(diagnostic.message.find(secret), std::string::npos) << secret;
      EXPECT_EQ(diagnostic.hint.find(secret), std::string::npos) << secret;
    }
  }
}

TEST_F(BigQueryTest, ApplicationDefaultCredentialsAreSearchedInOrder) {
  KeyPair key = NewRsaKey();
  std::string env_file = ServiceAccountFile("env/sa.json", key, "env@proj.iam.gserviceaccount.com");
  AuthorizedUserFile("home/.config/gcloud/application_default_credentials.json");
  std::string home = (dir_ / "home").string();
  double_.Respond("POST", "/token", 200, TokenBody("sa-token"));
  double_.Respond("POST", "/token", 200, TokenBody("user-token"));
  double_.Respond("GET", kMetadataPath, 200, TokenBody("metadata-token"));
  std::map<std::string, std::string> env = {
      {"GOOGLE_APPLICATION_CREDENTIALS", env_file}, {"HOME", home}, {"GCE_METADATA_HOST", double_.host()}};
  CredentialSearch search{Environment(env), std::nullopt, double_.url() + "/token", nullptr};

  // 1. the file GOOGLE_APPLICATION_CREDENTIALS names beats the gcloud file and the metadata server
  EXPECT_EQ(GoogleCredentials::Find(search, transport_)->AccessToken(), "sa-token");
  // 2. without it, the gcloud file (under $HOME) beats the metadata server
  env.erase("GOOGLE_APPLICATION_CREDENTIALS");
  search.environment = Environment(env);
  EXPECT_EQ(GoogleCredentials::Find(search, transport_)->AccessToken(), "user-token");
  // 3. without either, the metadata server at GCE_METADATA_HOST
  env.erase("HOME");
  search.environment = Environment(env);
  EXPECT_EQ(GoogleCredentials::Find(search, transport_)->AccessToken(), "metadata-token");

  std::vector<RecordedRequest> metadata = double_.Requests("GET", kMetadataPath);
  ASSERT_EQ(metadata.size(), 1u);
  EXPECT_EQ(metadata[0].Header("metadata-flavor"), "Google");
  EXPECT_EQ(metadata[0].Param("scopes"), "https://www.googleapis.com/auth/bigquery");
  EXPECT_EQ(double_.Requests("POST", "/token").size(), 2u);
}

TEST_F(BigQueryTest, ACredentialsFileSettingReplacesTheSearch) {
  std::string file = AuthorizedUserFile("explicit.json");
  double_.Respond("POST", "/token", 200, TokenBody("explicit-token"));
  CredentialSearch search{Environment({{"GCE_METADATA_HOST", double_.host()}}), file, double_.url() + "/token"};
  EXPECT_EQ(GoogleCredentials::Find(search, transport_)->AccessToken(), "explicit-token");
  EXPECT_TRUE(double_.Requests("GET", kMetadataPath).empty());
}

TEST_F(BigQueryTest, TokensAreCachedAndFetchedAgainFiveMinutesBeforeTheyExpire) {
  SteppedClock clock;
  double_.Respond("GET", kMetadataPath, 200, TokenBody("first", 3600));
  double_.Respond("GET", kMetadataPath, 200, TokenBody("second", 200));
  double_.Respond("GET", kMetadataPath, 200, TokenBody("third", 3600));
  CredentialSearch search{Environment({{"GCE_METADATA_HOST", double_.host()}}), std::nullopt, std::nullopt, &clock};
  auto credentials = GoogleCredentials::Find(search, transport_);

  EXPECT_EQ(credentials->AccessToken(), "first");
  clock.Advance(54min);  // 6 minutes left: still good
  EXPECT_EQ(credentials->AccessToken(), "first");
  EXPECT_EQ(double_.Requests("GET", kMetadataPath).size(), 1u);
  clock.Advance(2min);  // 4 minutes left: inside the margin
  EXPECT_EQ(credentials->AccessToken(), "second");
  // A token that lives less than the margin is fetched again on the next use.
  EXPECT_EQ(credentials->AccessToken(), "third");
  EXPECT_EQ(credentials->AccessToken(), "third");
  EXPECT_EQ(double_.Requests("GET", kMetadataPath).size(), 3u);
}

TEST_F(BigQueryTest, TokensAreSharedSafelyBetweenThreads) {
  double_.Respond("GET", kMetadataPath, 200, TokenBody("shared"), 1, 50ms);
  CredentialSearch search{Environment({{"GCE_METADATA_HOST", double_.host()}})};
  auto credentials = GoogleCredentials::Find(search, transport_);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] { good += credentials->AccessToken() == "shared" ? 1 : 0; });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(good.load(), 4);
  EXPECT_EQ(double_.Requests("GET", kMetadataPath).size(), 1u);
}

TEST_F(BigQueryTest, WithNoCredentialsAnywhereTheErrorNamesEveryPlaceSearched) {
  std::string home = (dir_ / "home").string();
  CredentialSearch search{Environment({{"HOME", home}, {"GCE_METADATA_HOST", "127.0.0.1:1"}})};
  auto credentials = GoogleCredentials::Find(search, transport_);
  try {
    credentials->AccessToken();
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-WAREHOUSE-050");
    EXPECT_NE(diagnostic.message.find("GOOGLE_APPLICATION_CREDENTIALS"), std::string::npos) << diagnostic.message;
    EXPECT_NE(diagnostic.message.find(home + "/.config/gcloud/application_default_credentials.json"), std::string::npos)
        << diagnostic.message;
    EXPECT_NE(diagnostic.message.find("metadata server 127.0.0.1:1"), std::string::npos) << diagnostic.message;
    EXPECT_NE(diagnostic.hint.find("gcloud auth application-default login"), std::string::npos);
  }
}

TEST_F(BigQueryTest, ANamedCredentialsFileThatIsMissingOrOfAnotherKindIsRefusedAtOnce) {
  for (const std::string& file :
       {(dir_ / "absent.json").string(), WriteFile("external.json", R"({"type": "external_account"})")}) {
    try {
      GoogleCredentials::Find({Environment({{"GOOGLE_APPLICATION_CREDENTIALS", file}})}, transport_);
      FAIL() << "expected an error for " << file;
    } catch (const Error& error) {
      EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-050");
      EXPECT_NE(error.diagnostics().front().message.find(file), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace sluice
