#include "warehouse/clickhouse/clickhouse_http.hpp"

#include <httplib.h>

#include <cctype>
#include <chrono>
#include <mutex>
#include <vector>
#include <regex>

namespace sluice {

namespace {

std::string PercentEncode(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out += field[i];
      continue;
    }
    char next = field[++i];
    switch (next) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case '0': out += '\0'; break;
      case 'a': out += '\a'; break;
      case 'v': out += '\v'; break;
      default: out += next; break;  // \\ \' and any other escaped byte stand for themselves
    }
  }
  return out;
}

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return fields;
}

}  // namespace

struct ClickHouseHttp::Connections {
  struct Idle {
    std::unique_ptr<httplib::Client> client;
    std::chrono::steady_clock::time_point since;
  };
  std::mutex mutex;
  std::vector<Idle> idle;  // guarded by mutex
};

namespace {

constexpr auto kReuseWithin = std::chrono::seconds(1);

}  // namespace

ClickHouseHttp::ClickHouseHttp(ClickHouseEndpoint endpoint)
    : endpoint_(std::move(endpoint)), connections_(std::make_unique<Connections>()) {}
ClickHouseHttp::~ClickHouseHttp() = default;
ClickHouseHttp::ClickHouseHttp(ClickHouseHttp&&) noexcept = default;
ClickHouseHttp& ClickHouseHttp::operator=(ClickHouseHttp&&) noexcept = default;

ClickHouseResponse ClickHouseHttp::Post(const ClickHouseRequest& request) const {
  std::map<std::string, std::string> parameters = endpoint_.settings;
  for (const auto& [name, value] : request.settings) parameters[name] = value;
  if (!request.database.empty()) parameters["database"] = request.database;
  if (!request.query_id.empty()) parameters["query_id"] = request.query_id;
  std::string body = request.query;
  if (request.data) {
    parameters["query"] = request.query;
    body = *request.data;
  }
  std::string path = "/";
  for (const auto& [name, value] : parameters) {
    path += (path.size() == 1 ? "?" : "&") + PercentEncode(name) + "=" + PercentEncode(value);
  }

  std::unique_ptr<httplib::Client> client;
  {
    std::lock_guard<std::mutex> lock(connections_->mutex);
    const auto now = std::chrono::steady_clock::now();
    while (!connections_->idle.empty() && !client) {
      Connections::Idle last = std::move(connections_->idle.back());
      connections_->idle.pop_back();
      if (now - last.since < kReuseWithin) client = std::move(last.client);
    }
  }
  if (!client) {
    client = std::make_unique<httplib::Client>(endpoint_.host, endpoint_.port);
    client->set_connection_timeout(endpoint_.connect_timeout);
    client->set_read_timeout(endpoint_.read_timeout);
    client->set_write_timeout(endpoint_.read_timeout);
    client->set_keep_alive(true);
    client->set_tcp_nodelay(true);
  }
  httplib::Headers headers{{"X-ClickHouse-User", endpoint_.username}};
  if (!endpoint_.password.empty()) headers.emplace("X-ClickHouse-Key", endpoint_.password);
  httplib::Result result = client->Post(path, headers, body, "text/plain; charset=UTF-8");
  if (result) {
    std::lock_guard<std::mutex> lock(connections_->mutex);
    connections_->idle.push_back({std::move(client), std::chrono::steady_clock::now()});
  }

  ClickHouseResponse response;
  if (!result) {
    httplib::Error error = result.error();
    response.failure.kind = error == httplib::Error::Connection || error == httplib::Error::ConnectionTimeout ||
                                    error == httplib::Error::BindIPAddress
                                ? ClickHouseFailure::Kind::kConnect
                                : error == httplib::Error::Read ? ClickHouseFailure::Kind::kTimeout
                                                                : ClickHouseFailure::Kind::kHttp;
    response.failure.message = httplib::to_string(error);
    return response;
  }
  if (result->status == 200) {
    response.ok = true;
    response.body = std::move(result->body);
    return response;
  }
  response.failure = ParseClickHouseException(result->body);
  if (response.failure.code == 0) {
    response.failure.kind = ClickHouseFailure::Kind::kHttp;
    response.failure.message = "HTTP " + std::to_string(result->status) +
                               (result->body.empty() ? std::string() : ": " + result->body.substr(0, 500));
  }
  return response;
}

ClickHouseFailure ParseClickHouseException(const std::string& text) {
  ClickHouseFailure failure;
  failure.kind = ClickHouseFailure::Kind::kServer;
  std::string trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.pop_back();
  failure.message = trimmed;
  static const std::regex kCode(R"(^Code: (\d+)[.,] )");
  std::smatch match;
  if (!std::regex_search(trimmed, match, kCode)) return failure;
  failure.code = std::stoi(match[1].str());
  std::string message = trimmed.substr(match.length(0));
  if (message.rfind("e.displayText() = ", 0) == 0) message = message.substr(18);
  if (message.rfind("DB::Exception: ", 0) == 0) message = message.substr(15);
  // 18.x appends ", e.what() = DB::Exception"; newer servers " (NAME) (version X)".
  if (size_t what = message.rfind(", e.what() = "); what != std::string::npos) message.resize(what);
  static const std::regex kVersionTail(R"(\.? \([A-Z_]+\) \(version .*\)$)");
  message = std::regex_replace(message, kVersionTail, "");
  failure.message = message;
  static const std::regex kPosition(R"(failed at position (\d+))");
  if (std::regex_search(message, match, kPosition) && match[1].length() < 12) {
    size_t position = std::stoull(match[1].str());
    if (position > 0) failure.position = position - 1;  // ClickHouse counts from 1
  }
  return failure;
}

TabSeparatedResult ParseTabSeparatedWithNamesAndTypes(const std::string& body) {
  TabSeparatedResult result;
  std::string_view text(body);
  size_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    std::vector<std::string_view> fields = SplitTabs(line);
    if (line_number == 0) {
      for (std::string_view field : fields) result.names.push_back(Unescape(field));
    } else if (line_number == 1) {
      for (std::string_view field : fields) result.types.push_back(Unescape(field));
    } else {
      std::vector<std::optional<std::string>> row;
      for (std::string_view field : fields) {
        if (field == "\\N") {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(Unescape(field));
        }
      }
      result.rows.push_back(std::move(row));
    }
    ++line_number;
  }
  return result;
}

std::string EscapeTabSeparated(const std::optional<std::string>& value) {
  if (!value) return "\\N";
  std::string out;
  out.reserve(value->size());
  for (char c : *value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      default: out += c; break;
    }
  }
  return out;
}

}  // namespace sluice
