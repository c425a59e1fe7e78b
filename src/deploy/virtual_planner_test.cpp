// PlanVirtual on the ch_virtual fixture against actual states written by hand (no server): each object's action
// (§7.3) and each root's replay execution (§8: defaults, replay_on_change, --full-refresh, --start-time,
// bounded_replay_fallback), and the planner's errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/logical_datetime.hpp"
#include "core/virtual_names.hpp"
#include "deploy/virtual_plan.hpp"
#include "project/project_loader.hpp"

namespace sluice {
namespace {

constexpr const char* kActiveId = "20260801T000000Z_aaaaaa";
constexpr const char* kNewId = "20260802T000000Z_bbbbbb";
constexpr const char* kNamespace = "ch_virtual";

std::filesystem::path FixtureDir(const std::string& name) {
  return std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / name;
}

const Project& Fixture(const std::string& name) {
  static std::map<std::string, Project> projects;
  auto it = projects.find(name);
  if (it == projects.end()) it = projects.emplace(name, LoadProject(FixtureDir(name), LoadOptions{})).first;
  return it->second;
}

// ch_virtual copied to a temporary folder with pipelines/pl__shop/pipeline.toml holding `pipeline_toml`.
Project WithShopPipeline(const std::string& pipeline_toml) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("virtual_planner_test_" + std::to_string(::getpid())) / "ch_virtual";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root.parent_path());
  std::filesystem::copy(FixtureDir("ch_virtual"), root, std::filesystem::copy_options::recursive);
  std::ofstream(root / "pipelines" / "pl__shop" / "pipeline.toml") << pipeline_toml;
  Project project = LoadProject(root, LoadOptions{});
  std::filesystem::remove_all(root.parent_path());
  return project;
}

const Asset& Model(const Definitions& definitions, const std::string& name) {
  for (const Asset& asset : definitions.assets()) {
    if (asset.name() == name) return asset;
  }
  ADD_FAILURE() << "no model " << name;
  return definitions.assets().front();
}

std::vector<std::pair<std::string, std::string>> DeclaredColumns(const Asset& model) {
  std::vector<std::pair<std::string, std::string>> columns;
  for (const ModelColumn& column : std::get<SqlCompute>(model.compute).columns) {
    columns.emplace_back(std::string(column.name), NormalizeTypeSpelling(std::string(column.type)));
  }
  return columns;
}

std::string ColumnsJson(const std::vector<std::pair<std::string, std::string>>& columns) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, type] : columns) out.push_back({name, type});
  return out.dump();
}

bool IsSqlModel(const Asset& asset) { return std::holds_alternative<SqlCompute>(asset.compute); }

// Every model of the fixture published by deployment kActiveId exactly as the project declares it: its physical
// table with the declared columns, its stable view bound to it, its object row with the project's fingerprint.
VirtualActualState Deployed(const Definitions& definitions) {
  VirtualActualState state;
  for (const Asset& model : definitions.assets()) {
    if (!IsSqlModel(model)) continue;
    const std::string physical = PhysicalName(model.relation_name, kActiveId);
    TableInfo table{Relation{kNamespace, physical}, false, {}};
    for (const auto& [name, type] : DeclaredColumns(model)) table.columns.push_back({name, type});
    state.relations.push_back(table);
    TableInfo view = table;
    view.relation.name = model.relation_name;
    view.is_view = true;
    state.relations.push_back(view);
    state.bindings.push_back(LiveBinding{kNamespace, model.relation_name, physical, std::string(kActiveId),
                                         "SELECT * FROM " + std::string(kNamespace) + "." + physical});
    ObjectRow row;
    row.deployment_id = kActiveId;
    row.kind = "deployment";
    row.name_space = kNamespace;
    row.logical = model.relation_name;
    row.object_type = "table";
    row.physical = physical;
    row.model = model.name();
    row.action = "create";
    row.fingerprint = ObjectFingerprint(definitions, model);
    row.columns_json = ColumnsJson(DeclaredColumns(model));
    state.objects.push_back(row);
  }
  return state;
}

ObjectRow& RecordedFor(VirtualActualState& state, const Definitions& definitions, const std::string& model) {
  const std::string logical = Model(definitions, model).relation_name;
  auto it = std::find_if(state.objects.begin(), state.objects.end(),
                         [&](const ObjectRow& row) { return row.logical == logical; });
  return *it;
}

TableInfo& ActiveTable(VirtualActualState& state, const Definitions& definitions, const std::string& model) {
  const std::string physical = PhysicalName(Model(definitions, model).relation_name, kActiveId);
  auto it = std::find_if(state.relations.begin(), state.relations.end(),
                         [&](const TableInfo& table) { return table.relation.name == physical; });
  return *it;
}

// The active deployment recorded `model` with other columns (so another fingerprint): what a change of its SQL in
// the project looks like to the planner.
void RecordColumns(VirtualActualState& state, const Definitions& definitions, const std::string& model,
                   const std::vector<std::pair<std::string, std::string>>& columns) {
  ObjectRow& row = RecordedFor(state, definitions, model);
  row.columns_json = ColumnsJson(columns);
  row.fingerprint = "recorded-before-the-change";
}

std::vector<std::pair<std::string, std::string>> Without(std::vector<std::pair<std::string, std::string>> columns,
                                                         const std::string& name) {
  std::erase_if(columns, [&](const auto& column) { return column.first == name; });
  return columns;
}

std::vector<std::pair<std::string, std::string>> Retyped(std::vector<std::pair<std::string, std::string>> columns,
                                                         const std::string& name, const std::string& type) {
  for (auto& column : columns) {
    if (column.first == name) column.second = type;
  }
  return columns;
}

VirtualPlan Plan(const Definitions& definitions, const VirtualActualState& state, VirtualPlanOptions options = {}) {
  if (!options.deployment_id) options.deployment_id = kNewId;
  const FixedClock clock(ParseLogicalDatetime("2026-08-02T00:00:00Z"));
  return PlanVirtual(definitions, state, ModernClickHouseCapabilities(), options, clock);
}

const VirtualObject& Object(const VirtualPlan& plan, const std::string& model) {
  auto it = std::find_if(plan.objects.begin(), plan.objects.end(),
                         [&](const VirtualObject& object) { return object.model.name() == model; });
  EXPECT_NE(it, plan.objects.end()) << model << "\n" << VirtualPlanJson(plan);
  return *it;
}

const VirtualRoot* RootOf(const VirtualPlan& plan, const std::string& model) {
  auto it = std::find_if(plan.roots.begin(), plan.roots.end(),
                         [&](const VirtualRoot& root) { return root.root.name() == model; });
  return it == plan.roots.end() ? nullptr : &*it;
}

std::string Actions(const VirtualPlan& plan) {
  std::string text;
  for (const VirtualObject& object : plan.objects) {
    text += (text.empty() ? "" : ", ") + object.model.name() + "=" + ObjectActionName(object.action);
  }
  return text;
}

std::string CodeOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.diagnostics().front().code;
  }
  return "no error";
}

// ---- Objects: create / no_op / rebuild -------------------------------------------------------------------------

TEST(VirtualPlanner, NothingDeployedCreatesEveryObjectAndReplaysEachRootInFull) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  const VirtualPlan plan = Plan(definitions, VirtualActualState{});
  EXPECT_EQ(plan.deployment_id, kNewId);
  EXPECT_EQ(plan.name_space, kNamespace);
  EXPECT_EQ(plan.lineage_mode, "offsets");
  for (const VirtualObject& object : plan.objects) {
    EXPECT_EQ(object.action, ObjectAction::kCreate) << object.model.name();
    EXPECT_EQ(object.reason, "not deployed yet");
    EXPECT_FALSE(object.active_physical);
    EXPECT_EQ(object.physical, PhysicalName(object.logical, kNewId));
  }
  const VirtualRoot* paid = RootOf(plan, "paid_orders");
  ASSERT_NE(paid, nullptr) << VirtualPlanJson(plan);
  EXPECT_EQ(paid->execution, ReplayExecution::kFull);
  EXPECT_EQ(paid->mode, "offsets");
  EXPECT_FALSE(paid->history_preserving_bounded_supported);
  EXPECT_EQ(RootOf(plan, "daily_totals"), nullptr) << "its driving input paid_orders is rebuilt with it";
  EXPECT_FALSE(plan.Empty());
}

TEST(VirtualPlanner, EverythingAsRecordedIsNoOpAndTheDeploymentIsEmpty) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  const VirtualPlan plan = Plan(definitions, Deployed(definitions));
  for (const VirtualObject& object : plan.objects) {
    EXPECT_EQ(object.action, ObjectAction::kNoOp) << object.model.name() << ": " << object.reason;
    EXPECT_EQ(object.physical, PhysicalName(object.logical, kActiveId)) << "kept at its bound object";
  }
  EXPECT_TRUE(plan.Empty());
  EXPECT_TRUE(plan.roots.empty());
}

TEST(VirtualPlanner, AViewThatReadsNoDeploymentsObjectIsCreated) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  VirtualActualState state = Deployed(definitions);
  for (LiveBinding& binding : state.bindings) {
    if (binding.logical == Model(definitions, "paid_orders").relation_name) {
      binding.physical = "hand_made_table";
      binding.deployment_id.reset();
    }
  }
  const VirtualPlan plan = Plan(definitions, state);
  EXPECT_EQ(Object(plan, "paid_orders").action, ObjectAction::kCreate);
  EXPECT_EQ(Object(plan, "paid_orders").reason, "the logical view reads no deployment's object");
  EXPECT_EQ(Object(plan, "daily_totals").action, ObjectAction::kRebuild);
}

// Each way an object is rebuilt, and what follows downstream (daily_totals reads paid_orders and customer_tiers).
struct RebuildCase {
  std::string name;
  std::string model;
  std::function<void(VirtualActualState&, const Definitions&)> change;
  std::string reason;
  std::vector<std::string> rebuilt;  // every rebuilt model, in plan order
};

class RebuildReasons : public ::testing::TestWithParam<RebuildCase> {};

TEST_P(RebuildReasons, RebuildsTheObjectAndEverythingReadingIt) {
  const RebuildCase& c = GetParam();
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  VirtualActualState state = Deployed(definitions);
  c.change(state, definitions);
  const VirtualPlan plan = Plan(definitions, state);
  EXPECT_EQ(Object(plan, c.model).action, ObjectAction::kRebuild) << Actions(plan);
  EXPECT_NE(Object(plan, c.model).reason.find(c.reason), std::string::npos) << Object(plan, c.model).reason;
  std::vector<std::string> rebuilt;
  for (const VirtualObject& object : plan.objects) {
    if (object.action == ObjectAction::kRebuild) {
      rebuilt.push_back(object.model.name());
      EXPECT_EQ(object.physical, PhysicalName(object.logical, kNewId));
      EXPECT_EQ(object.active_physical, PhysicalName(object.logical, kActiveId));
    } else {
      EXPECT_EQ(object.action, ObjectAction::kNoOp) << object.model.name();
    }
  }
  EXPECT_EQ(rebuilt, c.rebuilt) << Actions(plan);
}

INSTANTIATE_TEST_SUITE_P(
    VirtualPlanner, RebuildReasons,
    ::testing::Values(
        RebuildCase{"FingerprintDiffers",
                    "paid_orders",
                    [](VirtualActualState& s, const Definitions&) {
                      for (ObjectRow& row : s.objects) {
                        if (row.model == "paid_orders") row.fingerprint = "another";
                      }
                    },
                    "query or storage changed",
                    {"paid_orders", "daily_totals"}},
        RebuildCase{"ColumnsDiffer",
                    "paid_orders",
                    [](VirtualActualState& s, const Definitions& d) {
                      RecordColumns(s, d, "paid_orders", Without(DeclaredColumns(Model(d, "paid_orders")), "amount"));
                    },
                    "columns changed",
                    {"paid_orders", "daily_totals"}},
        RebuildCase{"BoundObjectMissing",
                    "customer_tiers",
                    [](VirtualActualState& s, const Definitions& d) {
                      const std::string physical = PhysicalName(Model(d, "customer_tiers").relation_name, kActiveId);
                      std::erase_if(s.relations, [&](const TableInfo& t) { return t.relation.name == physical; });
                    },
                    "is missing",
                    {"customer_tiers", "daily_totals"}},
        RebuildCase{"NothingRecorded",
                    "click_ids",
                    [](VirtualActualState& s, const Definitions&) {
                      std::erase_if(s.objects, [](const ObjectRow& row) { return row.model == "click_ids"; });
                    },
                    "nothing is recorded",
                    {"click_ids"}},
        RebuildCase{"UpstreamRebuilt",
                    "daily_totals",
                    [](VirtualActualState& s, const Definitions&) {
                      for (ObjectRow& row : s.objects) {
                        if (row.model == "customer_tiers") row.fingerprint = "another";
                      }
                    },
                    "upstream customer_tiers is rebuilt",
                    {"customer_tiers", "daily_totals"}}),
    [](const ::testing::TestParamInfo<RebuildCase>& info) { return info.param.name; });

TEST(VirtualPlanner, ALaterReconcileRowReplacesWhatTheDeploymentRecorded) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  VirtualActualState state = Deployed(definitions);
  ObjectRow reconcile = RecordedFor(state, definitions, "paid_orders");
  RecordedFor(state, definitions, "paid_orders").fingerprint = "stale";
  reconcile.kind = "reconcile";
  reconcile.deployment_id = "reconcile_20260801T120000Z";
  state.objects.push_back(reconcile);
  EXPECT_EQ(Object(Plan(definitions, state), "paid_orders").action, ObjectAction::kNoOp);
}

TEST(VirtualPlanner, FullRefreshRebuildsTheSelectedRootsInFullAndTheirDownstream) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  VirtualPlanOptions options;
  options.selection = {"paid_orders"};
  options.full_refresh = true;
  const VirtualPlan plan = Plan(definitions, Deployed(definitions), options);
  EXPECT_EQ(Object(plan, "paid_orders").action, ObjectAction::kRebuild);
  EXPECT_EQ(Object(plan, "paid_orders").reason, "--full-refresh");
  EXPECT_EQ(Object(plan, "daily_totals").action, ObjectAction::kRebuild);
  EXPECT_EQ(Object(plan, "daily_totals").reason, "upstream paid_orders is rebuilt");
  EXPECT_EQ(plan.objects.size(), 2u) << "the scope is the selection and its downstream: " << Actions(plan);
  const VirtualRoot* root = RootOf(plan, "paid_orders");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->execution, ReplayExecution::kFull);
  EXPECT_EQ(root->reason, "--full-refresh");
  EXPECT_EQ(root->affected,
            (std::vector<AssetKey>{Model(definitions, "paid_orders").key, Model(definitions, "daily_totals").key}));
  // daily_totals' side reference to the kept customer_tiers reads its bound table, never the stable view.
  std::string statements;
  for (const PlanStep& step : plan.steps.steps) {
    for (const PlanStatement& statement : step.statements) statements += statement.sql + ";\n";
  }
  const std::string kept = PhysicalName(Model(definitions, "customer_tiers").relation_name, kActiveId);
  EXPECT_NE(statements.find(kept), std::string::npos) << statements;
  EXPECT_FALSE(std::regex_search(statements, std::regex("tbl__customer_tiers([^_]|$)"))) << statements;
}

TEST(VirtualPlanner, ARootWhoseDrivingInputIsKeptReplaysFromItsBoundTable) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  VirtualActualState state = Deployed(definitions);
  RecordedFor(state, definitions, "customer_tiers").fingerprint = "another";
  const VirtualPlan plan = Plan(definitions, state);
  EXPECT_EQ(Actions(plan).find("paid_orders=rebuild"), std::string::npos) << Actions(plan);
  const VirtualRoot* totals = RootOf(plan, "daily_totals");
  ASSERT_NE(totals, nullptr) << VirtualPlanJson(plan);
  EXPECT_EQ(totals->anchor,
            std::string(kNamespace) + "." + PhysicalName(Model(definitions, "paid_orders").relation_name, kActiveId))
      << "materialized views do not fire through the stable view";
  ASSERT_NE(RootOf(plan, "customer_tiers"), nullptr);
  EXPECT_EQ(RootOf(plan, "customer_tiers")->execution, ReplayExecution::kFull) << "a query-only change";
}

// ---- Roots: §8's execution modes ---------------------------------------------------------------------------------

struct ReplayCase {
  std::string name;
  std::string pipeline_toml;  // pipelines/pl__shop/pipeline.toml; empty: none
  std::function<void(VirtualActualState&, const Definitions&)> change;
  VirtualPlanOptions options;
  ReplayExecution execution;
  std::optional<int64_t> lookback_seconds;
  std::optional<std::string> lower_time;
  bool at_active_frontier = false;
  std::string fallback;  // resolved_bounded_replay_fallback
  std::optional<std::string> requested_start_time;
};

void AddOnly(VirtualActualState& s, const Definitions& d) {
  RecordColumns(s, d, "paid_orders", Without(DeclaredColumns(Model(d, "paid_orders")), "customer"));
}
void Removal(VirtualActualState& s, const Definitions& d) {
  auto columns = DeclaredColumns(Model(d, "paid_orders"));
  columns.emplace_back("legacy", "String");
  RecordColumns(s, d, "paid_orders", columns);
}
void TypeChange(VirtualActualState& s, const Definitions& d) {
  RecordColumns(s, d, "paid_orders", Retyped(DeclaredColumns(Model(d, "paid_orders")), "amount", "Decimal(18, 2)"));
}
void QueryOnly(VirtualActualState& s, const Definitions& d) {
  RecordedFor(s, d, "paid_orders").fingerprint = "another query";
}
void NoLineageInActiveTable(VirtualActualState& s, const Definitions& d) {
  std::erase_if(ActiveTable(s, d, "paid_orders").columns,
                [](const ColumnInfo& column) { return column.name == "_replay_offset"; });
}
void Unchanged(VirtualActualState&, const Definitions&) {}

VirtualPlanOptions Selecting(std::vector<std::string> selection, bool full_refresh = false,
                             std::optional<std::string> start_time = std::nullopt) {
  VirtualPlanOptions options;
  options.selection = std::move(selection);
  options.full_refresh = full_refresh;
  options.start_time = std::move(start_time);
  return options;
}

class ReplayExecutions : public ::testing::TestWithParam<ReplayCase> {};

TEST_P(ReplayExecutions, PaidOrdersReplaysAsThePolicySays) {
  const ReplayCase& c = GetParam();
  const Project project = c.pipeline_toml.empty() ? LoadProject(FixtureDir("ch_virtual"), LoadOptions{})
                                                  : WithShopPipeline(c.pipeline_toml);
  const Definitions& definitions = project.definitions;
  VirtualActualState state = Deployed(definitions);
  c.change(state, definitions);
  const VirtualPlan plan = Plan(definitions, state, c.options);
  const VirtualRoot* root = RootOf(plan, "paid_orders");
  ASSERT_NE(root, nullptr) << VirtualPlanJson(plan);
  EXPECT_EQ(ReplayExecutionName(root->execution), ReplayExecutionName(c.execution)) << root->reason;
  EXPECT_EQ(root->lower_time, c.lower_time) << root->reason;
  EXPECT_EQ(root->lower_at_active_frontier, c.at_active_frontier) << root->reason;
  EXPECT_EQ(root->resolved_bounded_replay_fallback, c.fallback) << root->reason;
  EXPECT_EQ(root->requested_start_time, c.requested_start_time) << root->reason;

  // The replay step carries the same decision.
  const PlanStep* replay = nullptr;
  for (const PlanStep& step : plan.steps.steps) {
    if (step.replay && step.replay->root == Model(definitions, "paid_orders").key) replay = &step;
  }
  ASSERT_NE(replay, nullptr);
  const std::optional<BoundedReplay>& bounded = replay->replay->bounded;
  ASSERT_EQ(bounded.has_value(), c.execution != ReplayExecution::kFull);
  if (!bounded) return;
  EXPECT_EQ(bounded->seeded, c.execution == ReplayExecution::kSeededBounded);
  EXPECT_EQ(bounded->lookback_seconds, c.lookback_seconds);
  EXPECT_EQ(bounded->at_active_frontier, c.at_active_frontier);
  EXPECT_EQ(bounded->lower_time, c.lower_time.value_or(""));
  if (root->history_preserving_bounded_supported) {
    EXPECT_EQ(bounded->active_table,
              std::string(kNamespace) + "." + PhysicalName(Model(definitions, "paid_orders").relation_name, kActiveId));
  }
  if (bounded->seeded) {
    EXPECT_FALSE(bounded->seed_columns.empty());
    EXPECT_EQ(std::count(bounded->seed_columns.begin(), bounded->seed_columns.end(), "legacy"), 0);
  }
}

const char* kBounded1d = "mode = \"virtual\"\n[replay_on_change]\nbreaking = \"bounded-1d\"\nnon_breaking = \"full\"\n";
const char* kBounded12hWithoutHistory =
    "mode = \"virtual\"\nbounded_replay_fallback = \"bounded_without_history\"\n"
    "[replay_on_change]\nnon_breaking = \"bounded-12h\"\n";

INSTANTIATE_TEST_SUITE_P(
    VirtualPlanner, ReplayExecutions,
    ::testing::Values(
        // Defaults (no policy).
        ReplayCase{"DefaultAddOnlyIsSeededAtTheActiveFrontier",
                   "",
                   AddOnly,
                   {},
                   ReplayExecution::kSeededBounded,
                   std::nullopt,
                   std::nullopt,
                   true},
        ReplayCase{"DefaultRemovalIsFull", "", Removal, {}, ReplayExecution::kFull},
        ReplayCase{"DefaultTypeChangeIsFull", "", TypeChange, {}, ReplayExecution::kFull},
        ReplayCase{"DefaultQueryOnlyIsFull", "", QueryOnly, {}, ReplayExecution::kFull},
        // replay_on_change.
        ReplayCase{"BoundedBreakingRemovalIsSeeded", kBounded1d, Removal, {}, ReplayExecution::kSeededBounded, 86400},
        ReplayCase{"BoundedBreakingTypeChangeIsUnseeded",
                   kBounded1d,
                   TypeChange,
                   {},
                   ReplayExecution::kUnseededBounded,
                   86400},
        ReplayCase{"BoundedBreakingAppliesToQueryOnlyChangesUnseeded",
                   kBounded1d,
                   QueryOnly,
                   {},
                   ReplayExecution::kUnseededBounded,
                   86400},
        ReplayCase{"NonBreakingFullOverridesTheDefault", kBounded1d, AddOnly, {}, ReplayExecution::kFull},
        ReplayCase{"BoundedNonBreakingAddOnlyIsSeededWithItsLookback",
                   kBounded12hWithoutHistory,
                   AddOnly,
                   {},
                   ReplayExecution::kSeededBounded,
                   43200},
        ReplayCase{"AMissingRuleFallsBackToTheDefault", kBounded12hWithoutHistory, Removal, {}, ReplayExecution::kFull},
        // Forced options.
        ReplayCase{"FullRefreshWinsOverAnAddOnlyChange", "", AddOnly, Selecting({"pl__shop"}, true),
                   ReplayExecution::kFull},
        ReplayCase{"StartTimeIsSeededFromThatTime", "", Unchanged, Selecting({"pl__shop"}, false, "2026-07-30"),
                   ReplayExecution::kSeededBounded, std::nullopt, "2026-07-30 00:00:00"},
        ReplayCase{"StartTimeWithSecondsAndZone", "", Unchanged,
                   Selecting({"paid_orders"}, false, "2026-07-30T06:30:00.250Z"), ReplayExecution::kSeededBounded,
                   std::nullopt, "2026-07-30 06:30:00"},
        ReplayCase{"StartTimeWithoutAnActiveTableIsUnseeded", "",
                   [](VirtualActualState& s, const Definitions& d) {
                     const std::string logical = Model(d, "paid_orders").relation_name;
                     std::erase_if(s.bindings, [&](const LiveBinding& b) { return b.logical == logical; });
                   },
                   Selecting({"pl__shop"}, false, "2026-07-30"), ReplayExecution::kUnseededBounded, std::nullopt,
                   "2026-07-30 00:00:00"},
        // bounded_replay_fallback: the active table lacks the offsets lineage columns.
        ReplayCase{"NoLineageAddOnlyFallsBackToFull",
                   "",
                   [](VirtualActualState& s, const Definitions& d) {
                     AddOnly(s, d);
                     NoLineageInActiveTable(s, d);
                   },
                   {},
                   ReplayExecution::kFull,
                   std::nullopt,
                   std::nullopt,
                   false,
                   "full"},
        ReplayCase{"NoLineageStartTimeFallsBackToFullKeepingTheRequest", "", NoLineageInActiveTable,
                   Selecting({"pl__shop"}, false, "2026-07-30"), ReplayExecution::kFull, std::nullopt, std::nullopt,
                   false, "full", "2026-07-30 00:00:00"},
        ReplayCase{"NoLineageBoundedWithoutHistoryIsUnseeded",
                   kBounded12hWithoutHistory,
                   [](VirtualActualState& s, const Definitions& d) {
                     AddOnly(s, d);
                     NoLineageInActiveTable(s, d);
                   },
                   {},
                   ReplayExecution::kUnseededBounded,
                   43200,
                   std::nullopt,
                   false,
                   "bounded_without_history"},
        ReplayCase{"NoLineageStartTimeBoundedWithoutHistoryIsUnseededFromThatTime", kBounded12hWithoutHistory,
                   NoLineageInActiveTable, Selecting({"pl__shop"}, false, "2026-07-30"),
                   ReplayExecution::kUnseededBounded, std::nullopt, "2026-07-30 00:00:00", false,
                   "bounded_without_history"}),
    [](const ::testing::TestParamInfo<ReplayCase>& info) { return info.param.name; });

TEST(VirtualPlanner, TheRootsLineageSupportIsShownInThePlan) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  VirtualActualState state = Deployed(definitions);
  AddOnly(state, definitions);
  const VirtualPlan plan = Plan(definitions, state);
  ASSERT_NE(RootOf(plan, "paid_orders"), nullptr);
  EXPECT_TRUE(RootOf(plan, "paid_orders")->history_preserving_bounded_supported);
  const nlohmann::json json = nlohmann::json::parse(VirtualPlanJson(plan));
  bool found = false;
  for (const auto& object : json["objects"]) {
    if (object["model"] != "paid_orders") continue;
    found = true;
    EXPECT_EQ(object["action"], "rebuild");
    EXPECT_EQ(object["column_diff"]["impact"], "non_breaking");
    EXPECT_EQ(object["column_diff"]["seedability"], "seedable");
    EXPECT_EQ(object["column_diff"]["added"], nlohmann::json::array({"customer"}));
  }
  EXPECT_TRUE(found) << json.dump(2);
  NoLineageInActiveTable(state, definitions);
  EXPECT_FALSE(RootOf(Plan(definitions, state), "paid_orders")->history_preserving_bounded_supported);
}

TEST(VirtualPlanner, EqualPlansHaveEqualFingerprintsWhateverTheirIds) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  VirtualActualState state = Deployed(definitions);
  AddOnly(state, definitions);
  VirtualPlanOptions other;
  other.deployment_id = "20260803T000000Z_cccccc";
  const std::string add_only = Plan(definitions, state).fingerprint;
  EXPECT_EQ(add_only, Plan(definitions, state, other).fingerprint);
  TypeChange(state, definitions);
  EXPECT_NE(add_only, Plan(definitions, state, other).fingerprint);
}

TEST(VirtualPlanner, TheStepsLeaveAuditsToTheReadinessAudit) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  const VirtualPlan plan = Plan(definitions, VirtualActualState{});
  ASSERT_FALSE(plan.steps.steps.empty());
  for (const PlanStep& step : plan.steps.steps) {
    EXPECT_NE(step.phase, DeployPhase::kAudit) << step.name << ": the project's audit SQL reads the stable views";
  }
}

// ---- Errors -------------------------------------------------------------------------------------------------------

TEST(VirtualPlanner, RefusesWhatItCannotPlan) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  const VirtualActualState deployed = Deployed(definitions);
  struct Case {
    std::string what;
    const Definitions* definitions;
    VirtualActualState state;
    VirtualPlanOptions options;
    std::string code;
  };
  VirtualPlanOptions bad_id;
  bad_id.deployment_id = "release-1";
  VirtualPlanOptions full_refresh_everything;
  full_refresh_everything.full_refresh = true;
  VirtualPlanOptions start_everything;
  start_everything.start_time = "2026-07-30";
  const std::vector<Case> cases = {
      {"a direct project", &Fixture("ch_shop").definitions, {}, {}, "SLU-DEPLOY-020"},
      {"--full-refresh without --select", &definitions, deployed, full_refresh_everything, "SLU-DEPLOY-021"},
      {"--start-time without --select", &definitions, deployed, start_everything, "SLU-DEPLOY-021"},
      {"--full-refresh with --start-time", &definitions, deployed, Selecting({"pl__shop"}, true, "2026-07-30"),
       "SLU-DEPLOY-021"},
      {"a --start-time that is not a time", &definitions, deployed, Selecting({"pl__shop"}, false, "yesterday"),
       "SLU-DEPLOY-021"},
      {"an upstream outside the selection never deployed",
       &definitions,
       {},
       Selecting({"daily_totals"}),
       "SLU-DEPLOY-022"},
      {"a deployment id that is not one", &definitions, deployed, bad_id, "SLU-DEPLOY-023"},
  };
  for (const Case& c : cases) {
    VirtualPlanOptions options = c.options;
    EXPECT_EQ(CodeOf([&] {
                const FixedClock clock(ParseLogicalDatetime("2026-08-02T00:00:00Z"));
                PlanVirtual(*c.definitions, c.state, ModernClickHouseCapabilities(), options, clock);
              }),
              c.code)
        << c.what;
  }
}

TEST(VirtualPlanner, AnUpstreamOutsideTheSelectionIsReadAtItsBoundTable) {
  const Definitions& definitions = Fixture("ch_virtual").definitions;
  VirtualActualState state = Deployed(definitions);
  const std::string logical = Model(definitions, "daily_totals").relation_name;
  std::erase_if(state.bindings, [&](const LiveBinding& b) { return b.logical == logical; });
  const VirtualPlan plan = Plan(definitions, state, Selecting({"daily_totals"}));
  EXPECT_EQ(Actions(plan), "daily_totals=create");
  EXPECT_EQ(plan.physical->Find(Model(definitions, "paid_orders").key)->relation_name,
            PhysicalName(Model(definitions, "paid_orders").relation_name, kActiveId));
}

}  // namespace
}  // namespace sluice
