// The building blocks of the fast compile path: ParallelFor, JsonWriter (byte-identical to nlohmann's
// dump), ContentHash, ExecutableBuildId, ReadFile on sizes around its buffer logic, and heap hints.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/asset_key.hpp"
#include "core/build_id.hpp"
#include "core/content_hash.hpp"
#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "core/heap_hint.hpp"
#include "core/json_writer.hpp"
#include "core/name_index.hpp"
#include "core/parallel_for.hpp"

namespace sluice {
namespace {

size_t last_expected_heap = 0;

TEST(HeapHintTest, ReachesTheInstalledPolicyAndNothingWithoutOne) {
  ExpectHeapBytes(1);  // no policy in this test binary: nothing happens
  SetHeapPolicy([](size_t bytes) { last_expected_heap = bytes; });
  ExpectHeapBytes(size_t{600} << 20);
  EXPECT_EQ(last_expected_heap, size_t{600} << 20);
  SetHeapPolicy(nullptr);
  ExpectHeapBytes(7);
  EXPECT_EQ(last_expected_heap, size_t{600} << 20);
}

// Every count, including those whose last run of indexes is partial and those of runs of 1 to 64 indexes.
TEST(ParallelForTest, RunsEveryIndexExactlyOnce) {
  for (size_t count :
       {size_t{1}, size_t{33}, size_t{1000}, size_t{10000}, size_t{10007}, size_t{70001}, size_t{200003}}) {
    std::vector<std::atomic<int>> hits(count);
    ParallelFor(count, [&](size_t i) { hits[i].fetch_add(1); });
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << count << " items, index " << i;
  }
}

TEST(ParallelForTest, RethrowsTheLowestFailingIndexAfterRunningTheRest) {
  constexpr size_t kCount = 5000;
  std::atomic<size_t> ran{0};
  try {
    ParallelFor(kCount, [&](size_t i) {
      ran.fetch_add(1);
      if (i % 1000 == 777) throw std::runtime_error("item " + std::to_string(i));
    });
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "item 777");
  }
  EXPECT_EQ(ran.load(), kCount);
}

TEST(ParallelForTest, ZeroItemsDoNothing) {
  bool called = false;
  ParallelFor(0, [&](size_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ParallelForTest, SmallCountsStayOnOneThread) { EXPECT_EQ(ParallelThreadsFor(5), 1u); }

// Above 4,096 elements the halves sort on two threads; the result is std::stable_sort's, ties in input order.
TEST(ParallelForTest, ParallelStableSortMatchesStableSortOnEverySize) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{4095}, size_t{4096}, size_t{20001}}) {
    std::vector<std::pair<int, size_t>> items;
    uint64_t state = 12345;
    for (size_t i = 0; i < count; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      items.emplace_back(static_cast<int>(state >> 59), i);  // 32 keys: many ties
    }
    auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::vector<std::pair<int, size_t>> expected = items;
    std::stable_sort(expected.begin(), expected.end(), by_key);
    ParallelStableSort(items.begin(), items.end(), by_key);
    EXPECT_EQ(items, expected) << count;
  }
}

// The places agree with a stable sort of the strings: names around the 16 bytes compared as numbers, names
// that share those bytes, names that differ only by trailing zero bytes, equal keys, several namespaces, and
// enough keys for the parallel sort.
TEST(PlacesInKeyOrderTest, AgreesWithAStableSortOfTheStrings) {
  std::mt19937 random(3);
  const std::vector<std::string> name_spaces = {"core", "analytics", "core2", "", "a"};
  const std::string stem = "model_name_shared_prefix_";  // 25 bytes
  std::vector<std::string> owned_names;
  owned_names.reserve(20000);
  std::vector<AssetKeyParts> keys;
  for (size_t i = 0; i < 20000; ++i) {
    std::string name = stem.substr(0, random() % (stem.size() + 1));
    const size_t extra = random() % 4;
    for (size_t k = 0; k < extra; ++k) name += static_cast<char>("ab_z"[random() % 4]);
    if (random() % 50 == 0) name += std::string(random() % 3 + 1, '\0');
    owned_names.push_back(std::move(name));
    keys.push_back(AssetKeyParts{name_spaces[random() % name_spaces.size()], owned_names.back()});
  }
  std::vector<size_t> expected(keys.size());
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = i;
  std::stable_sort(expected.begin(), expected.end(), [&](size_t a, size_t b) {
    if (keys[a].name_space != keys[b].name_space) return keys[a].name_space < keys[b].name_space;
    return keys[a].name < keys[b].name;
  });
  const std::vector<size_t> places = PlacesInKeyOrder(keys);
  ASSERT_EQ(places.size(), keys.size());
  for (size_t place = 0; place < expected.size(); ++place) EXPECT_EQ(places[expected[place]], place) << place;
  EXPECT_TRUE(PlacesInKeyOrder({}).empty());
}

TEST(NameIndexTest, FindsEveryInsertedNameAndNothingElseAcrossGrowth) {
  std::vector<std::string> names;
  for (size_t i = 0; i < 5000; ++i) names.push_back("m_" + std::to_string(i));
  names.push_back("");
  NameIndex index;  // starts small: grows many times
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(index.Insert(names[i], i * 3), std::make_pair(i * 3, true));
  }
  EXPECT_EQ(index.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(index.Find(names[i]), i * 3) << names[i];
  // A name present keeps its first index; a prefix, an extension or an absent name is not found.
  EXPECT_EQ(index.Insert(std::string("m_7"), 1), std::make_pair(size_t{21}, false));
  EXPECT_EQ(index.size(), names.size());
  for (std::string_view absent : {"m", "m_", "m_50000", "m_7 ", "M_7", "x"}) {
    EXPECT_EQ(index.Find(absent), NameIndex::kNone) << absent;
  }
  NameIndex empty;
  EXPECT_EQ(empty.Find(""), NameIndex::kNone);
  EXPECT_EQ(empty.Find("m_1"), NameIndex::kNone);
}

// The keys live in the caller's array; the table confirms them through is_key. Hashes that collide in all 64
// bits (every key of a group of 7 hashes alike) still find their own entries.
TEST(HashedIndexTest, FindsEveryKeyThroughItsConfirmationEvenWhenHashesCollide) {
  std::vector<std::string> keys;
  for (size_t i = 0; i < 3000; ++i) keys.push_back("k" + std::to_string(i));
  auto hash_of = [](size_t i) { return uint64_t{i / 7} * 0x9E3779B97F4A7C15ull; };
  auto is = [&](const std::string& key) { return [&](size_t at) { return keys[at] == key; }; };
  HashedIndex index(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(index.Insert(hash_of(i), i, is(keys[i])), std::make_pair(i, true)) << keys[i];
  }
  EXPECT_EQ(index.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(index.Find(hash_of(i), is(keys[i])), i) << keys[i];
  // A key present keeps its entry; an absent key is not found, with or without a hash in use.
  EXPECT_EQ(index.Insert(hash_of(10), 10, is(keys[10])), std::make_pair(size_t{10}, false));
  EXPECT_EQ(index.Find(hash_of(10), is("absent")), HashedIndex::kNone);
  EXPECT_EQ(index.Find(uint64_t{1} << 40, is("absent")), HashedIndex::kNone);
  // Past its capacity, Insert throws instead of filling the table.
  EXPECT_THROW(index.Insert(uint64_t{1} << 40, keys.size(), is("absent")), std::length_error);
  HashedIndex empty;
  EXPECT_EQ(empty.Find(0, is("k0")), HashedIndex::kNone);
  EXPECT_THROW(empty.Insert(0, 0, is("k0")), std::length_error);
}

// The pages of a mapping that are resident (mincore).
std::vector<bool> ResidentPages(const unsigned char* mapping, size_t pages) {
  std::vector<unsigned char> states(pages);
  EXPECT_EQ(mincore(const_cast<unsigned char*>(mapping), pages * 4096, states.data()), 0);
  std::vector<bool> resident(pages);
  for (size_t page = 0; page < pages; ++page) resident[page] = (states[page] & 1) != 0;
  return resident;
}

TEST(ParallelForTest, PrefaultMapsEveryPageTheRangeTouchesAndNoOther) {
  constexpr size_t kPage = 4096;
  constexpr size_t kPages = 700;  // the range spans three 1 MiB items
  struct Range {
    size_t offset;
    size_t bytes;
  };
  for (Range range : {Range{0, 0}, Range{0, 1}, Range{kPage, kPage}, Range{kPage + 100, kPage},
                      Range{10 * kPage + 7, 600 * kPage + 9}}) {
    void* mapping = mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapping, MAP_FAILED);
    madvise(mapping, kPages * kPage, MADV_NOHUGEPAGE);  // a huge page would map neighbours too
    auto* bytes = static_cast<unsigned char*>(mapping);
    PrefaultInParallel(bytes + range.offset, range.bytes);
    std::vector<bool> resident = ResidentPages(bytes, kPages);
    const size_t first = range.offset / kPage;
    const size_t end = range.bytes == 0 ? first : (range.offset + range.bytes + kPage - 1) / kPage;
    for (size_t page = 0; page < kPages; ++page) {
      EXPECT_EQ(resident[page], page >= first && page < end)
          << "page " << page << ", range at " << range.offset << " of " << range.bytes << " bytes";
    }
    munmap(mapping, kPages * kPage);
  }
}

// The writer's output for a document, next to nlohmann's dump of the same document.
nlohmann::json SampleDocument() {
  return nlohmann::json{{"a", nlohmann::json::array()},
                        {"b", nlohmann::json::object()},
                        {"c", {{"x", 1}, {"y", nullptr}, {"z", {"p", "q\n\"\\\t\x01\x1f/é"}}}},
                        {"d", {true, false, -42}},
                        {"e", {{{"k", "v"}}, nlohmann::json::array({nlohmann::json::object()})}}};
}

void WriteSample(JsonWriter& json) {
  json.BeginObject();
  json.Key("a");
  json.BeginArray();
  json.EndArray();
  json.Key("b");
  json.BeginObject();
  json.EndObject();
  json.Key("c");
  json.BeginObject();
  json.Key("x");
  json.Int(1);
  json.Key("y");
  json.Null();
  json.Key("z");
  json.StringArray({"p", "q\n\"\\\t\x01\x1f/é"});
  json.EndObject();
  json.Key("d");
  json.BeginArray();
  json.Bool(true);
  json.Bool(false);
  json.Int(-42);
  json.EndArray();
  json.Key("e");
  json.BeginArray();
  json.BeginObject();
  json.Key("k");
  json.String("v");
  json.EndObject();
  json.BeginArray();
  json.BeginObject();
  json.EndObject();
  json.EndArray();
  json.EndArray();
  json.EndObject();
}

TEST(JsonWriterTest, MatchesNlohmannPrettyAndCompactBytes) {
  for (int indent : {2, 4, -1}) {
    std::string out;
    JsonWriter json(out, indent);
    WriteSample(json);
    EXPECT_EQ(out, SampleDocument().dump(indent)) << "indent " << indent;
  }
}

TEST(JsonWriterTest, ValuesRenderedApartSpliceIntoTheDocument) {
  std::string inner;
  JsonWriter part(inner, 2, 1);
  part.BeginObject();
  part.Key("k");
  part.StringArray({"v", "w"});
  part.EndObject();
  std::string out;
  JsonWriter json(out);
  json.BeginObject();
  json.Key("m");
  json.Raw(inner);
  json.EndObject();
  EXPECT_EQ(out, nlohmann::json({{"m", {{"k", {"v", "w"}}}}}).dump(2));
}

// Keys must come in std::string order (bytes unsigned), whether the first byte decides or a later one does.
TEST(JsonWriterTest, KeysOutOfOrderAreRefused) {
  auto accepts = [](std::string_view first, std::string_view second) {
    std::string out;
    JsonWriter json(out);
    json.BeginObject();
    json.Key(first);
    json.Int(1);
    try {
      json.Key(second);
    } catch (const std::logic_error&) {
      return false;
    }
    return true;
  };
  EXPECT_FALSE(accepts("b", "a"));
  EXPECT_FALSE(accepts("ab", "aa"));
  EXPECT_FALSE(accepts("a", "a"));
  EXPECT_FALSE(accepts("\xc3\xa9", "z"));
  EXPECT_FALSE(accepts("a", ""));
  EXPECT_TRUE(accepts("a", "b"));
  EXPECT_TRUE(accepts("aa", "ab"));
  EXPECT_TRUE(accepts("a", "aa"));
  EXPECT_TRUE(accepts("z", "\xc3\xa9"));
  EXPECT_TRUE(accepts("", "a"));
}

TEST(JsonWriterTest, InvalidUtf8BecomesTheReplacementCharacter) {
  std::string out;
  JsonWriter json(out, -1);
  json.String(
      std::string("a\xff"
                  "b\xc3",
                  4));
  EXPECT_EQ(out,
            "\"a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\"");
  EXPECT_NO_THROW(nlohmann::json::parse(out));
}

// Runs without escapes are found eight bytes at a time: every byte value at every position of strings around
// that width is escaped (or replaced, when it is a lone UTF-8 byte) exactly as nlohmann::json does.
TEST(JsonWriterTest, EscapesEveryByteAtEveryPositionAsNlohmannDoes) {
  for (size_t size : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{16}, size_t{17}}) {
    for (size_t at = 0; at < size; ++at) {
      for (int c = 0; c < 256; ++c) {
        std::string text(size, 'a');
        text[at] = static_cast<char>(c);
        std::string out;
        JsonWriter json(out, -1);
        json.String(text);
        const std::string expected =
            nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        ASSERT_EQ(out, expected) << "byte " << c << " at " << at << " of " << size;
      }
    }
  }
}

TEST(ContentHashTest, IsStableAndSensitiveToEveryByteAndTheLength) {
  EXPECT_EQ(ContentHashHex(ContentHash("")), ContentHashHex(ContentHash("")));
  EXPECT_EQ(ContentHashHex(0x1234abcdULL), "000000001234abcd");
  std::string text(1000, 'x');
  std::set<uint64_t> seen{ContentHash(text)};
  for (size_t i = 0; i < text.size(); ++i) {
    std::string changed = text;
    changed[i] = 'y';
    EXPECT_TRUE(seen.insert(ContentHash(changed)).second) << "collision at byte " << i;
  }
  for (size_t n = 0; n < 80; ++n) EXPECT_TRUE(seen.insert(ContentHash(std::string(n, '\0'))).second) << n;
}

// The values an artifact index already on disk holds: the hash must not change between versions, or every
// file would be rewritten once after an upgrade.
TEST(ContentHashTest, KeepsItsValues) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += static_cast<char>('a' + (i * 7) % 26);
  const std::pair<size_t, const char*> expected[] = {
      {0, "5281910c2e425911"},   {1, "e37be25a93b66d6d"},  {7, "c3681995b11d81c1"},  {8, "ae677d05afe8988e"},
      {31, "a7e9ac766c76f79b"},  {32, "5139c04696709f50"}, {33, "60b5f2e37eb0c24b"}, {64, "49ed058d222bed4e"},
      {100, "d1ceb88c941c36e4"}, {200, "79adbf7e3f581ae9"}};
  for (const auto& [size, hex] : expected) {
    EXPECT_EQ(ContentHashHex(ContentHash(std::string_view(text).substr(0, size))), hex) << size;
  }
}

TEST(ContentHashTest, PiecesHashAsTheWhole) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>(i * 37 % 251);
  for (size_t size : {size_t{0}, size_t{5}, size_t{31}, size_t{32}, size_t{33}, size_t{95}, size_t{300}}) {
    std::string_view whole = std::string_view(text).substr(0, size);
    for (size_t step :
         {size_t{1}, size_t{3}, size_t{8}, size_t{31}, size_t{32}, size_t{33}, size_t{64}, size_t{1000}}) {
      ContentHasher hasher;
      for (size_t at = 0; at < whole.size(); at += step) hasher.Add(whole.substr(at, step));
      hasher.Add("");
      EXPECT_EQ(hasher.Finish(), ContentHash(whole)) << size << " in pieces of " << step;
      EXPECT_EQ(hasher.size(), size);
    }
  }
}

TEST(ReadFileTest, ReadsEmptySmallAndLargeFilesWhole) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sluice_read_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{1} << 20}) {
    std::string contents(size, '\0');
    for (size_t i = 0; i < size; ++i) contents[i] = static_cast<char>('a' + i % 26);
    std::ofstream(dir / "f", std::ios::binary) << contents;
    EXPECT_EQ(ReadFile(dir / "f"), contents) << size;
  }
  EXPECT_THROW(ReadFile(dir / "missing"), Error);
  EXPECT_THROW(ReadFile(dir), Error);
  std::filesystem::remove_all(dir);
}

TEST(BuildIdTest, IsTheExecutablesOwnBuildIdNote) {
  const std::string& hex = ExecutableBuildId();
  ASSERT_GE(hex.size(), 16u) << "the test binary was linked without --build-id";
  ASSERT_EQ(hex.size() % 2, 0u);
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(&ExecutableBuildId(), &hex);  // computed once
  // The raw bytes must be in the executable file itself.
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2)
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  std::string executable = ReadFile("/proc/self/exe");
  EXPECT_NE(executable.find(bytes), std::string::npos);
}

}  // namespace
}  // namespace sluice
