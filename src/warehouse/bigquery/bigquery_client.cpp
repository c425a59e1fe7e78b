#include "warehouse/bigquery/bigquery_client.hpp"

#include <algorithm>
#include <cstdio>
#include <regex>
#include <thread>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

constexpr int kPollTimeoutMs = 10000;  // how long BigQuery holds one jobs.getQueryResults call open
constexpr std::chrono::milliseconds kPollPause{100};

// A job (or a jobs.query call) that ended in an error, before the decision to run it again or to report it.
struct JobFailed {
  BigQueryClient::Failure failure;
};

bool IsConcurrentUpdate(const BigQueryClient::Failure& failure) {
  return failure.message.find("due to concurrent update") != std::string::npos ||
         failure.message.find("Could not serialize access") != std::string::npos;
}

// Worth sending again as it was (same job id): nothing ran, or BigQuery asks for a later try.
bool IsRetryableRequest(const BigQueryClient::Failure& failure) {
  return failure.transport || failure.status == 429 || failure.status >= 500 || failure.reason == "rateLimitExceeded" ||
         failure.reason == "backendError" || failure.reason == "internalError";
}

// Worth running again under a new id: the job ran and failed for a reason that passes.
bool IsRetryableJob(const BigQueryClient::Failure& failure) {
  return IsRetryableRequest(failure) || IsConcurrentUpdate(failure);
}

BigQueryClient::Failure FailureFrom(long status, const nlohmann::json& body, const std::string& raw) {
  BigQueryClient::Failure failure;
  failure.status = status;
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    const nlohmann::json& error = body["error"];
    if (error.contains("message") && error["message"].is_string()) failure.message = error["message"];
    if (error.contains("errors") && error["errors"].is_array() && !error["errors"].empty()) {
      const nlohmann::json& first = error["errors"][0];
      if (first.contains("reason") && first["reason"].is_string()) failure.reason = first["reason"];
      if (failure.message.empty() && first.contains("message") && first["message"].is_string()) {
        failure.message = first["message"];
      }
    }
    if (failure.reason.empty() && error.contains("status") && error["status"].is_string()) {
      failure.reason = error["status"];
    }
  }
  if (failure.message.empty()) {
    // Not BigQuery's JSON (a proxy's page, say): its beginning says more than nothing.
    failure.message = "HTTP " + std::to_string(status) + " without a BigQuery error" +
                      (raw.empty() ? std::string() : ": " + raw.substr(0, 200));
  }
  return failure;
}

std::optional<BigQueryClient::Failure> JobError(const nlohmann::json& job) {
  if (!job.is_object() || !job.contains("status") || !job["status"].contains("errorResult")) return std::nullopt;
  const nlohmann::json& error = job["status"]["errorResult"];
  BigQueryClient::Failure failure;
  failure.status = 200;
  failure.reason = error.value("reason", "");
  failure.message = error.value("message", "");
  return failure;
}

Error Diagnosed(std::string code, std::string message, std::string hint) {
  return Error(Diagnostic{std::move(code), std::move(message), {}, std::move(hint), {}});
}

// The one place BigQuery failures become sluice::Error.
[[noreturn]] void ThrowTranslated(const BigQueryClient::Failure& failure, const BigQueryEndpoint& endpoint,
                                  const std::string& subject, const std::string& job_id,
                                  const BigQueryStatement* statement) {
  if (failure.transport) {
    throw Diagnosed("SLU-WAREHOUSE-052",
                    "cannot reach BigQuery at " + endpoint.api_url + (subject.empty() ? "" : " for " + subject) + ": " +
                        failure.message,
                    "check the network (and a proxy) between this machine and Google, or the connection key api_url");
  }
  std::string what = (job_id.empty() ? std::string("BigQuery request") : "BigQuery job " + job_id) +
                     (subject.empty() ? "" : " on " + subject) + " failed: " + failure.message + " (reason " +
                     (failure.reason.empty() ? std::string("none") : failure.reason) +
                     (failure.status != 0 && failure.status != 200 ? ", HTTP " + std::to_string(failure.status) : "") +
                     ")";
  const std::string& reason = failure.reason;
  const std::string& message = failure.message;
  auto has = [&](const char* text) { return message.find(text) != std::string::npos; };
  std::string code = "SLU-WAREHOUSE-020";
  std::string hint;
  if (failure.status == 401) {
    code = "SLU-WAREHOUSE-051";
    hint = "the access token was refused: renew the credentials (Application Default Credentials, docs/bigquery.md)";
  } else if (reason == "accessDenied" ||
             (failure.status == 403 && reason != "rateLimitExceeded" && reason != "quotaExceeded")) {
    code = "SLU-WAREHOUSE-053";
    hint = "grant the credentials' principal BigQuery Job User on project " + endpoint.project +
           " and Data Editor on the dataset";
  } else if (reason == "rateLimitExceeded" || reason == "quotaExceeded") {
    code = "SLU-WAREHOUSE-054";
    hint =
        "a BigQuery quota or rate limit was still exceeded after the retries; lower the concurrency "
        "(max_concurrent_jobs_per_table, run concurrency) or wait for the quota to refill";
  } else if (IsConcurrentUpdate(failure)) {
    code = "SLU-WAREHOUSE-023";
    hint = "another job kept changing the table through every retry; let the other writer finish and run again";
  } else if (reason == "stopped") {
    code = "SLU-WAREHOUSE-008";
  } else if (has("Syntax error")) {
    code = "SLU-WAREHOUSE-022";
    hint = "the SQL is not valid GoogleSQL";
  } else if (reason == "notFound" || has("Not found: ")) {
    code = "SLU-WAREHOUSE-021";
    hint = "a dataset, table or function the SQL names does not exist in project " + endpoint.project + " (location " +
           endpoint.location + ")";
  } else if (reason == "invalidQuery") {
    code = "SLU-WAREHOUSE-024";
    hint =
        "a column or relation the SQL names does not exist there, or has another type; upstream tables are as "
        "their last run left them";
  } else if (reason == "invalid" && (has("Bad ") || has("Could not cast") || has("Invalid "))) {
    code = "SLU-WAREHOUSE-025";
    hint = "a value does not convert to the type asked for; check the data";
  }
  Error error = Diagnosed(code, what, hint);
  if (statement != nullptr && statement->select_begin != std::string::npos) {
    if (std::optional<size_t> offset = ErrorOffset(message, statement->sql);
        offset && *offset >= statement->select_begin && *offset < statement->select_begin + statement->select_size) {
      throw SqlError(error.diagnostics().front(), *offset - statement->select_begin);
    }
  }
  throw error;
}

// A failed call about a job: a request failure that outlasted its retries is reported; the job's own error is left
// to the caller, which runs the job again when its reason passes.
[[noreturn]] void FailCall(const BigQueryClient::Failure& failure, const BigQueryEndpoint& endpoint,
                           const std::string& subject, const std::string& job_id, const BigQueryStatement& statement) {
  if (IsRetryableRequest(failure)) ThrowTranslated(failure, endpoint, subject, job_id, &statement);
  throw JobFailed{failure};
}

Rows RowsFrom(const std::vector<BigQueryField>& schema) {
  Rows rows;
  for (const BigQueryField& field : schema) rows.columns.push_back(field.name);
  return rows;
}

void AppendRows(const nlohmann::json& page, Rows& rows) {
  if (!page.contains("rows") || !page["rows"].is_array()) return;
  for (const nlohmann::json& row : page["rows"]) {
    std::vector<std::optional<std::string>> values;
    if (row.contains("f") && row["f"].is_array()) {
      for (const nlohmann::json& cell : row["f"]) {
        const nlohmann::json& v = cell.contains("v") ? cell["v"] : nlohmann::json();
        if (v.is_null()) {
          values.emplace_back(std::nullopt);
        } else if (v.is_string()) {
          values.emplace_back(v.get<std::string>());
        } else {
          values.emplace_back(v.dump());
        }
      }
    }
    rows.rows.push_back(std::move(values));
  }
}

std::optional<int64_t> DmlAffectedRows(const nlohmann::json& page) {
  if (!page.contains("numDmlAffectedRows")) return std::nullopt;
  const nlohmann::json& value = page["numDmlAffectedRows"];
  if (value.is_string()) return std::stoll(value.get<std::string>());
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::nullopt;
}

}  // namespace

std::vector<BigQueryField> ParseSchema(const nlohmann::json& schema) {
  std::vector<BigQueryField> fields;
  if (!schema.is_object() || !schema.contains("fields") || !schema["fields"].is_array()) return fields;
  for (const nlohmann::json& field : schema["fields"]) {
    BigQueryField parsed;
    parsed.name = field.value("name", "");
    parsed.type = field.value("type", "");
    parsed.mode = field.value("mode", "NULLABLE");
    parsed.fields = ParseSchema(field);
    fields.push_back(std::move(parsed));
  }
  return fields;
}

std::string StandardType(const BigQueryField& field) {
  static const std::map<std::string, std::string> kLegacy = {{"INTEGER", "INT64"},
                                                             {"FLOAT", "FLOAT64"},
                                                             {"BOOLEAN", "BOOL"},
                                                             {"RECORD", "STRUCT"},
                                                             {"BIGDECIMAL", "BIGNUMERIC"}};
  auto legacy = kLegacy.find(field.type);
  std::string type = legacy == kLegacy.end() ? field.type : legacy->second;
  if (type == "STRUCT") {
    std::string members;
    for (const BigQueryField& member : field.fields) {
      members += (members.empty() ? "" : ", ") + member.name + " " + StandardType(member);
    }
    type = "STRUCT<" + members + ">";
  }
  return field.mode == "REPEATED" ? "ARRAY<" + type + ">" : type;
}

std::optional<size_t> ErrorOffset(const std::string& message, const std::string& sql) {
  static const std::regex kLocation(R"(\[(\d+):(\d+)\])");
  std::smatch match;
  if (!std::regex_search(message, match, kLocation)) return std::nullopt;
  long line = std::stol(match[1].str());
  long column = std::stol(match[2].str());
  size_t at = 0;
  for (long current = 1; current < line; ++current) {
    at = sql.find('\n', at);
    if (at == std::string::npos) return std::nullopt;
    ++at;
  }
  for (long current = 1; current < column && at < sql.size() && sql[at] != '\n'; ++current) {
    ++at;  // one character: skip its UTF-8 continuation bytes too
    while (at < sql.size() && (static_cast<unsigned char>(sql[at]) & 0xC0) == 0x80) ++at;
  }
  return at;
}

BigQueryClient::BigQueryClient(BigQueryEndpoint endpoint, std::unique_ptr<HttpTransport> transport,
                               std::unique_ptr<GoogleCredentials> credentials, RetryPolicy retry, int max_jobs_per_key)
    : endpoint_(std::move(endpoint)),
      transport_(std::move(transport)),
      credentials_(std::move(credentials)),
      retry_(retry),
      max_jobs_per_key_(std::max(1, max_jobs_per_key)),
      random_(retry.seed) {
  char tag[9];
  std::snprintf(tag, sizeof tag, "%08x", static_cast<unsigned>(random_() & 0xffffffffu));
  client_tag_ = tag;
}

std::string BigQueryClient::Url(const std::string& path) const {
  return endpoint_.api_url + "/bigquery/v2/projects/" + UrlEncode(endpoint_.project) + "/" + path;
}

std::string BigQueryClient::NextJobId(const std::string& tag) {
  std::string clean;
  for (char c : tag.empty() ? std::string("q") : tag) {
    if (clean.size() == 64) break;
    clean += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-') ? c : '_';
  }
  return "sluice_" + clean + "_" + client_tag_ + "_" + std::to_string(next_job_.fetch_add(1) + 1);
}

void BigQueryClient::ThrowIfInterrupted(const std::string& subject, const std::string& job_id) const {
  if (!interrupted_) return;
  throw Diagnosed("SLU-WAREHOUSE-008",
                  (job_id.empty() ? std::string("BigQuery request") : "BigQuery job " + job_id) +
                      (subject.empty() ? "" : " on " + subject) +
                      ": interrupted (the run was canceled); a write whose statement had not finished left its "
                      "target untouched",
                  "");
}

void BigQueryClient::Backoff(int attempt) {
  auto ceiling = retry_.initial_backoff * (int64_t{1} << std::min(attempt - 1, 20));
  ceiling = std::min<std::chrono::milliseconds>(ceiling, retry_.max_backoff);
  std::chrono::milliseconds pause;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int64_t span = std::max<int64_t>(1, ceiling.count() / 2);
    pause = std::chrono::milliseconds(ceiling.count() - span + static_cast<int64_t>(random_() % (span + 1)));
  }
  auto until = std::chrono::steady_clock::now() + pause;
  while (!interrupted_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(20), until - std::chrono::steady_clock::now()));
  }
}

BigQueryClient::Answer BigQueryClient::Call(const std::string& method, const std::string& url,
                                            const nlohmann::json* body) {
  HttpRequest request;
  request.method = method;
  request.url = url;
  request.headers.emplace_back("Authorization", "Bearer " + credentials_->AccessToken());
  if (body != nullptr) {
    request.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
    request.body = body->dump();
  }
  HttpResponse response = transport_->Send(request);
  Answer answer;
  if (!response.answered()) {
    Failure failure;
    failure.transport = true;
    failure.message = response.failure_message;
    answer.failure = failure;
    return answer;
  }
  answer.status = response.status;
  answer.body = nlohmann::json::parse(response.body, nullptr, false);
  if (response.status < 200 || response.status >= 300) {
    answer.failure = FailureFrom(response.status, answer.body, response.body);
  } else if (!answer.body.is_object()) {
    Failure failure;
    failure.status = response.status;
    failure.reason = "invalidResponse";
    failure.message = "HTTP " + std::to_string(response.status) +
                      " with a body that is not a JSON object: " + response.body.substr(0, 200);
    answer.failure = failure;
  }
  return answer;
}

BigQueryClient::Answer BigQueryClient::CallRetried(const std::string& method, const std::string& url,
                                                   const nlohmann::json* body, const std::string& subject,
                                                   const std::string& job_id, bool accept_conflict) {
  bool refreshed = false;
  for (int attempt = 1;; ++attempt) {
    ThrowIfInterrupted(subject, job_id);
    Answer answer = Call(method, url, body);
    if (!answer.failure) return answer;
    if (answer.status == 409 && accept_conflict) return answer;
    if (answer.status == 401 && !refreshed) {
      refreshed = true;
      credentials_->Invalidate();
      continue;
    }
    if (!IsRetryableRequest(*answer.failure) || attempt >= retry_.max_attempts) return answer;
    Backoff(attempt);
  }
}

BigQueryResult BigQueryClient::Collect(const std::string& job_id, nlohmann::json page, const std::string& subject,
                                       const BigQueryStatement& statement) {
  BigQueryResult result;
  result.job_id = job_id;
  std::string base = Url("queries/" + UrlEncode(job_id)) + "?location=" + UrlEncode(endpoint_.location) +
                     "&timeoutMs=" + std::to_string(kPollTimeoutMs);
  bool schema_read = false;
  for (bool first = true;; first = false) {
    if (page.is_null() || !page.value("jobComplete", false)) {
      if (!first) std::this_thread::sleep_for(kPollPause);
      Answer answer = CallRetried("GET", base, nullptr, subject, job_id);
      if (answer.failure) FailCall(*answer.failure, endpoint_, subject, job_id, statement);
      page = std::move(answer.body);
      continue;
    }
    if (!schema_read) {
      result.schema = ParseSchema(page.value("schema", nlohmann::json::object()));
      result.rows = RowsFrom(result.schema);
      result.dml_affected_rows = DmlAffectedRows(page);
      schema_read = true;
    }
    AppendRows(page, result.rows);
    std::string token = page.contains("pageToken") && page["pageToken"].is_string()
                            ? page["pageToken"].get<std::string>()
                            : std::string();
    if (token.empty()) return result;
    Answer answer = CallRetried("GET", base + "&pageToken=" + UrlEncode(token), nullptr, subject, job_id);
    if (answer.failure) FailCall(*answer.failure, endpoint_, subject, job_id, statement);
    page = std::move(answer.body);
    if (!page.value("jobComplete", true)) page["jobComplete"] = true;  // a page of a complete job
  }
}

BigQueryResult BigQueryClient::RunJob(const BigQueryStatement& statement, const JobOptions& options) {
  const std::string base_id = NextJobId(options.tag);
  // The per-key cap: held from the insert until the results are read.
  struct Slot {
    BigQueryClient& client;
    std::string key;
    Slot(BigQueryClient& owner, std::string cap_key) : client(owner), key(std::move(cap_key)) {
      if (key.empty()) return;
      std::unique_lock<std::mutex> lock(client.mutex_);
      client.slot_freed_.wait(lock, [&] { return client.running_per_key_[key] < client.max_jobs_per_key_; });
      ++client.running_per_key_[key];
    }
    ~Slot() {
      if (key.empty()) return;
      std::lock_guard<std::mutex> lock(client.mutex_);
      if (--client.running_per_key_[key] == 0) client.running_per_key_.erase(key);
      client.slot_freed_.notify_all();
    }
  } slot(*this, options.cap_key);

  for (int run = 1;; ++run) {
    const std::string job_id = run == 1 ? base_id : base_id + "_r" + std::to_string(run);
    struct InFlight {
      BigQueryClient& client;
      std::string id;
      InFlight(BigQueryClient& owner, std::string job) : client(owner), id(std::move(job)) {
        std::lock_guard<std::mutex> lock(client.mutex_);
        client.in_flight_.insert(id);
      }
      ~InFlight() {
        std::lock_guard<std::mutex> lock(client.mutex_);
        client.in_flight_.erase(id);
      }
    } in_flight(*this, job_id);
    nlohmann::json body = {
        {"jobReference", {{"projectId", endpoint_.project}, {"jobId", job_id}, {"location", endpoint_.location}}},
        {"configuration", {{"query", {{"query", statement.sql}, {"useLegacySql", false}}}}}};
    if (options.dry_run) body["configuration"]["dryRun"] = true;
    try {
      Answer answer = CallRetried("POST", Url("jobs"), &body, options.subject, job_id, /*accept_conflict=*/true);
      bool exists = answer.status == 409;  // our own id: an earlier send of this insert got through
      if (answer.failure && !exists) ThrowTranslated(*answer.failure, endpoint_, options.subject, job_id, &statement);
      if (!exists) {
        if (std::optional<Failure> failure = JobError(answer.body)) throw JobFailed{*failure};
      }
      if (options.dry_run) {
        BigQueryResult result;
        result.job_id = job_id;
        if (answer.body.contains("statistics") && answer.body["statistics"].contains("query")) {
          result.schema = ParseSchema(answer.body["statistics"]["query"].value("schema", nlohmann::json::object()));
        }
        result.rows = RowsFrom(result.schema);
        return result;
      }
      try {
        return Collect(job_id, nlohmann::json(), options.subject, statement);
      } catch (const Error&) {
        // The cancel Interrupt sent may have reached BigQuery before this job's insert did: cancel once more now
        // that the insert has been answered, so that no job of a canceled run keeps running.
        if (interrupted_) Cancel(job_id);
        throw;
      }
    } catch (const JobFailed& failed) {
      ThrowIfInterrupted(options.subject, job_id);
      if (IsRetryableJob(failed.failure) && run < retry_.max_attempts) {
        Backoff(run);
        continue;
      }
      ThrowTranslated(failed.failure, endpoint_, options.subject, job_id, &statement);
    }
  }
}

BigQueryResult BigQueryClient::Query(const BigQueryStatement& statement, const std::string& subject) {
  for (int run = 1;; ++run) {
    std::string request_id;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      char text[40];
      uint64_t a = random_(), b = random_();
      std::snprintf(text, sizeof text, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                    static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                    static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                    static_cast<unsigned long long>(b & 0xffffffffffffULL));
      request_id = text;
    }
    nlohmann::json body = {{"query", statement.sql},
                           {"useLegacySql", false},
                           {"location", endpoint_.location},
                           {"timeoutMs", kPollTimeoutMs},
                           {"requestId", request_id}};
    std::string job_id;
    try {
      Answer answer = CallRetried("POST", Url("queries"), &body, subject, "");
      if (answer.failure) FailCall(*answer.failure, endpoint_, subject, job_id, statement);
      if (answer.body.contains("jobReference")) job_id = answer.body["jobReference"].value("jobId", "");
      return Collect(job_id, std::move(answer.body), subject, statement);
    } catch (const JobFailed& failed) {
      ThrowIfInterrupted(subject, job_id);
      if (IsRetryableJob(failed.failure) && run < retry_.max_attempts) {
        Backoff(run);
        continue;
      }
      ThrowTranslated(failed.failure, endpoint_, subject, job_id, &statement);
    }
  }
}

std::optional<nlohmann::json> BigQueryClient::Get(const std::string& path, const std::string& subject) {
  Answer answer = CallRetried("GET", Url(path), nullptr, subject, "");
  if (answer.status == 404) return std::nullopt;
  if (answer.failure) ThrowTranslated(*answer.failure, endpoint_, subject, "", nullptr);
  return std::move(answer.body);
}

void BigQueryClient::Interrupt() {
  interrupted_ = true;
  std::vector<std::string> jobs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs.assign(in_flight_.begin(), in_flight_.end());
  }
  for (const std::string& job : jobs) Cancel(job);
}

void BigQueryClient::Cancel(const std::string& job_id) {
  // Best effort: a job that already ended cannot be canceled, and its caller stops waiting for it anyway; a
  // credentials failure here would only repeat the one the caller sees.
  try {
    Call("POST", Url("jobs/" + UrlEncode(job_id) + "/cancel") + "?location=" + UrlEncode(endpoint_.location), nullptr);
  } catch (const Error&) {
  }
}

}  // namespace sluice
