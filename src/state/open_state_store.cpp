#include "state/open_state_store.hpp"

#include <regex>

#include "core/diagnostic.hpp"
#include "core/postgres/pg_connection.hpp"
#include "state/postgres/postgres_state_store.hpp"
#include "state/sqlite/sqlite_state_store.hpp"

namespace sluice {

namespace {

constexpr const char* kUrlForms =
    "use postgresql://user:password@host:port/database (or postgres://…) for PostgreSQL, or sqlite:///path/to/state.db";

// The URL as messages show it: the password of a `user:password@` part is "***" however malformed the rest is (a
// leading blank, a blank in the scheme, no scheme at all), and so is a libpq `password=` parameter.
std::string Redacted(const std::string& url) {
  std::string shown = url;
  if (const std::size_t at = shown.rfind('@'); at != std::string::npos) {
    const std::size_t scheme_end = shown.rfind("://", at);
    const std::size_t blank = shown.find_last_of(" \t", at);
    std::size_t user_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
    if (scheme_end == std::string::npos && blank != std::string::npos) user_start = blank + 1;
    const std::size_t colon = shown.find(':', user_start);
    if (colon != std::string::npos && colon < at) shown.replace(colon + 1, at - colon - 1, "***");
  }
  return pg::RedactConnectionString(shown);
}

[[noreturn]] void ThrowBadUrl(const std::string& origin, const std::string& url, const std::string& why) {
  throw Error(
      Diagnostic{"SLU-STATE-001",
                 origin + " \"" + Redacted(url) + "\" " + why,
                 {},
                 std::string(kUrlForms) +
                     (origin == kStateUrlVariable ? "; unset SLUICE_STATE_URL to use the project's setting" : ""),
                 {}});
}

StateLocation LocationOf(const std::filesystem::path& project_dir, const std::string& url, const std::string& origin) {
  static const std::regex scheme(R"(^([A-Za-z][A-Za-z0-9+.-]*)://)");
  std::smatch match;
  if (url.empty()) ThrowBadUrl(origin, url, "is empty");
  if (!std::regex_search(url, match, scheme)) ThrowBadUrl(origin, url, "is not a URL");
  const std::string name = match[1].str();
  if (name == "postgresql" || name == "postgres") {
    if (std::optional<std::string> error = pg::ConnectionStringError(url)) {
      ThrowBadUrl(origin, url, "is not a valid PostgreSQL URL: " + *error);
    }
    return StateLocation{StateLocation::Kind::kPostgres, {}, url, origin};
  }
  if (name == "sqlite") {
    std::filesystem::path file = url.substr(match.length(0));
    if (file.empty()) ThrowBadUrl(origin, url, "names no file");
    return StateLocation{StateLocation::Kind::kSqlite, file.is_absolute() ? file : project_dir / file, "", origin};
  }
  ThrowBadUrl(origin, url, "uses the unsupported scheme " + name + "://");
}

}  // namespace

StateLocation ResolveStateLocation(const std::filesystem::path& project_dir, const ConfiguredStateUrl& configured_url,
                                   const EnvironmentLookup& environment) {
  // Set but empty counts as unset, as shells make it easy to "unset" a variable that way.
  if (std::optional<std::string> url = environment(kStateUrlVariable); url && !url->empty()) {
    return LocationOf(project_dir, *url, kStateUrlVariable);
  }
  if (configured_url) {
    if (std::optional<std::string> url = configured_url()) return LocationOf(project_dir, *url, "[state] url");
  }
  return StateLocation{StateLocation::Kind::kSqlite, project_dir / ".sluice" / "state.db", "", "default"};
}

std::unique_ptr<StateStore> OpenStateStore(const StateLocation& location) {
  if (location.kind == StateLocation::Kind::kPostgres) return PostgresStateStore::Open(location.postgres_url);
  return SqliteStateStore::Open(location.sqlite_file);
}

std::unique_ptr<StateStore> OpenStateStore(const std::filesystem::path& project_dir,
                                           const ConfiguredStateUrl& configured_url) {
  return OpenStateStore(ResolveStateLocation(project_dir, configured_url, ProcessEnvironment()));
}

}  // namespace sluice
