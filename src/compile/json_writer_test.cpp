// The compile artifacts' JSON writer against nlohmann-json: the same bytes for the same document, pretty and
// compact, every byte escaped (or replaced) as nlohmann does, keys refused out of order.
#include "compile/json_writer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace sluice {
namespace {

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

// Every byte value at every position of short strings is escaped (or replaced, when it is a lone UTF-8 byte)
// exactly as nlohmann::json does.
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

}  // namespace
}  // namespace sluice
