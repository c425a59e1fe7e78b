// Reading a FROM/JOIN source's columns by other names, by renaming their references instead of wrapping the source
// in a subquery that renames its columns: a ClickHouse materialized view must read its table itself (a view over a
// subquery reads no inserts), so a model over an adopted table that keeps its replay roles in columns of other names
// (`_replay_offset` in `ofs`) reads `ofs` where it writes `_replay_offset`.
//
// In the SELECT block whose FROM/JOIN holds the source (not in its subqueries, CTEs or other blocks, which see the
// block's own output names), a bare word or quoted identifier naming a canonical column is renamed to its physical
// column when it is
//   - unqualified, or qualified by the source's alias (`c._replay_offset` → `c.ofs`),
// and is not a function name, a qualifier, an alias being defined (`… AS _replay_offset`, or a projection's bare
// trailing alias), nor qualified by another name. A `*` (or `alias.*`) of that block gets the canonical names added
// after it (`*, ofs AS _replay_offset`), so the blocks reading it see the canonical names too.
// Names compare as the dialect compares column names. A physical name that is not a plain identifier is quoted.
// Thread-safety: pure function.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sql/reference_scanner.hpp"
#include "sql/token.hpp"

namespace sluice::sql {

// The replacements (in text order, zero-length ones inserting text) that make `text` read the source written at
// byte `source_begin` (a table, a call such as `__source(…)`, as ParseSelect reports its span) by the physical names
// of `physical_of` (canonical name → physical name; equal names are left alone). Empty when no block reads such a
// source. Errors: the parser's SLU-SQL-* for text that does not parse (located in `file`).
std::vector<SpanReplacement> RenameSourceColumns(std::string_view text, Dialect dialect, size_t source_begin,
                                                 const std::map<std::string, std::string>& physical_of,
                                                 const std::string& file = {});

}  // namespace sluice::sql
