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

// Plain "this model file → this contract or error" examples are data: tests/golden/contract/*.test
// (golden_contract_test, through ParseModelFile and ContractInputOf). What stays here: inputs a model file
// cannot produce, the lineage helpers, and randomized inputs.

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

// A model file without a statement has no driving input either, and ParseModelFile reports that first.
TEST(CheckModelContract, RejectsABodyWithoutStatement) {
  ModelFile model(kHeader, "-- nothing here\n;\n");
  model.ExpectError("SLU-MODEL-101", 3, 3);  // at the body's start, right after the header's `;`
}

TEST(CheckModelContract, DefaultOrderByNeedsTheReplayTimestamp) {
  ModelFile model(kHeader, "SELECT CAST(ts AS DateTime) AS event_at FROM __ref('x')");
  model.input.order_by = {StorageKeyText{"_replay_timestamp", 0}};  // the caller's default, pointed at MODEL
  model.ExpectError("SLU-MODEL-111", 1, 1);
  EXPECT_NE(model.Error().hint.find("defaults to"), std::string::npos) << model.Error().hint;
}

// ---- lineage ----

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

TEST(CheckModelContract, DeepNestingIsAParserErrorLocatedInTheFile) {
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
