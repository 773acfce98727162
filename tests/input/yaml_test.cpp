// The YAML reader: positions, and the documents it refuses (each at a place, in one line).
#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "input/input_error.h"
#include "input/yaml.h"

using namespace wiresim::input;

namespace {

InputError error_of(const std::string& text) {
  try {
    read_yaml_text(text, "t.yaml");
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error for:\n" << text);
  return InputError("");
}

}  // namespace

TEST_CASE("values remember file, line and column") {
  const Value doc = read_yaml_text("a: 1\nb:\n  - x\n  - {c: 2.5GB/s}\n", "t.yaml");
  REQUIRE(doc.kind == Value::Kind::map);
  const Value& b = *find(doc, "b");
  REQUIRE(b.items.size() == 2);
  // "  - x": the x is at line 3, column 5.
  CHECK(b.items[0].at.line == 3);
  CHECK(b.items[0].at.column == 5);
  CHECK(*b.items[0].at.file == "t.yaml");
  CHECK(doc.entries[1].key_at.line == 2);
  CHECK(where(find(b.items[1], "c")->at) == "t.yaml:4:9");
  CHECK(read_yaml_text("", "e.yaml").kind == Value::Kind::null);
}

TEST_CASE("an alias that contains itself is refused where it is used, not followed") {
  // `a: &a [x, *a]`: the list anchored at line 1, column 4 holds itself.
  const InputError e = error_of("a: &a [x, *a]\n");
  CHECK(e.file() == "t.yaml");
  CHECK(e.line() == 1);
  CHECK(e.column() == 4);
  CHECK(e.message().find("an alias names a value that contains it (the value anchored at line 1)") !=
        std::string::npos);
  // Through a mapping, two levels down: the error is at the key whose value is the alias.
  const InputError m = error_of("top: &t\n  inner:\n    again: *t\n");
  CHECK(m.line() == 3);
  CHECK(m.column() == 5);
  CHECK(m.message().find("(the value anchored at line 1)") != std::string::npos);
}

TEST_CASE("a chain of aliases nests no deeper than kMaxDepth levels") {
  // Each line wraps the one before in a list: line k is k + 1 levels deep.
  std::string text = "l0: &l0 [x]\n";
  for (int k = 1; k <= kMaxDepth + 5; ++k) text += fmt::format("l{}: &l{} [*l{}]\n", k, k, k - 1);
  const InputError e = error_of(text);
  CHECK(e.message().find("nested deeper than 64 levels") != std::string::npos);
  CHECK(e.line() >= 1);
  // kMaxDepth - 2 lines of chain (plus the top mapping) still read.
  std::string ok = "l0: &l0 [x]\n";
  for (int k = 1; k < kMaxDepth - 2; ++k) ok += fmt::format("l{}: &l{} [*l{}]\n", k, k, k - 1);
  CHECK(read_yaml_text(ok, "t.yaml").entries.size() == static_cast<std::size_t>(kMaxDepth - 2));
}

TEST_CASE("a document that aliases expand past kMaxValues values is refused") {
  // Each level names the one below ten times: 10^7 values at the seventh.
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 7; ++i) {
    text += fmt::format("a{}: &a{} [*a{}", i, i, i - 1);
    for (int k = 1; k < 10; ++k) text += fmt::format(", *a{}", i - 1);
    text += "]\n";
  }
  CHECK(error_of(text).message().find("more than 1000000 values") != std::string::npos);
}

TEST_CASE("text that is not YAML, a structure as a key and a duplicate key are refused where they are") {
  const InputError bad = error_of("a: [1, 2\n");
  CHECK(bad.message().find("not valid YAML") != std::string::npos);
  const InputError key = error_of("? [a, b]\n: 1\n");
  CHECK(key.message().find("expected a plain key") != std::string::npos);
  const InputError twice = error_of("a: 1\nb: 2\na: 3\n");
  CHECK(twice.line() == 3);
  CHECK(twice.message() == "duplicate key 'a' (first at line 1)");
}

TEST_CASE("typed reads say what they expected and what they got") {
  const Value doc = read_yaml_text("n: 12\nf: 2.5\nb: yes\ns: [1]\nw: 3x\n", "t.yaml");
  CHECK(as_count(*find(doc, "n"), "n", 1, 100) == 12);
  CHECK(as_number(*find(doc, "f"), "f") == 2.5);
  CHECK(as_bool(*find(doc, "b"), "b"));
  CHECK_THROWS_WITH_AS(as_count(*find(doc, "n"), "n", 1, 10), "t.yaml:1:4: n: expected a count from 1 to 10, got 12",
                       InputError);
  CHECK_THROWS_WITH_AS(as_number(*find(doc, "w"), "w"), "t.yaml:5:4: w: expected a number, got '3x'", InputError);
  CHECK_THROWS_WITH_AS(as_string(*find(doc, "s"), "s"), "t.yaml:4:4: s: expected a word or text, got a list",
                       InputError);
  CHECK_THROWS_WITH_AS(require(doc, "missing", ""), "t.yaml:1:1: top level: missing 'missing'", InputError);
}
