// One model file → a parsed model: its MODEL header checked key by key (StreamBuild §3.3 plus Sluice's
// `partitions`), its body, and its reference calls classified into a driving input and typed side refs.
// Names are not resolved here (project_loader does that against every model and source). The built-in
// `@partition_start()` / `@partition_end()` calls left by macro expansion are recorded with their spans, so
// running the model never scans its SQL again.
//
// Errors (located in the file): SLU-MODEL-001 unknown header key, -002 empty body, -003 key not allowed on
// views, -004 invalid value, -005 malformed `partitions`, -006 the file is not UTF-8 (at its first bad byte),
// -009 `@partition_start()` / `@partition_end()` in a model without `partitions` (at the call), -010 no driving
// input, -011 several driving inputs / a driving input mixed with untyped refs, -012 one upstream referenced with
// conflicting types, -013 ref_type on a view; header grammar errors SLU-HEADER-*; SQL lexical errors SLU-SQL-*.
// CheckPartitionColumn: -007 the partition column is not an output column, -008 it is not cast to DATE.
// Thread-safety: pure function.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"
#include "project/header_grammar.hpp"
#include "project/models/model_contract.hpp"
#include "sql/token.hpp"

namespace sluice {

struct ModelReference {
  sql::ReferenceCall call;  // offsets relative to the body
  EdgeType edge;
  SourceLocation at;
  bool operator==(const ModelReference&) const = default;
};

// std::filesystem::path(file).stem() of a relative file path, without building a path: a model's name.
std::string_view FileStem(std::string_view file);

struct ParsedModel {
  std::string name;  // file stem
  std::string file;  // relative path
  ModelKind kind = ModelKind::kTable;
  std::string description;
  std::optional<std::string> relation_name;
  std::optional<PartitionSpec> partitions;
  BackfillPolicy backfill_policy;  // `backfill_policy` (a Sluice addition); default single run
  StorageSpec storage;
  // The statement (SqlCompute::body): the body after macro expansion, from its first token to its last one,
  // without the trailing `;` (comments kept); body_offset is where it starts in the (expanded) file text.
  std::string body;
  size_t body_offset = 0;
  std::string expanded_text;  // the file with its body macro-expanded; empty when expansion changed nothing
                              // (the file text is then the expanded text)
  HeaderMap header;           // every header entry as written, for the caller's checks
  std::vector<ModelReference> references;  // text order; the driving input's edge is kDrivingInput
  std::vector<PartitionBoundCall> partition_bounds;  // text order; offsets relative to the body
  // The body's tokens without comments (views into expanded_text, or into the caller's file text when
  // expanded_text is empty; offsets absolute in that text): what the body contract parses.
  std::vector<sql::Token> significant_tokens;
};

// Expands the macro calls of text[body_begin, body_end) and returns the new body text. Called only for a body
// containing '@' (every macro call starts with it).
using BodyExpander = std::function<std::string(size_t body_begin, size_t body_end)>;

// References are found in the macro-expanded body; their locations are exact up to the first multi-line
// macro expansion before them.
ParsedModel ParseModelFile(const std::string& relative_file, const std::string& text, sql::Dialect dialect,
                           const BodyExpander& expand = {});

// The `partitions` column of a model ParseModelFile parsed from `text`, against its body contract's output
// columns (compared as `dialect` compares names): SLU-MODEL-007 at the header's `column` value when no output
// column has that name, SLU-MODEL-008 at the projection when its cast type is not DATE (any case). Nothing for an
// unpartitioned model.
void CheckPartitionColumn(const ParsedModel& parsed, const std::string& text, const ModelContract& contract,
                          sql::Dialect dialect);

// Fills the storage keys a table model's header leaves unset, from its output columns (StreamBuild's implicit
// `order_by ["_replay_timestamp"]` failed every model without that column, its defect §11.6):
//   order_by      kept ["_replay_timestamp"] when the model outputs that column; else the partition column of a daily
//                 model, or `tuple()` (no sorting key). An engine that merges rows of equal keys (EngineMergesRowsByKey)
//                 keeps the implicit key: its key says which rows become one, so a deployment refuses it
//                 (SLU-DEPLOY-008) until the header writes one;
//   partition_by  a daily model's partition column: one ClickHouse partition per day, each replaced on its own by
//                 `sluice run` (the shape the warehouse gives a date-range table it creates).
// Only for a ClickHouse target (`dialect`): elsewhere the keys are kept as StreamBuild's manifest has them. Views and
// explicitly written keys are left as they are.
void ApplyStorageDefaults(ParsedModel& parsed, const ModelContract& contract, sql::Dialect dialect);

// The body contract's input (model_contract.hpp) for a model ParseModelFile parsed from `text`: the file text
// (the expanded one when macros changed the body), the parse's significant tokens (the check moves from them),
// and the header's storage keys and replay anchor with their offsets. Storage keys are checked only when the
// header sets them: the implicit `order_by ["_replay_timestamp"]` would reject every model without that column
// (StreamBuild defect §11.6). Anchor eligibility is for the offsets lineage; a caller that learns the
// pipeline's lineage mode later recomputes it (HasLineageColumns).
ModelContractInput ContractInputOf(ParsedModel& parsed, const std::string& text, sql::Dialect dialect);

}  // namespace sluice
