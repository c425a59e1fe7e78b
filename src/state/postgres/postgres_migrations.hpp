// The numbered schema migrations of the PostgreSQL state store and the code that applies them.
//
// The schema changes only by appending a migration with the next number to the list in postgres_migrations.cpp; a
// released migration is never edited. Applied versions are recorded in `schema_migrations (version, name,
// applied_at)` in the database's default schema (the first of the connection's search_path).
// Thread-safety: none of its own; callers hold the connection's lock.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/postgres/pg_connection.hpp"

namespace sluice {

struct PostgresMigration {
  int version;            // 1, 2, 3 … in list order
  std::string_view name;  // what it does; recorded in schema_migrations
  std::string_view sql;   // constant DDL (never values), run as one script inside the migrating transaction
};

// Every migration, oldest first.
std::span<const PostgresMigration> PostgresMigrations();

// The advisory lock keys (pg_advisory_lock's bigint form) the store takes, all in one range so they are recognisable
// in pg_locks: 0x736c7563_65000000 ("sluce") plus a small number. Advisory locks are per database, so stores of other
// databases on the same server never contend.
inline constexpr int64_t kMigrationLockKey = 0x736c756365000001;    // transaction lock while migrating
inline constexpr int64_t kDaemonLeaseLockKey = 0x736c756365000002;  // session lock of the active daemon
inline constexpr int64_t kAssetLogLockKey = 0x736c756365000003;     // transaction lock while appending to the asset log
inline constexpr int64_t kRunClaimLockKey = 0x736c756365000004;     // transaction lock of claims checking tag limits

// In one transaction holding the migration lock (so concurrent openers of a fresh database wait for each other and
// the second applies nothing): creates `schema_migrations` when missing and applies each pending migration with its
// row (applied_at = `now`). Throws pg::PgError for a server failure, and sluice::Error SLU-STATE-001 (located at
// `redacted_url`) when the database records a version newer than this build knows.
void MigratePostgresSchema(pg::Connection& connection, const std::string& now, const std::string& redacted_url);

// The highest applied migration number; 0 when none is.
int PostgresSchemaVersion(pg::Connection& connection);

}  // namespace sluice
