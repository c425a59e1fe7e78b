#include "warehouse/bigquery/http_transport.hpp"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace sluice {

namespace {

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

// Whether the URL's host is this machine, which no proxy serves (and a test double listens on).
bool IsLoopback(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  std::string host = url.substr(start, url.find_first_of("/?", start) - start);
  if (host.rfind("[::1]", 0) == 0) return true;
  host = host.substr(0, host.find(':'));
  return host == "localhost" || host.rfind("127.", 0) == 0;
}

}  // namespace

HttpTransport::HttpTransport(std::chrono::milliseconds connect_timeout, std::chrono::milliseconds total_timeout)
    : connect_timeout_(connect_timeout), total_timeout_(total_timeout) {
  InitCurlOnce();
}

HttpResponse HttpTransport::Send(const HttpRequest& request) const {
  HttpResponse response;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) {
    response.failure = HttpResponse::Failure::kOther;
    response.failure_message = "curl_easy_init failed";
    return response;
  }
  curl_slist* raw_headers = nullptr;
  for (const auto& [name, value] : request.headers)
    raw_headers = curl_slist_append(raw_headers, (name + ": " + value).c_str());
  // libcurl sends "Expect: 100-continue" for larger bodies, which costs a round trip for nothing here.
  raw_headers = curl_slist_append(raw_headers, "Expect:");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(raw_headers, &curl_slist_free_all);

  char error_buffer[CURL_ERROR_SIZE] = {0};
  CURL* handle = curl.get();
  curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &AppendBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // thread-safe timeouts
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
  long connect_ms = request.connect_timeout.count() > 0 ? static_cast<long>(request.connect_timeout.count())
                                                        : static_cast<long>(connect_timeout_.count());
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(total_timeout_.count()));
  if (request.direct || IsLoopback(request.url)) curl_easy_setopt(handle, CURLOPT_NOPROXY, "*");
  if (request.method == "POST") {
    curl_easy_setopt(handle, CURLOPT_POST, 1L);
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  CURLcode code = curl_easy_perform(handle);
  if (code != CURLE_OK) {
    response.body.clear();
    response.failure =
        code == CURLE_OPERATION_TIMEDOUT ? HttpResponse::Failure::kTimeout
        : (code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_RESOLVE_PROXY)
            ? HttpResponse::Failure::kConnect
            : HttpResponse::Failure::kOther;
    response.failure_message = error_buffer[0] != '\0' ? std::string(error_buffer) : curl_easy_strerror(code);
    return response;
  }
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

std::string UrlEncode(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace sluice
