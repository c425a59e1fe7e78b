// A local test double of the Google endpoints the BigQuery backend speaks to: the BigQuery REST API, the OAuth token
// endpoint and the metadata server, all on one HTTP server on 127.0.0.1 (a free port). It runs no SQL and knows no
// API: it records every request (method, path, query, headers, body, when it came and when it was answered) and
// answers each from the script the test sets, so tests state exactly what BigQuery would say and check what Sluice
// sent.
//
// Script: Respond(method, path_part, status, body, times, delay) appends a rule; a request is answered by the first
// rule, in the order they were added, whose method equals its method and whose `path_part` occurs in its path (a
// `path_part` ending in '$' must end the path; RespondTo: and whose body contains a given text), with uses left
// (`times` = -1: without limit), after `delay`. A request no rule answers gets HTTP 418 with reason `notScripted`
// naming it, which no client treats as success. The one check the double makes itself: once VerifyJwtWith(public key)
// is set, a form body with an `assertion` (the service-account grant) is answered 400 `invalid_grant` unless its RS256
// signature verifies with that key; its decoded claims are recorded for the test either way. Thread-safety: every
// method may be called while requests are served.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::test {

struct RecordedRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> params;   // URL query parameters, decoded
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::optional<std::string> jwt_claims;  // the decoded claims of an `assertion` form field (JSON text)
  bool jwt_signature_valid = false;
  std::chrono::steady_clock::time_point received;
  std::chrono::steady_clock::time_point answered;

  std::string Header(const std::string& lower_name) const;
  std::string Param(const std::string& name) const;
};

class BigQueryDouble {
 public:
  BigQueryDouble();
  ~BigQueryDouble();
  BigQueryDouble(const BigQueryDouble&) = delete;
  BigQueryDouble& operator=(const BigQueryDouble&) = delete;

  std::string url() const;   // http://127.0.0.1:<port>
  std::string host() const;  // 127.0.0.1:<port>, as GCE_METADATA_HOST takes it

  void Respond(const std::string& method, const std::string& path_part, int status, const std::string& body,
               int times = 1, std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  // The same, for requests whose body also contains `body_part` (e.g. "\"dryRun\":true").
  void RespondTo(const std::string& method, const std::string& path_part, const std::string& body_part, int status,
                 const std::string& body, int times = 1);
  void VerifyJwtWith(const std::string& public_key_pem);

  std::vector<RecordedRequest> Requests() const;
  // The requests with that method whose path matches `path_part` (as in Respond), in the order they came.
  std::vector<RecordedRequest> Requests(const std::string& method, const std::string& path_part) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Canned bodies.
// A jobs.insert answer: the job as created (RUNNING) or, with `error_reason`, DONE with that errorResult.
std::string JobBody(const std::string& job_id, const std::string& error_reason = "",
                    const std::string& error_message = "");
// A jobs.getQueryResults / jobs.query page: `rows` as f/v arrays (nullopt → null), `columns` as STRING fields.
std::string ResultsBody(const std::string& job_id, bool complete, const std::vector<std::string>& columns = {},
                        const std::vector<std::vector<std::optional<std::string>>>& rows = {},
                        const std::string& page_token = "");
// An API error: {"error": {"code", "message", "errors": [{"reason", "message"}]}}.
std::string ErrorBody(int code, const std::string& reason, const std::string& message);

// The `[targets.<name>.connection]` keys (TOML lines) of a BigQuery target served by `bq`: project `proj`, location
// `EU`, the credentials file `adc.json` (a project writes kAuthorizedUserCredentials there) and the double's API and
// token URLs.
std::string DoubleConnectionToml(const BigQueryDouble& bq);

// Authorized-user credentials whose token the double's /token answers.
inline constexpr const char* kAuthorizedUserCredentials =
    R"({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"})";

}  // namespace sluice::test
