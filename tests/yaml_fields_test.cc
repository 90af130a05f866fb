// YamlField, the strict reader under every scenario, topology and profile:
// errors name the source, key path and line, and no document makes a
// reader crash, recurse without end or expand without bound (the cases
// below the first test came from the fuzz targets; fuzz/regressions/).
#include "core/util/yaml_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace st::util {
namespace {

std::string error_of(const std::string& text, void (*read)(const YamlField&) = nullptr) {
  try {
    const auto top = YamlField::from_string(text, "doc.yaml");
    if (read) read(top);
  } catch (const YamlError& e) {
    return e.what();
  }
  return "";
}

TEST(YamlField, ErrorsNameTheSourceKeyPathAndLine) {
  const auto read = [](const YamlField& top) {
    top.allow_only({"a", "b"});
    (void)top.at("a").at("x").number_in(0, 10);
  };
  EXPECT_EQ(error_of("a: {x: 3}\n", read), "");
  EXPECT_EQ(error_of("a: {x: 11}\n", read), "doc.yaml: a.x (line 1): 11 is out of range [0, 10]");
  EXPECT_EQ(error_of("b: 1\nc: 2\n", read), "doc.yaml: c (line 2): unknown key (expected one of: a, b)");
  EXPECT_NE(error_of("a: [1,\n", read).find("doc.yaml: line"), std::string::npos);
  EXPECT_EQ(error_of("- 1\n"), "doc.yaml: the text must be a YAML mapping");
}

TEST(YamlField, KeysMustBePlainText) {
  const auto read = [](const YamlField& top) { top.allow_only({"clusters"}); };
  EXPECT_EQ(error_of("clusters: 1\n{name: a}: 20\n", read),
            "doc.yaml: top level (line 2): a key must be plain text, not a list or mapping");
  EXPECT_NE(error_of("[1, 2]: x\n", [](const YamlField& top) { (void)top.keys(); }).find("(line 1): a key must be"),
            std::string::npos);
}

TEST(YamlField, AnAliasThatRefersToItselfIsAnError) {
  const std::string error = error_of("clusters: &a [*a]\n");
  EXPECT_NE(error.find("doc.yaml: line 1: nested more than 200 levels deep"), std::string::npos) << error;
}

TEST(YamlField, AliasesThatExpandWithoutBoundAreAnError) {
  std::string text = "a0: &a0 [x, x]\n";
  for (int i = 1; i < 20; ++i)
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  const std::string error = error_of(text);
  EXPECT_NE(error.find("expands to more than 200000 values"), std::string::npos) << error;
  // Ordinary reuse of an anchor is fine.
  EXPECT_EQ(error_of("wan: &w {mbps: 10}\nlan: *w\n"), "");
}

}  // namespace
}  // namespace st::util
