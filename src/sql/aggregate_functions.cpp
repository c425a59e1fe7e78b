// IsAggregateFunction (declared in select_parser.hpp): the aggregate function names and the ClickHouse
// combinator suffixes.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "sql/keyword_table.hpp"
#include "sql/select_parser.hpp"
#include "sql/select_parser_internal.hpp"

namespace sluice::sql {

namespace {

using select_parser_internal::LowerAscii;

// Lower-case names of aggregate functions: StreamBuild's ClickHouse list, plus standard, DuckDB, PostgreSQL
// and BigQuery aggregates.
constexpr std::string_view kAggregateNames[] = {
    // ClickHouse (as StreamBuild lists them, window functions included)
    "aggthrow", "analysisofvariance", "anova", "any", "anyheavy", "anylast", "anylast_respect_nulls",
    "any_respect_nulls", "any_value", "any_value_respect_nulls", "approx_top_count", "approx_top_k", "approx_top_sum",
    "argmax", "argmin", "array_agg", "array_concat_agg", "avg", "avgweighted", "bit_and", "bit_or", "bit_xor",
    "boundingratio", "categoricalinformationvalue", "contingency", "corr", "corrmatrix", "corrstable", "count",
    "covar_pop", "covar_samp", "covarpop", "covarpopmatrix", "covarpopstable", "covarsamp", "covarsampmatrix",
    "covarsampstable", "cramersv", "cramersvbiascorrected", "deltasum", "deltasumtimestamp", "denserank", "dense_rank",
    "entropy", "exponentialmovingaverage", "exponentialtimedecayedavg", "exponentialtimedecayedcount",
    "exponentialtimedecayedmax", "exponentialtimedecayedsum", "first_value", "first_value_respect_nulls", "flamegraph",
    "grouparray", "grouparrayinsertat", "grouparrayintersect", "grouparraylast", "grouparraymovingavg",
    "grouparraymovingsum", "grouparraysample", "grouparraysorted", "groupbitand", "groupbitor", "groupbitxor",
    "groupbitmap", "groupbitmapand", "groupbitmapor", "groupbitmapxor", "groupconcat", "groupuniqarray", "group_concat",
    "histogram", "interval_length_sum", "intervallengthsum", "kolmogorovsmirnovtest", "kurtpop", "kurtsamp",
    "laginframe", "largesttrianglethreebuckets", "last_value", "last_value_respect_nulls", "leadinframe", "lttb",
    "mannwhitneyutest", "max", "maxintersections", "maxintersectionsposition", "maxmappedarrays", "meanztest", "median",
    "medianbfloat16", "medianbfloat16weighted", "mediandd", "mediandeterministic", "medianexact", "medianexacthigh",
    "medianexactlow", "medianexactweighted", "mediangk", "medianinterpolatedweighted", "mediantdigest",
    "mediantdigestweighted", "mediantiming", "mediantimingweighted", "min", "minmappedarrays", "nonnegativederivative",
    "n_tile", "nothing", "nothingnull", "nothinguint64", "nth_value", "ntile", "percentrank", "percent_rank",
    "quantile", "quantilebfloat16", "quantilebfloat16weighted", "quantiledd", "quantiledeterministic", "quantileexact",
    "quantileexactexclusive", "quantileexacthigh", "quantileexactinclusive", "quantileexactlow",
    "quantileexactweighted", "quantilegk", "quantileinterpolatedweighted", "quantiletdigest", "quantiletdigestweighted",
    "quantiletiming", "quantiletimingweighted", "quantiles", "quantilesbfloat16", "quantilesbfloat16weighted",
    "quantilesdd", "quantilesdeterministic", "quantilesexact", "quantilesexactexclusive", "quantilesexacthigh",
    "quantilesexactinclusive", "quantilesexactlow", "quantilesexactweighted", "quantilesgk",
    "quantilesinterpolatedweighted", "quantilestdigest", "quantilestdigestweighted", "quantilestiming",
    "quantilestimingweighted", "rank", "rankcorr", "retention", "row_number", "sequencecount", "sequencematch",
    "sequencenextnode", "simplelinearregression", "singlevalueornull", "skewpop", "skewsamp", "sparkbar", "std",
    "stddev_pop", "stddev_samp", "stddevpop", "stddevpopstable", "stddevsamp", "stddevsampstable",
    "stochasticlinearregression", "stochasticlogisticregression", "studentttest", "sum", "sumcount", "sumkahan",
    "summap", "summapfiltered", "summapfilteredwithoverflow", "summapwithoverflow", "summappedarrays",
    "sumwithoverflow", "theilsu", "theilslope", "topk", "topkweighted", "uniq", "uniqcombined", "uniqcombined64",
    "uniqexact", "uniqhll12", "uniqtheta", "uniqupto", "var_pop", "var_samp", "varpop", "varpopstable", "varsamp",
    "varsampstable", "welchttest", "windowfunnel",
    // aggregate-state functions
    "finalizeaggregation", "initializeaggregation",
    // standard SQL, DuckDB, PostgreSQL, BigQuery
    "approx_count_distinct", "approx_quantile", "approx_quantiles", "arbitrary", "arg_max", "arg_min", "bitstring_agg",
    "bool_and", "bool_or", "count_if", "countif", "every", "favg", "first", "fsum", "geomean", "geometric_mean",
    "json_agg", "json_object_agg", "jsonb_agg", "jsonb_object_agg", "kahan_sum", "kurtosis", "last", "list", "listagg",
    "logical_and", "logical_or", "mad", "max_by", "min_by", "mode", "percentile_cont", "percentile_disc", "product",
    "quantile_cont", "quantile_disc", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope",
    "regr_sxx", "regr_sxy", "regr_syy", "reservoir_quantile", "skewness", "stddev", "string_agg", "var", "variance",
    "xmlagg"};

// Longest first where one ends another (MergeState before State and Merge); lower case, as names are compared.
constexpr std::string_view kCombinators[] = {"mergestate", "simplestate", "ordefault", "ornull", "resample", "distinct",
                                             "foreach",    "merge",       "state",     "array",  "map",      "if"};

// The last letters of the combinators: a name ending in none of them has no combinator to strip.
constexpr auto kCombinatorEnds = [] {
  std::array<bool, 256> ends{};
  for (std::string_view combinator : kCombinators) ends[static_cast<unsigned char>(combinator.back())] = true;
  return ends;
}();

// The aggregate names by an inline hash of their (lower-case) bytes: a lookup costs a few instructions per byte
// and no allocation, as the parser asks it of every function call.
class AggregateTable {
 public:
  AggregateTable() {
    for (std::string_view name : kAggregateNames) {
      for (size_t slot = SlotOf(name);; slot = (slot + 1) % kSlots) {
        if (slots_[slot].empty() || slots_[slot] == name) {
          slots_[slot] = name;
          break;
        }
      }
    }
  }

  bool Contains(std::string_view lower_name) const {
    for (size_t slot = SlotOf(lower_name);; slot = (slot + 1) % kSlots) {
      if (slots_[slot].empty()) return false;
      if (slots_[slot] == lower_name) return true;
    }
  }

 private:
  static constexpr size_t kSlots = 1024;  // a power of two, about four times the names

  static size_t SlotOf(std::string_view name) {
    uint32_t hash = 2166136261u;
    for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
    return (hash ^ (hash >> 15)) % kSlots;
  }

  std::array<std::string_view, kSlots> slots_{};
};

const AggregateTable kAggregates;

// The aggregate names of 2 to 16 bytes again, in the folded form the keyword table uses: most calls are told apart
// with one probe, without lowering the name.
constexpr auto kShortAggregates = [] {
  FoldedWordTable<1024> table;  // ~270 names
  for (std::string_view name : kAggregateNames) {
    if (name.size() >= table.kShortestWord && name.size() <= table.kLongestWord) table.Add(name, 1);
  }
  return table;
}();
static_assert(
    [] {
      for (std::string_view name : kAggregateNames) {
        if (name.size() >= kShortAggregates.kShortestWord && name.size() <= kShortAggregates.kLongestWord &&
            kShortAggregates.Find(name) == 0) {
          return false;
        }
      }
      return true;
    }(),
    "every short aggregate name is in the one-probe table");

}  // namespace

bool IsAggregateFunction(std::string_view name) {
  // A name of 2 to 16 bytes that is no aggregate and ends in no combinator's last letter is none: the slow path
  // below would strip nothing and look it up once, as the probe just did.
  if (name.size() >= kShortAggregates.kShortestWord && name.size() <= kShortAggregates.kLongestWord) {
    if (kShortAggregates.Find(name) != 0) return true;
    if (!kCombinatorEnds[static_cast<unsigned char>(LowerAscii(name.back()))]) return false;
  }
  // Lower-cased on the stack; a name longer than any aggregate with a few combinators takes a string.
  constexpr size_t kShortName = 64;
  char buffer[kShortName];
  std::string long_name;
  char* lowered = buffer;
  if (name.size() > kShortName) {
    long_name.resize(name.size());
    lowered = long_name.data();
  }
  for (size_t k = 0; k < name.size(); ++k) lowered[k] = LowerAscii(name[k]);
  std::string_view base(lowered, name.size());
  if (kAggregates.Contains(base)) return true;
  // Strip one combinator at a time, checking after each (groupArrayArray is groupArray + Array).
  bool changed = true;
  while (changed && !base.empty() && kCombinatorEnds[static_cast<unsigned char>(base.back())]) {
    changed = false;
    for (std::string_view combinator : kCombinators) {
      // Most names are told apart from a combinator by their last letter alone.
      if (base.back() != combinator.back() || !base.ends_with(combinator)) continue;
      base.remove_suffix(combinator.size());
      if (kAggregates.Contains(base)) return true;
      changed = true;
      break;
    }
  }
  return false;
}

}  // namespace sluice::sql
