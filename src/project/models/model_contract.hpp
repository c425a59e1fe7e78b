// The SQL body contract of one model (StreamBuild reference §3.4, the positional rules of §3.5, and §3.7),
// checked with the structural SELECT parser: what a model body may be, the typed output columns it declares,
// whether it has aggregate semantics and whether it can be a replay anchor.
//
// Checks, in this order; the first failure throws sluice::Error with one Diagnostic located in the file:
//   SLU-MODEL-101  the body is not exactly one statement (a trailing `;` is fine)
//   SLU-MODEL-102  the statement is not a SELECT (optionally WITH … SELECT; a parenthesized query is refused)
//   SLU-MODEL-103  a top-level UNION / INTERSECT / EXCEPT (allowed inside CTEs and subqueries)
//   SLU-MODEL-104  an outer `*` or `t.*`
//   SLU-MODEL-105  an outer projection that is not an explicit cast (CAST / TRY_CAST / SAFE_CAST / `::`)
//   SLU-MODEL-106  an outer cast without an alias
//   SLU-MODEL-107  two outer projections with the same alias
//   SLU-MODEL-108  PREWHERE anywhere in the statement
//   SLU-MODEL-109  a `__source(…)` / `__ref(…)` call outside a FROM/JOIN source position (in a SELECT list,
//                  WHERE, a table function argument …); as a source it may appear at any level, in CTEs and
//                  in subqueries (FROM, IN, EXISTS and scalar ones alike, as StreamBuild allows)
//   SLU-MODEL-110  a raw physical relation: a FROM/JOIN source, at any level, that is neither a reference call,
//                  a CTE visible at that point, a subquery nor a table function
//   SLU-MODEL-111  an order_by / partition_by / ttl expression naming a column that is not an output column
//   SLU-MODEL-112  an order_by / partition_by / ttl expression that cannot be read (unterminated string,
//                  unbalanced brackets, empty)
// Syntax the parser cannot understand is reported by it (SLU-SQL-001, SLU-SQL-101…107).
//
// Details:
// - Output column types are the cast types exactly as authored (`DateTime64(3)`, `DECIMAL(12, 2)`).
// - Names are compared exactly in ClickHouse and ASCII case-insensitively in the other dialects (duplicate
//   aliases, storage expression columns, lineage columns).
// - Storage expressions are tokenized, not parsed: a bare or quoted identifier counts as a column unless it
//   is a function name (followed by `(`), a qualifier (followed by `.`; for `t.c` only `c` is checked), a
//   typed-literal prefix (`DATE '…'`), a lambda parameter (`x -> …`), a cast type, or a keyword such as
//   INTERVAL, DAY, DELETE, TO DISK, GROUP BY, SET, WHERE, ASC.
// - Aggregate semantics (as StreamBuild): a GROUP BY or an aggregate call anywhere in the statement (CTEs and
//   subqueries included; window functions such as row_number count, see sql::IsAggregateFunction), or an
//   engine whose name, without a `Replicated` prefix, is SummingMergeTree or AggregatingMergeTree.
// - Anchor eligibility (§3.7): a table model, replay_anchor auto, no mutable refs, no aggregate semantics,
//   and the lineage mode's columns among the outputs. Views are never anchors.
// - Storage keys are taken as given: the caller applies StreamBuild's default order_by ["_replay_timestamp"]
//   (or not) before calling.
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "definitions/definitions.hpp"
#include "sql/token.hpp"

namespace sluice {

enum class ReplayAnchor { kAuto, kNever };

// The pipeline's replay lineage mode (the driving source's replay_boundary.mode).
enum class LineageMode { kOffsets, kTimestamp, kLandedAt, kCursor };

// "offsets", "timestamp", "landed_at", "cursor" → the mode; anything else → nullopt.
std::optional<LineageMode> LineageModeNamed(std::string_view name);

// The output columns a mode requires of an anchor: offsets → _replay_partition, _replay_offset;
// timestamp → _replay_timestamp; landed_at → _replay_landed_at; cursor → _replay_cursor. (Static storage: the
// contract asks this of every model several times.)
std::span<const std::string_view> LineageColumns(LineageMode mode);

// One storage key value from the MODEL header, with where it is written (for locating errors).
struct StorageKeyText {
  std::string_view text;  // the decoded value, e.g. toYYYYMM(event_at) (viewed in the caller's header or spec)
  size_t offset = 0;      // byte offset in the file of the header value (its opening quote); for a value the
                          // header does not write (a default), any offset the caller wants errors to point at
};

struct ModelContractInput {
  std::string_view file_text;  // the model file as read; [0, body_offset) (the header) is blanked before parsing,
                               // so offsets and line:col stay absolute. Passing it already blanked also works.
  // Optional: the tokens of file_text with its header blanked (Tokenize, kComment tokens removed), when the
  // caller already has them; they are moved from. Their text views must stay valid during the call.
  std::vector<sql::Token>* significant_tokens = nullptr;
  size_t body_offset = 0;  // where the SQL body starts (just after the header's `;`)
  std::string file;        // the file name used in diagnostics (relative path)
  sql::Dialect dialect = sql::Dialect::kClickHouse;
  ModelKind kind = ModelKind::kTable;
  StorageKeyText engine{"MergeTree()", 0};
  std::vector<StorageKeyText> order_by;
  std::optional<StorageKeyText> partition_by;
  std::optional<StorageKeyText> ttl;
  ReplayAnchor replay_anchor = ReplayAnchor::kAuto;
  bool has_mutable_refs = false;  // any __ref(…, ref_type='mutable')
  LineageMode lineage = LineageMode::kOffsets;
};

struct OutputColumn {
  std::string name;       // the projection's alias, decoded
  std::string type_text;  // the cast type as authored
  size_t offset = 0;      // file offset of the projection item
};

struct ModelContract {
  std::vector<OutputColumn> columns;  // in projection order
  bool aggregate = false;
  bool anchor_candidate = false;  // table, replay_anchor auto, no mutable refs, no aggregate semantics
  bool anchor_eligible = false;   // anchor_candidate and the input's lineage columns among the outputs
};

// True when the lineage mode's columns (LineageColumns) are among the contract's output columns, compared as
// the dialect compares names. Lets a caller that learns the lineage mode later recompute anchor_eligible.
bool HasLineageColumns(const ModelContract& contract, LineageMode lineage, sql::Dialect dialect);

// A set of lineage modes as bits: 1 << mode.
inline unsigned LineageModeBit(LineageMode mode) { return 1u << static_cast<unsigned>(mode); }

// The lineage modes (LineageModeBit) whose columns are among the contract's output columns.
unsigned LineageModesOf(const ModelContract& contract, sql::Dialect dialect);

// The output columns as an asset holds them (name and cast type as authored), in one allocation of each part.
ModelColumns ModelColumnsOf(const std::vector<OutputColumn>& columns);

// Checks the body of one model against the contract and returns what it declares; throws sluice::Error
// (codes above, or the parser's SLU-SQL-*) on the first violation.
ModelContract CheckModelContract(const ModelContractInput& input);

}  // namespace sluice
