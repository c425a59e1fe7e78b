// BigQueryClient: the BigQuery REST API v2 as the warehouse uses it: query jobs, their results, a few resources.
//
//   RunJob   jobs.insert with a job id chosen here (sluice_<tag>_<client>_<n>), then jobs.getQueryResults until
//            jobComplete, page by page (pageToken). An insert answered with an HTTP or quota failure is sent again
//            with the same id, so a retried insert never runs a statement twice: a 409 `duplicate` for our own id
//            means the first attempt got through, and that job is polled. A job that fails with a retryable reason
//            (rateLimitExceeded, backendError, "Could not serialize access to table … due to concurrent update") is
//            run again under a new id (`…_r<attempt>`). Dry runs return the statement's result schema only.
//   Query    jobs.query (a short synchronous call with a requestId, for catalog and ledger reads), then as RunJob.
//   Get      a resource (datasets.get, tables.get); nullopt on 404.
// Every job call passes `location`; every call an `Authorization: Bearer` token from GoogleCredentials (a 401 fetches a
// new one once). Retries back off exponentially (each pause a random time between half and all of its step, so clients
// that failed together spread out), bounded by RetryPolicy; randomness from its seed. Jobs that name a `cap_key` wait
// while max_jobs_per_key jobs of that key are in flight in this client. Errors are translated here, in one place:
// SLU-WAREHOUSE-NNN naming the job id, BigQuery's reason and message, the subject; a SqlError with the offset into the
// statement's embedded SELECT when BigQuery places the error there
// ("[line:col]"). Codes: 008 interrupted, 020 other, 021 not found, 022 syntax, 023 concurrent update, 024 does not
// bind, 025 bad value, 051 credentials refused (401), 052 BigQuery not reachable, 053 access denied, 054 quota or
// rate limit (after the retries).
// Thread-safety: every method may be called from several threads; Interrupt from any thread, irreversibly.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "warehouse/bigquery/google_credentials.hpp"
#include "warehouse/bigquery/http_transport.hpp"
#include "warehouse/embedded_select.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

struct BigQueryEndpoint {
  std::string project;
  std::string location = "US";
  std::string api_url = "https://bigquery.googleapis.com";
};

struct RetryPolicy {
  int max_attempts = 6;  // sends of one request (or runs of one job) in all
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{32000};
  uint64_t seed = std::random_device{}();
};

// A column of a result or table schema as the REST API describes it (legacy type names: INTEGER, FLOAT, RECORD …).
struct BigQueryField {
  std::string name;
  std::string type;
  std::string mode;  // NULLABLE, REQUIRED or REPEATED
  std::vector<BigQueryField> fields;
};
std::vector<BigQueryField> ParseSchema(const nlohmann::json& schema);  // a `schema` object ({fields: [...]})
// The GoogleSQL type a column is declared with: INT64, FLOAT64, BOOL, STRUCT<a INT64, …>, ARRAY<…> …
std::string StandardType(const BigQueryField& field);

// A statement, and where the caller's SELECT sits in it (byte offsets), so errors there become SqlErrors.
using BigQueryStatement = EmbeddedStatement;

struct BigQueryResult {
  std::string job_id;
  std::vector<BigQueryField> schema;
  Rows rows;  // every value as text, NULL → nullopt; RECORD and REPEATED values as JSON text
  std::optional<int64_t> dml_affected_rows;
};

struct JobOptions {
  std::string subject;  // what the job works on (a relation), for messages; may be empty
  std::string tag;      // the job id's middle part, e.g. the run id; empty: "q"
  bool dry_run = false;
  std::string cap_key;  // non-empty: the job counts against the per-key cap
};

class BigQueryClient {
 public:
  BigQueryClient(BigQueryEndpoint endpoint, std::unique_ptr<HttpTransport> transport,
                 std::unique_ptr<GoogleCredentials> credentials, RetryPolicy retry, int max_jobs_per_key);

  BigQueryResult RunJob(const BigQueryStatement& statement, const JobOptions& options);
  BigQueryResult Query(const BigQueryStatement& statement, const std::string& subject);
  // GET {api}/bigquery/v2/projects/{project}/{path}; nullopt when BigQuery answers 404.
  std::optional<nlohmann::json> Get(const std::string& path, const std::string& subject);

  // jobs.cancel for every job in flight; every later call fails with SLU-WAREHOUSE-008.
  void Interrupt();

  const BigQueryEndpoint& endpoint() const { return endpoint_; }

  // What went wrong with one request or job, before translation.
  struct Failure {
    long status = 0;  // HTTP status; 0 when none came
    std::string reason;
    std::string message;
    bool transport = false;  // no HTTP answer
  };

 private:
  struct Answer {
    long status = 0;
    nlohmann::json body;
    std::optional<Failure> failure;  // set unless 2xx
  };
  Answer Call(const std::string& method, const std::string& url, const nlohmann::json* body);
  Answer CallRetried(const std::string& method, const std::string& url, const nlohmann::json* body,
                     const std::string& subject, const std::string& job_id, bool accept_conflict = false);
  BigQueryResult Collect(const std::string& job_id, nlohmann::json first, const std::string& subject,
                         const BigQueryStatement& statement);
  void Backoff(int attempt);
  void ThrowIfInterrupted(const std::string& subject, const std::string& job_id) const;
  void Cancel(const std::string& job_id);  // jobs.cancel, failures ignored
  std::string NextJobId(const std::string& tag);
  std::string Url(const std::string& path) const;

  BigQueryEndpoint endpoint_;
  std::unique_ptr<HttpTransport> transport_;
  std::unique_ptr<GoogleCredentials> credentials_;
  RetryPolicy retry_;
  int max_jobs_per_key_;
  std::string client_tag_;  // random per client, so two processes with one run id never share a job id
  std::atomic<uint64_t> next_job_{0};
  std::atomic<bool> interrupted_{false};

  std::mutex mutex_;  // guards the four below
  std::mt19937_64 random_;
  std::set<std::string> in_flight_;
  std::map<std::string, int> running_per_key_;
  std::condition_variable slot_freed_;
};

// The [line:col] BigQuery puts in an error message, as a byte offset into `sql` (columns counted in characters).
std::optional<size_t> ErrorOffset(const std::string& message, const std::string& sql);

}  // namespace sluice
