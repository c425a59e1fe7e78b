// PyYAML's implicit types of plain scalars, including scalars far longer than any regex engine's stack.
#include "project/sources/yaml_plain_scalar.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

TEST(YamlPlainScalar, ResolvesPyYamlImplicitTypes) {
  for (const char* text : {"yes", "No", "TRUE", "false", "on", "OFF"}) {
    EXPECT_EQ(ResolvePlainScalar(text), PlainScalarType::kBool) << text;
  }
  for (const char* text : {"0", "-0", "+7", "2024", "1_000", "0b1010", "-0b1_0", "017", "0_7", "0x1F", "0xdead_beef",
                           "1:30", "+190:20:30", "1:5"}) {
    EXPECT_EQ(ResolvePlainScalar(text), PlainScalarType::kInt) << text;
  }
  for (const char* text : {"1.", "1.5", "-0.5e+3", "1_0.0_1E-2", ".5", "._", ".5e-1", "1:30.5", "-1:30.", ".inf",
                           "-.Inf", "+.INF", ".nan", ".NaN", ".NAN"}) {
    EXPECT_EQ(ResolvePlainScalar(text), PlainScalarType::kFloat) << text;
  }
  for (const char* text : {"2024-01-02", "2024-1-2T3:04:05", "2024-01-02 03:04:05.123", "2024-01-02t03:04:05Z",
                           "2024-01-02 03:04:05 +05:30", "2024-1-2\t\t3:04:05.-5"}) {
    EXPECT_EQ(ResolvePlainScalar(text), PlainScalarType::kTimestamp) << text;
  }
  for (const char* text : {"", "y", "Yes ", "08", "0b", "0b2", "0x", "0X1", "1:60", "1:123", "0:30", "1e5", "1.e"}) {
    EXPECT_EQ(ResolvePlainScalar(text), PlainScalarType::kString) << text;
  }
  for (const char* text : {"-.5", "+.nan", ".info", "1.5:30", "2024-1-2", "20240-01-02", "2024-01-02T3:4:05",
                           "2024-01-02 03:04:05 ", "2024-01-02 03:04:05+123", "2024-01-02 03:04:05 X", "abc"}) {
    EXPECT_EQ(ResolvePlainScalar(text), PlainScalarType::kString) << text;
  }
}

TEST(YamlPlainScalar, LongScalarsResolveWithoutDeepRecursion) {
  const std::string digits(1 << 20, '1');
  EXPECT_EQ(ResolvePlainScalar(digits), PlainScalarType::kInt);
  EXPECT_EQ(ResolvePlainScalar(digits + "." + digits), PlainScalarType::kFloat);
  EXPECT_EQ(ResolvePlainScalar("2024-01-02 03:04:05." + digits), PlainScalarType::kTimestamp);
  EXPECT_EQ(ResolvePlainScalar(digits + "x"), PlainScalarType::kString);
}

}  // namespace
}  // namespace sluice
