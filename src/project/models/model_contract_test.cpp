#include "project/models/model_contract.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>

#include "core/diagnostic.hpp"
#include "sql/select_parser.hpp"

namespace sluice {
namespace {

constexpr const char* kFile = "pipelines/orders/m.sql";

// A model file: a MODEL header (its lines as given, so tests can count lines) and a body.
struct ModelFile {
  std::string text;
  ModelContractInput input;

  ModelFile(const std::string& header_keys, const std::string& body, sql::Dialect dialect = sql::Dialect::kClickHouse)
      : text("MODEL (\n" + header_keys + ");\n\n" + body) {
    input.file_text = text;
    input.body_offset = text.find(");\n") + 2;
    input.file = kFile;
    input.dialect = dialect;
  }

  // The storage key whose value is written in the header as "value".
  StorageKeyText Key(std::string_view value) const {  // a literal: the key views it
    size_t at = text.find("\"" + std::string(value) + "\"");
    EXPECT_NE(at, std::string::npos) << value;
    return StorageKeyText{value, at};
  }

  ModelContract Check() const { return CheckModelContract(input); }

  Diagnostic Error() const {
    try {
      CheckModelContract(input);
    } catch (const sluice::Error& error) {
      return error.diagnostics().front();
    }
    return Diagnostic{"no error", {}, {}, {}, {}};
  }

  void ExpectError(const std::string& code, int line, int column) const {
    Diagnostic d = Error();
    EXPECT_EQ(d.code, code) << text << "\n" << d.message;
    EXPECT_EQ(d.location.file, kFile);
    EXPECT_EQ(d.location.line, line) << text << "\n" << d.message;
    EXPECT_EQ(d.location.column, column) << text << "\n" << d.message;
    EXPECT_FALSE(d.hint.empty()) << d.message;
    EXPECT_FALSE(d.source_line.empty()) << d.message;
  }
};

// Header lines 1–2 and `);` on line 3, a blank line 4: bodies start on line 5.
const std::string kHeader = "  kind table,\n";

// ---- accepted bodies and their outputs ----

TEST(CheckModelContract, ReturnsTheTypedOutputColumnsAsAuthored) {
  ModelFile model(kHeader,
                  "SELECT\n"
                  "  CAST(kafka_timestamp AS DateTime64(3)) AS event_at,\n"
                  "  CAST(JSONExtractString(kafka_value, 'name') AS Nullable(String)) AS name,\n"
                  "  CAST(amount AS Decimal(12, 2)) AS amount,\n"
                  "  _replay_partition::Int32 AS _replay_partition,\n"
                  "  (_replay_offset)::Int64 _replay_offset\n"
                  "FROM __source('events')\n");
  ModelContract contract = model.Check();
  ASSERT_EQ(contract.columns.size(), 5u);
  EXPECT_EQ(contract.columns[0].name, "event_at");
  EXPECT_EQ(contract.columns[0].type_text, "DateTime64(3)");
  EXPECT_EQ(contract.columns[0].offset, model.text.find("CAST(kafka_timestamp"));
  EXPECT_EQ(contract.columns[1].type_text, "Nullable(String)");
  EXPECT_EQ(contract.columns[2].type_text, "Decimal(12, 2)");
  EXPECT_EQ(contract.columns[3].type_text, "Int32");
  EXPECT_EQ(contract.columns[4].name, "_replay_offset");
  EXPECT_EQ(contract.columns[4].type_text, "Int64");
  EXPECT_FALSE(contract.aggregate);
  EXPECT_TRUE(contract.anchor_eligible);  // offsets lineage columns are outputs
}

TEST(CheckModelContract, AcceptsEveryCastFormInEveryDialect) {
  ModelFile duck(kHeader,
                 "SELECT x::DECIMAL(12,2) AS x, TRY_CAST(y AS INTEGER) AS y, CAST(z AS VARCHAR) z\n"
                 "FROM __ref('up')",
                 sql::Dialect::kDuckDb);
  ModelContract contract = duck.Check();
  ASSERT_EQ(contract.columns.size(), 3u);
  EXPECT_EQ(contract.columns[0].type_text, "DECIMAL(12,2)");
  EXPECT_EQ(contract.columns[1].type_text, "INTEGER");
  EXPECT_EQ(contract.columns[2].name, "z");
  ModelFile bq(kHeader, "SELECT SAFE_CAST(x AS INT64) AS x FROM __ref('up')", sql::Dialect::kBigQuery);
  EXPECT_EQ(bq.Check().columns.at(0).type_text, "INT64");
  ModelFile pg(kHeader, "SELECT x::timestamp with time zone AS x FROM __ref('up')", sql::Dialect::kPostgres);
  EXPECT_EQ(pg.Check().columns.at(0).type_text, "timestamp with time zone");
  ModelFile ch(kHeader, "SELECT CAST(x, 'UInt8') AS x FROM __ref('up')");
  EXPECT_EQ(ch.Check().columns.at(0).type_text, "UInt8");
}

TEST(CheckModelContract, AcceptsTheExampleProjectModels) {
  ModelFile view("  kind view,\n",
                 "SELECT\n  CAST(region AS VARCHAR) AS region,\n  CAST(sum(revenue) AS DECIMAL(18, 2)) AS revenue\n"
                 "FROM __ref(\"daily_revenue\")\nGROUP BY region\n",
                 sql::Dialect::kDuckDb);
  view.input.kind = ModelKind::kView;
  ModelContract v = view.Check();
  EXPECT_TRUE(v.aggregate);
  EXPECT_FALSE(v.anchor_eligible);
  ModelFile joined(kHeader,
                   "SELECT\n  CAST(o.order_id AS BIGINT) AS order_id,\n"
                   "  CAST(coalesce(c.region, 'UNKNOWN') AS VARCHAR) AS region\n"
                   "FROM __ref(\"stg_orders\") AS o\n"
                   "LEFT JOIN __ref(\"dim_customers\", ref_type='reference') AS c\n  ON c.customer_id = o.customer_id\n"
                   "WHERE o.status <> 'cancelled'\n"
                   "  AND o.order_date >= @partition_start() AND o.order_date < @partition_end();\n",
                   sql::Dialect::kDuckDb);
  ModelContract j = joined.Check();
  EXPECT_EQ(j.columns.size(), 2u);
  EXPECT_FALSE(j.aggregate);
  EXPECT_FALSE(j.anchor_eligible);  // no lineage columns
}

TEST(CheckModelContract, ReferencesMayBeSourcesAtAnyLevel) {
  ModelFile model(kHeader,
                  "WITH base AS (\n"
                  "  WITH inner_base AS (SELECT * FROM __source('events'))\n"
                  "  SELECT * FROM inner_base),\n"
                  "  unioned AS (SELECT * FROM base UNION ALL SELECT * FROM __ref('late', ref_type='reference'))\n"
                  "SELECT CAST(b.id AS UInt64) AS id,\n"
                  "       CAST((SELECT max(v) FROM __ref('dim', ref_type='reference')) AS UInt64) AS top\n"
                  "FROM unioned AS b\n"
                  "JOIN (SELECT id FROM __ref('ids', ref_type='reference')) AS i ON i.id = b.id\n"
                  "CROSS JOIN numbers(3) AS n\n"
                  "WHERE b.id IN (SELECT id FROM __ref('allow', ref_type='reference'))\n");
  ModelContract contract = model.Check();
  EXPECT_EQ(contract.columns.size(), 2u);
  EXPECT_TRUE(contract.aggregate);  // max() in the scalar subquery counts, as in StreamBuild
}

// ---- shape ----

TEST(CheckModelContract, RejectsSeveralStatements) {
  ModelFile model(kHeader, "SELECT CAST(a AS Int8) AS a FROM __ref('x');\nSELECT 2;\n");
  model.ExpectError("SLU-MODEL-101", 6, 1);
  ModelFile trailing(kHeader, "SELECT CAST(a AS Int8) AS a FROM __ref('x');\n;\n-- done\n");
  EXPECT_EQ(trailing.Check().columns.size(), 1u);
}

TEST(CheckModelContract, RejectsABodyWithoutStatement) {
  ModelFile model(kHeader, "-- nothing here\n;\n");
  model.ExpectError("SLU-MODEL-101", 3, 3);  // at the body's start, right after the header's `;`
}

TEST(CheckModelContract, RejectsStatementsThatAreNotSelect) {
  ModelFile insert(kHeader, "INSERT INTO t SELECT 1");
  insert.ExpectError("SLU-MODEL-102", 5, 1);
  ModelFile bracketed(kHeader, "\n  (SELECT CAST(a AS Int8) AS a FROM __ref('x'))");
  bracketed.ExpectError("SLU-MODEL-102", 6, 3);
}

TEST(CheckModelContract, RejectsTopLevelSetOperations) {
  ModelFile model(
      kHeader, "SELECT CAST(a AS Int8) AS a FROM __ref('x')\nUNION ALL\nSELECT CAST(a AS Int8) AS a FROM __ref('y')");
  model.ExpectError("SLU-MODEL-103", 6, 1);
  ModelFile intersect(kHeader, "SELECT CAST(a AS Int8) AS a FROM __ref('x') INTERSECT SELECT 1");
  intersect.ExpectError("SLU-MODEL-103", 5, 45);
}

// ---- projections ----

TEST(CheckModelContract, RejectsOuterStars) {
  ModelFile star(kHeader, "SELECT CAST(a AS Int8) AS a,\n       * FROM __ref('x')");
  star.ExpectError("SLU-MODEL-104", 6, 8);
  ModelFile qualified(kHeader, "SELECT x.* FROM __ref('x') AS x");
  qualified.ExpectError("SLU-MODEL-104", 5, 8);
  ModelFile inner(kHeader, "SELECT CAST(a AS Int8) AS a FROM (SELECT * FROM __ref('x'))");
  EXPECT_EQ(inner.Check().columns.size(), 1u);  // `*` in a subquery is fine
}

TEST(CheckModelContract, RejectsProjectionsThatAreNotExplicitCasts) {
  for (const char* item : {"a AS a", "toInt32(a) AS a", "a + b::Int32 AS a", "CAST(a AS Int32) + 1 AS a",
                           "-a::Int32 AS a", "sum(a) AS a"}) {
    ModelFile model(kHeader, std::string("SELECT CAST(k AS Int8) AS k,\n  ") + item + "\nFROM __ref('x')");
    model.ExpectError("SLU-MODEL-105", 6, 3);
  }
}

TEST(CheckModelContract, RejectsCastsWithoutAlias) {
  ModelFile model(kHeader, "SELECT CAST(k AS Int8) AS k, CAST(v AS String)\nFROM __ref('x')");
  model.ExpectError("SLU-MODEL-106", 5, 30);
  ModelFile colon(kHeader, "SELECT v::String FROM __ref('x')");
  colon.ExpectError("SLU-MODEL-106", 5, 8);
}

TEST(CheckModelContract, RejectsDuplicateAliases) {
  ModelFile model(kHeader, "SELECT CAST(a AS Int8) AS a,\n  CAST(b AS Int8) AS a\nFROM __ref('x')");
  model.ExpectError("SLU-MODEL-107", 6, 22);
  EXPECT_NE(model.Error().message.find("first at line 5, column 27"), std::string::npos) << model.Error().message;
  ModelFile folded(kHeader, "SELECT CAST(a AS INT) AS a, CAST(b AS INT) AS \"A\" FROM __ref('x')",
                   sql::Dialect::kDuckDb);
  folded.ExpectError("SLU-MODEL-107", 5, 47);
  ModelFile exact(kHeader, "SELECT CAST(a AS Int8) AS a, CAST(b AS Int8) AS A FROM __ref('x')");
  EXPECT_EQ(exact.Check().columns.size(), 2u);  // ClickHouse names are case-sensitive
}

// Items are judged in order: the earliest failing item decides, whether it repeats an alias or lacks a cast
// or an alias; with several repeated names the earliest repetition is reported, pointing at its first use.
TEST(CheckModelContract, ReportsTheEarliestFailingProjectionItem) {
  ModelFile repeat_first(kHeader, "SELECT CAST(a AS Int8) AS a,\n  CAST(b AS Int8) AS a,\n  c AS c\nFROM __ref('x')");
  repeat_first.ExpectError("SLU-MODEL-107", 6, 22);
  ModelFile cast_first(kHeader, "SELECT CAST(a AS Int8) AS a,\n  c AS c,\n  CAST(b AS Int8) AS a\nFROM __ref('x')");
  cast_first.ExpectError("SLU-MODEL-105", 6, 3);
  ModelFile alias_first(kHeader,
                        "SELECT CAST(a AS Int8) AS a,\n  CAST(c AS Int8),\n  CAST(b AS Int8) AS a\nFROM __ref('x')");
  alias_first.ExpectError("SLU-MODEL-106", 6, 3);
  ModelFile two(kHeader,
                "SELECT CAST(z AS Int8) AS z, CAST(a AS Int8) AS a,\n  CAST(b AS Int8) AS a,\n"
                "  CAST(y AS Int8) AS z,\n  CAST(c AS Int8) AS a\nFROM __ref('x')");
  two.ExpectError("SLU-MODEL-107", 6, 22);  // `a` repeats before `z` does, though `z` sorts after it
  EXPECT_NE(two.Error().message.find("`a` is defined twice (first at line 5, column 49)"), std::string::npos)
      << two.Error().message;
  ModelFile later(kHeader,
                  "SELECT CAST(b AS Int8) AS b, CAST(a AS Int8) AS a,\n  CAST(c AS Int8) AS b,\n"
                  "  CAST(d AS Int8) AS a\nFROM __ref('x')");
  later.ExpectError("SLU-MODEL-107", 6, 22);  // `b`, first written first, repeats first
  EXPECT_NE(later.Error().message.find("`b` is defined twice (first at line 5, column 27)"), std::string::npos)
      << later.Error().message;
}

// ---- PREWHERE, references, relations ----

TEST(CheckModelContract, RejectsPrewhereAnywhere) {
  ModelFile outer(kHeader, "SELECT CAST(a AS Int8) AS a FROM __ref('x') FINAL\nPREWHERE a > 0 WHERE 1");
  outer.ExpectError("SLU-MODEL-108", 6, 1);
  ModelFile nested(kHeader,
                   "WITH c AS (SELECT a FROM __ref('x')\n  PREWHERE a > 0)\nSELECT CAST(a AS Int8) AS a FROM c");
  nested.ExpectError("SLU-MODEL-108", 6, 3);
}

TEST(CheckModelContract, RejectsReferenceCallsOutsideSourcePositions) {
  ModelFile in_select(kHeader, "SELECT CAST(__ref('y') AS Int8) AS a FROM __ref('x')");
  in_select.ExpectError("SLU-MODEL-109", 5, 13);
  ModelFile in_where(kHeader, "SELECT CAST(a AS Int8) AS a FROM __ref('x')\nWHERE a = __source('s')");
  in_where.ExpectError("SLU-MODEL-109", 6, 11);
  ModelFile in_function(kHeader, "SELECT CAST(a AS Int8) AS a FROM numbers(__ref('n'))");
  in_function.ExpectError("SLU-MODEL-109", 5, 42);
  ModelFile in_cte_where(
      kHeader, "WITH c AS (SELECT a FROM __ref('x') WHERE a IN __ref('y'))\nSELECT CAST(a AS Int8) AS a FROM c");
  in_cte_where.ExpectError("SLU-MODEL-109", 5, 48);
}

TEST(CheckModelContract, RejectsRawPhysicalRelations) {
  ModelFile from(kHeader, "SELECT CAST(a AS Int8) AS a\nFROM events");
  from.ExpectError("SLU-MODEL-110", 6, 6);
  EXPECT_NE(from.Error().hint.find("__ref(\"events\")"), std::string::npos);
  ModelFile join(kHeader, "SELECT CAST(a AS Int8) AS a FROM __ref('x') AS x\nJOIN db.dim AS d ON d.a = x.a");
  join.ExpectError("SLU-MODEL-110", 6, 6);
  ModelFile in_cte(kHeader, "WITH c AS (SELECT a FROM raw_table)\nSELECT CAST(a AS Int8) AS a FROM c");
  in_cte.ExpectError("SLU-MODEL-110", 5, 26);
  ModelFile in_where(kHeader, "SELECT CAST(a AS Int8) AS a FROM __ref('x')\nWHERE a IN (SELECT a FROM blocked)");
  in_where.ExpectError("SLU-MODEL-110", 6, 27);
  ModelFile scoped(
      kHeader,
      "WITH c AS (WITH d AS (SELECT 1 AS a) SELECT a FROM d)\nSELECT CAST(a AS Int8) AS a FROM c JOIN d USING (a)");
  scoped.ExpectError("SLU-MODEL-110", 6, 41);  // d is visible only inside c
}

// ---- storage expressions ----

TEST(CheckModelContract, StorageExpressionsMayUseOutputColumns) {
  ModelFile model(
      "  order_by [\"event_date\", \"cityHash64(`user id`)\", \"e.event_at\"],\n"
      "  partition_by \"toYYYYMM(event_at)\",\n"
      "  ttl \"event_at + INTERVAL 30 DAY DELETE WHERE status = 'gone', event_at + toIntervalDay(7) TO DISK "
      "'cold'\",\n",
      "SELECT CAST(event_at AS DateTime) AS event_at, CAST(event_at AS Date) AS event_date,\n"
      "  CAST(u AS String) AS `user id`, CAST(s AS String) AS status FROM __ref('x')");
  model.input.order_by = {model.Key("event_date"), model.Key("cityHash64(`user id`)"), model.Key("e.event_at")};
  model.input.partition_by = model.Key("toYYYYMM(event_at)");
  model.input.ttl =
      model.Key("event_at + INTERVAL 30 DAY DELETE WHERE status = 'gone', event_at + toIntervalDay(7) TO DISK 'cold'");
  EXPECT_EQ(model.Check().columns.size(), 4u);
}

TEST(CheckModelContract, StorageExpressionsIgnoreFunctionsLiteralsLambdasAndCastTypes) {
  ModelFile model("  partition_by \"x\",\n",
                  "SELECT CAST(a AS Array(Int32)) AS arr, CAST(d AS Date) AS d FROM __ref('x')");
  for (const char* expression :
       {"arrayMap(x -> x + 1, arr)", "arrayFilter((p, q) -> p > q, arr, arr)", "CAST(d AS DateTime)", "d::DateTime",
        "d > DATE '2026-01-01'", "if(d IS NULL, 0, 1)", "tuple()", "toStartOfInterval(d, INTERVAL 1 MONTH)",
        "TRY_CAST(d AS DateTime)", "d::timestamp with time zone"}) {
    model.input.partition_by = StorageKeyText{expression, model.text.find("\"x\"")};
    EXPECT_EQ(model.Error().code, "no error") << expression << ": " << model.Error().message;
  }
}

TEST(CheckModelContract, RejectsStorageExpressionsNamingOtherColumns) {
  ModelFile model("  order_by [\"event_at\"],\n  partition_by \"toYYYYMM(created_at)\",\n",
                  "SELECT CAST(ts AS DateTime) AS event_at FROM __ref('x')");
  model.input.order_by = {model.Key("event_at")};
  model.input.partition_by = model.Key("toYYYYMM(created_at)");
  model.ExpectError("SLU-MODEL-111", 3, 26);  // at created_at inside the header string
  EXPECT_NE(model.Error().hint.find("event_at"), std::string::npos);
}

TEST(CheckModelContract, DefaultOrderByNeedsTheReplayTimestamp) {
  ModelFile model(kHeader, "SELECT CAST(ts AS DateTime) AS event_at FROM __ref('x')");
  model.input.order_by = {StorageKeyText{"_replay_timestamp", 0}};  // the caller's default, pointed at MODEL
  model.ExpectError("SLU-MODEL-111", 1, 1);
  EXPECT_NE(model.Error().hint.find("defaults to"), std::string::npos) << model.Error().hint;
}

TEST(CheckModelContract, StorageExpressionsWrittenWithEscapesAreLocatedAtTheValue) {
  ModelFile model("  ttl \"a + \\\"b\\\"\",\n", "SELECT CAST(x AS Date) AS a FROM __ref('x')", sql::Dialect::kDuckDb);
  model.input.ttl = StorageKeyText{"a + \"b\"", model.text.find("\"a + ")};
  model.ExpectError("SLU-MODEL-111", 2, 7);
}

TEST(CheckModelContract, RejectsUnreadableStorageExpressions) {
  ModelFile unbalanced("  partition_by \"toYYYYMM(x\",\n", "SELECT CAST(x AS Date) AS x FROM __ref('x')");
  unbalanced.input.partition_by = unbalanced.Key("toYYYYMM(x");
  unbalanced.ExpectError("SLU-MODEL-112", 2, 25);  // at the unclosed `(`
  ModelFile model("  partition_by \"x\",\n", "SELECT CAST(x AS Date) AS x FROM __ref('x')");
  size_t at = model.text.find("\"x\"");
  model.input.partition_by = StorageKeyText{"x = 'open", at};
  model.ExpectError("SLU-MODEL-112", 2, 16);
  model.input.partition_by = StorageKeyText{"-- nothing", at};
  model.ExpectError("SLU-MODEL-112", 2, 16);
  model.input.partition_by = StorageKeyText{"x)", at};
  model.ExpectError("SLU-MODEL-112", 2, 16);
}

// ---- aggregate semantics and anchors ----

struct AnchorCase {
  std::string body;
  std::string engine = "MergeTree()";
  bool aggregate;
};

TEST(CheckModelContract, AggregateSemantics) {
  const std::string lineage = "CAST(p AS Int32) AS _replay_partition, CAST(o AS Int64) AS _replay_offset";
  const AnchorCase cases[] = {
      {"SELECT " + lineage + " FROM __source('s')", "MergeTree()", false},
      {"SELECT " + lineage + " FROM __source('s') GROUP BY p, o", "MergeTree()", true},
      {"SELECT " + lineage + ", CAST(sumIf(v, v > 0) AS Int64) AS s FROM __source('s')", "MergeTree()", true},
      {"SELECT " + lineage + ", CAST(uniqMerge(u) AS UInt64) AS u FROM __source('s')", "MergeTree()", true},
      {"SELECT " + lineage + ", CAST(countState() AS AggregateFunction(count)) AS c FROM __source('s')", "MergeTree()",
       true},
      {"WITH c AS (SELECT p, o FROM __source('s') GROUP BY p, o) SELECT " + lineage + " FROM c", "MergeTree()", true},
      {"SELECT " + lineage + " FROM __source('s')", "SummingMergeTree()", true},
      {"SELECT " + lineage + " FROM __source('s')", "ReplicatedAggregatingMergeTree('/t/{shard}', '{replica}')", true},
      {"SELECT " + lineage + " FROM __source('s')", " AggregatingMergeTree ", true},
      {"SELECT " + lineage + " FROM __source('s')", "ReplacingMergeTree(v)", false},
  };
  for (const AnchorCase& c : cases) {
    ModelFile model(kHeader, c.body);
    model.input.engine = StorageKeyText{c.engine, 0};
    ModelContract contract = model.Check();
    EXPECT_EQ(contract.aggregate, c.aggregate) << c.body << " / " << c.engine;
    EXPECT_EQ(contract.anchor_eligible, !c.aggregate) << c.body << " / " << c.engine;
  }
}

TEST(CheckModelContract, AnchorEligibilityNeedsTheLineageColumnsOfTheMode) {
  struct Case {
    LineageMode mode;
    std::string columns;
    bool eligible;
  };
  const Case cases[] = {
      {LineageMode::kOffsets, "CAST(p AS Int32) AS _replay_partition, CAST(o AS Int64) AS _replay_offset", true},
      {LineageMode::kOffsets, "CAST(o AS Int64) AS _replay_offset", false},
      {LineageMode::kTimestamp, "CAST(t AS DateTime64(3)) AS _replay_timestamp", true},
      {LineageMode::kTimestamp, "CAST(o AS Int64) AS _replay_offset", false},
      {LineageMode::kLandedAt, "CAST(t AS DateTime64(3)) AS _replay_landed_at", true},
      {LineageMode::kLandedAt, "CAST(t AS DateTime64(3)) AS _replay_timestamp", false},
      {LineageMode::kCursor, "CAST(c AS UInt64) AS _replay_cursor", true},
      {LineageMode::kCursor, "CAST(c AS UInt64) AS cursor", false},
  };
  for (const Case& c : cases) {
    ModelFile model(kHeader, "SELECT " + c.columns + " FROM __source('s')");
    model.input.lineage = c.mode;
    EXPECT_EQ(model.Check().anchor_eligible, c.eligible) << c.columns;
  }
  const std::string timestamp = "SELECT CAST(t AS DateTime64(3)) AS _replay_timestamp FROM __source('s')";
  ModelFile never(kHeader, timestamp);
  never.input.lineage = LineageMode::kTimestamp;
  never.input.replay_anchor = ReplayAnchor::kNever;
  EXPECT_FALSE(never.Check().anchor_eligible);
  ModelFile mutable_refs(kHeader, timestamp);
  mutable_refs.input.lineage = LineageMode::kTimestamp;
  mutable_refs.input.has_mutable_refs = true;
  EXPECT_FALSE(mutable_refs.Check().anchor_eligible);
  ModelFile view("  kind view,\n", timestamp);
  view.input.lineage = LineageMode::kTimestamp;
  view.input.kind = ModelKind::kView;
  EXPECT_FALSE(view.Check().anchor_eligible);
  ModelFile folded(kHeader, "SELECT CAST(t AS TIMESTAMP) AS _REPLAY_TIMESTAMP FROM __source('s')",
                   sql::Dialect::kDuckDb);
  folded.input.lineage = LineageMode::kTimestamp;
  EXPECT_TRUE(folded.Check().anchor_eligible);
}

// LineageModesOf (one pass over the outputs) and HasLineageColumns give the modes whose columns are all among the
// outputs, whatever the columns, their case and the dialect.
TEST(LineageMode, ModesOfAContractAreTheModesWhoseColumnsItHas) {
  const std::vector<std::string> names = {"_replay_partition", "_replay_offset", "_replay_timestamp", "_REPLAY_OFFSET",
                                          "_replay_landed_at", "_replay_cursor", "_Replay_Partition", "id",
                                          "_replay_",          "replay_offset"};
  std::mt19937 random(20261204);
  size_t some_mode = 0;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    ModelContract contract;
    for (int k = static_cast<int>(random() % 5); k > 0; --k) {
      contract.columns.push_back(OutputColumn{names[random() % names.size()], "Int64", 0});
    }
    for (sql::Dialect dialect : {sql::Dialect::kClickHouse, sql::Dialect::kDuckDb}) {
      // Every column of the mode among the outputs, compared as the dialect compares names.
      auto same = [dialect](std::string name, std::string_view column) {
        if (dialect != sql::Dialect::kClickHouse) {
          for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        return name == column;
      };
      unsigned expected = 0;
      for (LineageMode mode :
           {LineageMode::kOffsets, LineageMode::kTimestamp, LineageMode::kLandedAt, LineageMode::kCursor}) {
        bool all = true;
        for (std::string_view column : LineageColumns(mode)) {
          all = all && std::any_of(contract.columns.begin(), contract.columns.end(),
                                   [&](const OutputColumn& output) { return same(output.name, column); });
        }
        if (all) expected |= LineageModeBit(mode);
        ASSERT_EQ(HasLineageColumns(contract, mode, dialect), all);
      }
      ASSERT_EQ(LineageModesOf(contract, dialect), expected);
      some_mode += expected != 0;
    }
  }
  EXPECT_GT(some_mode, 200u);
}

// The contract's columns become the asset's, names and types in order, empty parts included.
TEST(ModelColumnsOf, KeepsNamesAndTypesInOrder) {
  std::vector<OutputColumn> columns = {
      {"id", "UInt64", 0}, {"", "String", 0}, {"event_at", "", 0}, {"c0", "Nullable(DateTime64(3))", 0}};
  EXPECT_EQ(ModelColumnsOf(columns),
            (ModelColumns{{"id", "UInt64"}, {"", "String"}, {"event_at", ""}, {"c0", "Nullable(DateTime64(3))"}}));
  EXPECT_TRUE(ModelColumnsOf({}).empty());
}

TEST(LineageMode, NamesAndColumns) {
  EXPECT_EQ(LineageModeNamed("offsets"), LineageMode::kOffsets);
  EXPECT_EQ(LineageModeNamed("timestamp"), LineageMode::kTimestamp);
  EXPECT_EQ(LineageModeNamed("landed_at"), LineageMode::kLandedAt);
  EXPECT_EQ(LineageModeNamed("cursor"), LineageMode::kCursor);
  EXPECT_FALSE(LineageModeNamed("Offsets"));
  auto columns = [](LineageMode mode) {
    std::span<const std::string_view> span = LineageColumns(mode);
    return std::vector<std::string_view>(span.begin(), span.end());
  };
  EXPECT_EQ(columns(LineageMode::kOffsets), (std::vector<std::string_view>{"_replay_partition", "_replay_offset"}));
  EXPECT_EQ(columns(LineageMode::kCursor), (std::vector<std::string_view>{"_replay_cursor"}));
}

// ---- locations and robustness ----

TEST(CheckModelContract, ParserErrorsAreLocatedInTheFile) {
  ModelFile model(kHeader, "SELECT CAST(a AS Int8) AS a\nFROM __ref('x')\nWHERE");
  model.ExpectError("SLU-SQL-104", 7, 6);
  ModelFile deep(kHeader, "SELECT " + std::string(10000, '(') + "1" + std::string(10000, ')') + " AS x");
  deep.ExpectError("SLU-SQL-102", 5, 8 + static_cast<int>(sql::kMaxSelectNesting));
}

TEST(CheckModelContract, TheHeaderIsNotReadAsSql) {
  ModelFile model("  description \"SELECT * FROM raw UNION ALL x; y\",\n  kind table,\n",
                  "SELECT CAST(a AS Int8) AS a FROM __ref('x')");
  EXPECT_EQ(model.Check().columns.size(), 1u);
  std::string blanked = model.text;
  for (size_t i = 0; i < model.input.body_offset; ++i) {
    if (blanked[i] != '\n') blanked[i] = ' ';
  }
  model.input.file_text = blanked;  // a caller may pass the header already blanked
  EXPECT_EQ(model.Check().columns.size(), 1u);
}

TEST(CheckModelContract, RandomBodiesGiveAContractOrASluiceError) {
  const char* pieces[] = {"SELECT ", "CAST(",   "a",          " AS ",        "Int8",          ")",       "(",
                          "::",      ",",       " FROM ",     "__ref('x')",  "__source('s')", " JOIN ",  " ON ",
                          "1",       " WHERE ", " GROUP BY ", " UNION ALL ", " WITH ",        "c",       " PREWHERE ",
                          "*",       ";",       " t",         "'",           "sumIf(a, 1)",   " LIMIT 1"};
  std::mt19937 random(99);
  for (int round = 0; round < 3000; ++round) {
    std::string body;
    size_t count = random() % 20;
    for (size_t i = 0; i < count; ++i) body += pieces[random() % std::size(pieces)];
    ModelFile model("  partition_by \"a\",\n", body);
    model.input.partition_by = model.Key("a");
    try {
      model.Check();
    } catch (const Error&) {
    }
  }
}

TEST(CheckModelContract, RandomBytesGiveAContractOrASluiceError) {
  std::mt19937 random(5);
  for (int round = 0; round < 2000; ++round) {
    std::string body(static_cast<size_t>(random() % 48), '\0');
    for (char& c : body) c = static_cast<char>(random() % 256);
    for (sql::Dialect dialect : {sql::Dialect::kClickHouse, sql::Dialect::kDuckDb, sql::Dialect::kBigQuery}) {
      ModelFile model(kHeader, body, dialect);
      model.input.ttl = StorageKeyText{body, model.text.size() + 10};
      try {
        model.Check();
      } catch (const Error&) {
      }
    }
  }
}

}  // namespace
}  // namespace sluice
