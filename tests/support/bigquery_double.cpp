#include "support/bigquery_double.hpp"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace sluice::test {

namespace {

struct Rule {
  std::string method;
  std::string path_part;
  std::string body_part;
  int status;
  std::string body;
  int times;
  std::chrono::milliseconds delay;
};

std::string Base64UrlDecode(std::string text) {
  for (char& c : text) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  size_t padding = (4 - text.size() % 4) % 4;
  text.append(padding, '=');
  std::string out(text.size() / 4 * 3, '\0');
  int size = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                             reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (size < 0) return "";
  out.resize(static_cast<size_t>(size) - padding);
  return out;
}

// `part` occurs in `path`; a `part` ending in '$' must end it.
bool PathMatches(const std::string& path, const std::string& part) {
  if (!part.empty() && part.back() == '$') {
    std::string suffix = part.substr(0, part.size() - 1);
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  return path.find(part) != std::string::npos;
}

bool VerifyRs256(const std::string& signing_input, const std::string& signature, const std::string& public_key_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(public_key_pem.data(), static_cast<int>(public_key_pem.size())), &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr),
                                                          &EVP_PKEY_free);
  if (!key) return false;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  return EVP_DigestVerifyInit(context.get(), nullptr, EVP_sha256(), nullptr, key.get()) == 1 &&
         EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) == 1;
}

}  // namespace

std::string RecordedRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string RecordedRequest::Param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? "" : it->second;
}

struct BigQueryDouble::Impl {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  mutable std::mutex mutex;  // guards the three below
  std::vector<Rule> rules;
  std::vector<RecordedRequest> requests;
  std::string public_key_pem;

  void Handle(const httplib::Request& request, httplib::Response& response) {
    RecordedRequest recorded;
    recorded.received = std::chrono::steady_clock::now();
    recorded.method = request.method;
    recorded.path = request.path;
    for (const auto& [name, value] : request.params) recorded.params[name] = value;
    for (const auto& [name, value] : request.headers) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      recorded.headers[lower] = value;
    }
    recorded.body = request.body;

    std::optional<Rule> rule;
    std::string key;
    {
      std::lock_guard<std::mutex> lock(mutex);
      key = public_key_pem;
      for (Rule& candidate : rules) {
        if (candidate.times == 0 || candidate.method != request.method ||
            !PathMatches(request.path, candidate.path_part) ||
            request.body.find(candidate.body_part) == std::string::npos) {
          continue;
        }
        if (candidate.times > 0) --candidate.times;
        rule = candidate;
        break;
      }
    }
    std::optional<std::string> refusal;
    if (request.method == "POST" && request.body.find("assertion=") != std::string::npos) {
      httplib::Params form;
      httplib::detail::parse_query_text(request.body, form);
      auto assertion = form.find("assertion");
      std::string jwt = assertion == form.end() ? "" : assertion->second;
      size_t first = jwt.find('.');
      size_t second = first == std::string::npos ? std::string::npos : jwt.find('.', first + 1);
      if (second != std::string::npos) {
        recorded.jwt_claims = Base64UrlDecode(jwt.substr(first + 1, second - first - 1));
        recorded.jwt_signature_valid =
            !key.empty() && VerifyRs256(jwt.substr(0, second), Base64UrlDecode(jwt.substr(second + 1)), key);
      }
      if (!key.empty() && !recorded.jwt_signature_valid) {
        refusal = R"({"error": "invalid_grant", "error_description": "Invalid JWT Signature."})";
      }
    }
    if (rule && rule->delay.count() > 0) std::this_thread::sleep_for(rule->delay);
    if (refusal) {
      response.status = 400;
      response.set_content(*refusal, "application/json");
    } else if (rule) {
      response.status = rule->status;
      response.set_content(rule->body, "application/json");
    } else {
      response.status = 418;
      response.set_content(
          ErrorBody(418, "notScripted",
                    "the BigQuery double has no response scripted for " + request.method + " " + request.path),
          "application/json");
    }
    recorded.answered = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mutex);
    requests.push_back(std::move(recorded));
  }
};

BigQueryDouble::BigQueryDouble() : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.server.new_task_queue = [] { return new httplib::ThreadPool(16); };
  auto handler = [&impl](const httplib::Request& request, httplib::Response& response) {
    impl.Handle(request, response);
  };
  impl.server.Get(".*", handler);
  impl.server.Post(".*", handler);
  impl.server.Delete(".*", handler);
  impl.port = impl.server.bind_to_any_port("127.0.0.1");
  impl.thread = std::thread([&impl] { impl.server.listen_after_bind(); });
  while (!impl.server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

BigQueryDouble::~BigQueryDouble() {
  impl_->server.stop();
  impl_->thread.join();
}

std::string BigQueryDouble::url() const { return "http://" + host(); }
std::string BigQueryDouble::host() const { return "127.0.0.1:" + std::to_string(impl_->port); }

void BigQueryDouble::Respond(const std::string& method, const std::string& path_part, int status,
                             const std::string& body, int times, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->rules.push_back({method, path_part, "", status, body, times, delay});
}

void BigQueryDouble::RespondTo(const std::string& method, const std::string& path_part, const std::string& body_part,
                               int status, const std::string& body, int times) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->rules.push_back({method, path_part, body_part, status, body, times, std::chrono::milliseconds(0)});
}

void BigQueryDouble::VerifyJwtWith(const std::string& public_key_pem) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->public_key_pem = public_key_pem;
}

std::vector<RecordedRequest> BigQueryDouble::Requests() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->requests;
}

std::vector<RecordedRequest> BigQueryDouble::Requests(const std::string& method, const std::string& path_part) const {
  std::vector<RecordedRequest> matching;
  for (RecordedRequest& request : Requests()) {
    if (request.method == method && PathMatches(request.path, path_part)) {
      matching.push_back(std::move(request));
    }
  }
  return matching;
}

std::string JobBody(const std::string& job_id, const std::string& error_reason, const std::string& error_message) {
  nlohmann::json job = {{"kind", "bigquery#job"},
                        {"jobReference", {{"projectId", "proj"}, {"jobId", job_id}, {"location", "EU"}}},
                        {"status", {{"state", error_reason.empty() ? "RUNNING" : "DONE"}}}};
  if (!error_reason.empty()) {
    job["status"]["errorResult"] = {{"reason", error_reason}, {"message", error_message}};
  }
  return job.dump();
}

std::string ResultsBody(const std::string& job_id, bool complete, const std::vector<std::string>& columns,
                        const std::vector<std::vector<std::optional<std::string>>>& rows,
                        const std::string& page_token) {
  nlohmann::json body = {{"kind", "bigquery#getQueryResultsResponse"},
                         {"jobReference", {{"projectId", "proj"}, {"jobId", job_id}, {"location", "EU"}}},
                         {"jobComplete", complete}};
  if (!complete) return body.dump();
  nlohmann::json fields = nlohmann::json::array();
  for (const std::string& column : columns)
    fields.push_back({{"name", column}, {"type", "STRING"}, {"mode", "NULLABLE"}});
  body["schema"] = {{"fields", fields}};
  nlohmann::json json_rows = nlohmann::json::array();
  for (const auto& row : rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& value : row) cells.push_back({{"v", value ? nlohmann::json(*value) : nlohmann::json()}});
    json_rows.push_back({{"f", cells}});
  }
  body["rows"] = json_rows;
  body["totalRows"] = std::to_string(rows.size());
  if (!page_token.empty()) body["pageToken"] = page_token;
  return body.dump();
}

std::string ErrorBody(int code, const std::string& reason, const std::string& message) {
  return nlohmann::json{{"error",
                         {{"code", code},
                          {"message", message},
                          {"errors", {{{"reason", reason}, {"message", message}, {"domain", "global"}}}}}}}
      .dump();
}

std::string DoubleConnectionToml(const BigQueryDouble& bq) {
  return "project = \"proj\"\nlocation = \"EU\"\ncredentials = \"adc.json\"\napi_url = \"" + bq.url() +
         "\"\ntoken_url = \"" + bq.url() + "/token\"\n";
}

}  // namespace sluice::test
