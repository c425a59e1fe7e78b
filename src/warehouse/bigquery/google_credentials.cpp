#include "warehouse/bigquery/google_credentials.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

constexpr const char* kDefaultTokenUrl = "https://oauth2.googleapis.com/token";
constexpr const char* kMetadataTokenPath = "/computeMetadata/v1/instance/service-accounts/default/token";

Error CredentialError(std::string code, std::string message, std::string hint) {
  return Error(Diagnostic{std::move(code), std::move(message), {}, std::move(hint), {}});
}

std::string Form(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string body;
  for (const auto& [name, value] : fields) body += (body.empty() ? "" : "&") + UrlEncode(name) + "=" + UrlEncode(value);
  return body;
}

// The token endpoint's answer → a token; its refusal or absence → the error (the endpoint's error text never carries
// the secret that was sent).
struct TokenAnswer {
  std::string access_token;
  std::chrono::seconds expires_in{0};
};
TokenAnswer ReadTokenAnswer(const HttpResponse& response, const std::string& endpoint, const std::string& what) {
  if (!response.answered()) {
    throw CredentialError(
        "SLU-WAREHOUSE-052",
        "cannot reach the token endpoint " + endpoint + " for " + what + ": " + response.failure_message,
        "check the network (and a proxy) between this machine and Google");
  }
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  if (response.status != 200 || !body.is_object() || !body.contains("access_token") ||
      !body["access_token"].is_string()) {
    std::string reason;
    if (body.is_object()) {
      if (body.contains("error") && body["error"].is_string()) reason = body["error"].get<std::string>();
      if (body.contains("error_description") && body["error_description"].is_string()) {
        reason += (reason.empty() ? "" : ": ") + body["error_description"].get<std::string>();
      }
    }
    throw CredentialError("SLU-WAREHOUSE-051",
                          "the token endpoint " + endpoint + " refused " + what + " (HTTP " +
                              std::to_string(response.status) + (reason.empty() ? "" : ", " + reason) + ")",
                          "renew the credentials (`gcloud auth application-default login`, or a new service account "
                          "key) or point GOOGLE_APPLICATION_CREDENTIALS at valid ones");
  }
  TokenAnswer answer;
  answer.access_token = body["access_token"].get<std::string>();
  if (body.contains("expires_in") && body["expires_in"].is_number_integer()) {
    answer.expires_in = std::chrono::seconds(body["expires_in"].get<int64_t>());
  } else {
    answer.expires_in = std::chrono::seconds(3600);
  }
  return answer;
}

class ServiceAccountCredentials final : public GoogleCredentials {
 public:
  ServiceAccountCredentials(std::string description, const Clock* clock, const HttpTransport& transport,
                            std::string email, std::string key, std::string token_url)
      : GoogleCredentials(std::move(description), clock),
        transport_(transport),
        email_(std::move(email)),
        key_(std::move(key)),
        token_url_(std::move(token_url)) {}

 protected:
  Token Fetch() override {
    std::string jwt = SignedJwt(email_, key_, kBigQueryScope, token_url_, clock().Now());
    HttpRequest request{"POST",
                        token_url_,
                        {{"Content-Type", "application/x-www-form-urlencoded"}},
                        Form({{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"}, {"assertion", jwt}})};
    TokenAnswer answer = ReadTokenAnswer(transport_.Send(request), token_url_, description());
    return {answer.access_token, answer.expires_in};
  }

 private:
  const HttpTransport& transport_;
  std::string email_;
  std::string key_;
  std::string token_url_;
};

class AuthorizedUserCredentials final : public GoogleCredentials {
 public:
  AuthorizedUserCredentials(std::string description, const Clock* clock, const HttpTransport& transport,
                            std::string client_id, std::string client_secret, std::string refresh_token,
                            std::string token_url)
      : GoogleCredentials(std::move(description), clock),
        transport_(transport),
        client_id_(std::move(client_id)),
        client_secret_(std::move(client_secret)),
        refresh_token_(std::move(refresh_token)),
        token_url_(std::move(token_url)) {}

 protected:
  Token Fetch() override {
    HttpRequest request{"POST",
                        token_url_,
                        {{"Content-Type", "application/x-www-form-urlencoded"}},
                        Form({{"grant_type", "refresh_token"},
                              {"client_id", client_id_},
                              {"client_secret", client_secret_},
                              {"refresh_token", refresh_token_}})};
    TokenAnswer answer = ReadTokenAnswer(transport_.Send(request), token_url_, description());
    return {answer.access_token, answer.expires_in};
  }

 private:
  const HttpTransport& transport_;
  std::string client_id_;
  std::string client_secret_;
  std::string refresh_token_;
  std::string token_url_;
};

class MetadataServerCredentials final : public GoogleCredentials {
 public:
  MetadataServerCredentials(std::string description, const Clock* clock, const HttpTransport& transport,
                            std::string host, std::string searched)
      : GoogleCredentials(std::move(description), clock),
        transport_(transport),
        host_(std::move(host)),
        searched_(std::move(searched)) {}

 protected:
  Token Fetch() override {
    std::string url = "http://" + host_ + kMetadataTokenPath + "?scopes=" + UrlEncode(kBigQueryScope);
    HttpRequest request{"GET", url, {{"Metadata-Flavor", "Google"}}, "", std::chrono::milliseconds(3000), true};
    HttpResponse response = transport_.Send(request);
    if (!response.answered()) {
      throw CredentialError("SLU-WAREHOUSE-050",
                            "no Google credentials found: searched " + searched_ + ", and the metadata server " +
                                host_ + " did not answer (" + response.failure_message + ")",
                            "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
                            "service account key file, or set the target's connection key `credentials`");
    }
    TokenAnswer answer = ReadTokenAnswer(response, "http://" + host_ + kMetadataTokenPath, description());
    return {answer.access_token, answer.expires_in};
  }

 private:
  const HttpTransport& transport_;
  std::string host_;
  std::string searched_;
};

std::string Field(const nlohmann::json& json, const char* name) {
  return json.contains(name) && json[name].is_string() ? json[name].get<std::string>() : std::string();
}

// Reads a credentials file; `origin` says how it was found (for messages).
std::unique_ptr<GoogleCredentials> FromFile(const std::string& path, const std::string& origin,
                                            const CredentialSearch& search, const Clock* clock,
                                            const HttpTransport& transport) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw CredentialError("SLU-WAREHOUSE-050",
                          "the Google credentials file " + path + " (" + origin + ") does not exist or cannot be read",
                          "point it at a service account key or an authorized_user file (`gcloud auth "
                          "application-default login` writes one)");
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json = nlohmann::json::parse(text.str(), nullptr, false);
  std::string type = json.is_object() ? Field(json, "type") : "";
  auto token_url = [&](const std::string& from_file) {
    return search.token_url ? *search.token_url : (from_file.empty() ? kDefaultTokenUrl : from_file);
  };
  if (type == "service_account") {
    std::string email = Field(json, "client_email");
    std::string key = Field(json, "private_key");
    if (email.empty() || key.empty()) {
      throw CredentialError("SLU-WAREHOUSE-050",
                            "the service account file " + path + " (" + origin + ") lacks client_email or private_key",
                            "download a new JSON key for the service account");
    }
    return std::make_unique<ServiceAccountCredentials>(
        "service account " + email + " (file " + path + ", " + origin + ")", clock, transport, email, key,
        token_url(Field(json, "token_uri")));
  }
  if (type == "authorized_user") {
    std::string client_id = Field(json, "client_id");
    std::string refresh_token = Field(json, "refresh_token");
    if (client_id.empty() || refresh_token.empty()) {
      throw CredentialError("SLU-WAREHOUSE-050",
                            "the authorized_user file " + path + " (" + origin + ") lacks client_id or refresh_token",
                            "run `gcloud auth application-default login` again");
    }
    return std::make_unique<AuthorizedUserCredentials>("authorized user (file " + path + ", " + origin + ")", clock,
                                                       transport, client_id, Field(json, "client_secret"),
                                                       refresh_token, token_url(Field(json, "token_uri")));
  }
  throw CredentialError("SLU-WAREHOUSE-050",
                        "the Google credentials file " + path + " (" + origin + ") is " +
                            (json.is_object() ? "of type \"" + type + "\"" : std::string("not JSON")) +
                            ", not a service_account or authorized_user file",
                        "use a service account key file or `gcloud auth application-default login`; external_account "
                        "and impersonated_service_account files are not supported yet");
}

const Clock& DefaultClock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace

std::unique_ptr<GoogleCredentials> GoogleCredentials::Find(const CredentialSearch& search,
                                                           const HttpTransport& transport) {
  const Clock* clock = search.clock != nullptr ? search.clock : &DefaultClock();
  auto env = [&](const char* name) -> std::optional<std::string> {
    std::optional<std::string> value = search.environment ? search.environment(name) : std::nullopt;
    if (value && value->empty()) return std::nullopt;
    return value;
  };
  if (search.credentials_file) {
    return FromFile(*search.credentials_file, "the target's connection key `credentials`", search, clock, transport);
  }
  if (auto path = env("GOOGLE_APPLICATION_CREDENTIALS")) {
    return FromFile(*path, "from GOOGLE_APPLICATION_CREDENTIALS", search, clock, transport);
  }
  std::string searched = "GOOGLE_APPLICATION_CREDENTIALS (unset)";
  std::optional<std::filesystem::path> gcloud;
  if (auto config = env("CLOUDSDK_CONFIG")) {
    gcloud = std::filesystem::path(*config) / "application_default_credentials.json";
  } else if (auto home = env("HOME")) {
    gcloud = std::filesystem::path(*home) / ".config" / "gcloud" / "application_default_credentials.json";
  }
  if (gcloud) {
    std::error_code ignored;
    if (std::filesystem::exists(*gcloud, ignored)) {
      return FromFile(gcloud->string(), "the gcloud application default credentials", search, clock, transport);
    }
    searched += ", " + gcloud->string() + " (absent)";
  }
  std::string host = env("GCE_METADATA_HOST").value_or("metadata.google.internal");
  return std::make_unique<MetadataServerCredentials>("the metadata server " + host, clock, transport, host, searched);
}

std::string GoogleCredentials::AccessToken() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto now = clock_->Now();
  if (!token_.empty() && now + kRefreshMargin < expiry_) return token_;
  Token fetched = Fetch();
  token_ = std::move(fetched.access_token);
  expiry_ = now + fetched.expires_in;
  return token_;
}

void GoogleCredentials::Invalidate() {
  std::lock_guard<std::mutex> lock(mutex_);
  token_.clear();
}

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(written));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return out;
}

std::string SignedJwt(const std::string& client_email, const std::string& private_key_pem, const std::string& scope,
                      const std::string& audience, std::chrono::system_clock::time_point now) {
  int64_t iat = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  nlohmann::json claims = {
      {"iss", client_email}, {"scope", scope}, {"aud", audience}, {"iat", iat}, {"exp", iat + 3600}};
  std::string signing_input = Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());

  auto unreadable = [&] {
    return CredentialError("SLU-WAREHOUSE-050",
                           "the private key of service account " + client_email + " cannot be read or used",
                           "download a new JSON key for the service account");
  };
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())), &BIO_free);
  if (!bio) throw unreadable();
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr),
                                                          &EVP_PKEY_free);
  if (!key) throw unreadable();
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  size_t size = 0;
  if (!context || EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(context.get(), nullptr, &size, reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    throw unreadable();
  }
  std::string signature(size, '\0');
  if (EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) != 1) {
    throw unreadable();
  }
  signature.resize(size);
  return signing_input + "." + Base64UrlEncode(signature);
}

}  // namespace sluice
