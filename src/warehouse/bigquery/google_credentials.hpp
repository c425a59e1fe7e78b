// GoogleCredentials: OAuth 2 access tokens for the BigQuery API, found by Application Default Credentials.
//
// Search order (https://cloud.google.com/docs/authentication/application-default-credentials), unless a credentials
// file is given, which is then the only place looked at:
//   1. the file named by GOOGLE_APPLICATION_CREDENTIALS;
//   2. the gcloud ADC file, $CLOUDSDK_CONFIG/application_default_credentials.json, else
//      $HOME/.config/gcloud/application_default_credentials.json (`gcloud auth application-default login`);
//   3. the metadata server, http://$GCE_METADATA_HOST (else metadata.google.internal), with `Metadata-Flavor: Google`.
// A file holds a `service_account` (an RS256 JWT signed with its private key is exchanged at its token_uri, grant
// jwt-bearer) or an `authorized_user` (its refresh token is exchanged, grant refresh_token). `token_url` replaces the
// token endpoint of either (tests point it at loopback).
// Tokens are cached and fetched again kRefreshMargin before they expire (by the injected clock). Secrets (private
// key, refresh token, client secret, access token) appear in no message.
// Errors: SLU-WAREHOUSE-050 no usable credentials (naming every place searched, or the file that is not usable),
// SLU-WAREHOUSE-051 the token endpoint refused them, SLU-WAREHOUSE-052 the token endpoint could not be reached.
// Thread-safety: AccessToken may be called from several threads; one fetch runs at a time.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/clock.hpp"
#include "core/environment.hpp"
#include "warehouse/bigquery/http_transport.hpp"

namespace sluice {

constexpr std::chrono::minutes kRefreshMargin{5};
constexpr const char* kBigQueryScope = "https://www.googleapis.com/auth/bigquery";

struct CredentialSearch {
  EnvironmentLookup environment;  // GOOGLE_APPLICATION_CREDENTIALS, CLOUDSDK_CONFIG, HOME, GCE_METADATA_HOST
  std::optional<std::string> credentials_file;  // replaces the search
  std::optional<std::string> token_url;         // replaces the files' token endpoint
  const Clock* clock = nullptr;                 // nullptr: the system clock
};

class GoogleCredentials {
 public:
  virtual ~GoogleCredentials() = default;

  // Finds the credentials (reads the file; does not fetch a token); `transport` must outlive them. Throws
  // SLU-WAREHOUSE-050 for a file that is named but missing or not a supported credentials file.
  static std::unique_ptr<GoogleCredentials> Find(const CredentialSearch& search, const HttpTransport& transport);

  // A valid access token: the cached one while it has more than kRefreshMargin left, else a new one.
  std::string AccessToken();
  // Forgets the cached token (after the API answered 401), so the next AccessToken fetches one.
  void Invalidate();

  // Where the token comes from, for messages: e.g. "service account a@b.iam.gserviceaccount.com (file /x.json, from
  // GOOGLE_APPLICATION_CREDENTIALS)". Never a secret.
  const std::string& description() const { return description_; }

 protected:
  struct Token {
    std::string access_token;
    std::chrono::seconds expires_in{0};
  };
  GoogleCredentials(std::string description, const Clock* clock)
      : description_(std::move(description)), clock_(clock) {}
  virtual Token Fetch() = 0;
  const Clock& clock() const { return *clock_; }

 private:
  std::string description_;
  const Clock* clock_;
  std::mutex mutex_;  // guards the two below
  std::string token_;
  std::chrono::system_clock::time_point expiry_{};
};

// base64url without padding (JWT segments).
std::string Base64UrlEncode(std::string_view bytes);

// The signed JWT a service account exchanges for a token: header.claims.signature, RS256 with `private_key_pem`.
// Throws SLU-WAREHOUSE-050 when the key cannot be read (the key itself is not in the message).
std::string SignedJwt(const std::string& client_email, const std::string& private_key_pem, const std::string& scope,
                      const std::string& audience, std::chrono::system_clock::time_point now);

}  // namespace sluice
