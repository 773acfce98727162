// Lines and fields: numbering, columns, and errors at file:line:column.
#include <doctest/doctest.h>

#include <string>

#include "input/input_error.h"
#include "input/lines.h"

using namespace wiresim::input;

TEST_CASE("lines are numbered from 1, with Windows line ends dropped") {
  Lines lines("a\r\n\nb,c", "f.csv");
  auto first = lines.next();
  REQUIRE(first);
  CHECK(first->text == "a");
  CHECK(first->number == 1);
  CHECK(lines.next()->text.empty());
  auto third = lines.next();
  CHECK(third->text == "b,c");
  CHECK(third->number == 3);
  CHECK_FALSE(lines.next());
  CHECK(lines.count() == 3);
}

TEST_CASE("fields keep their columns; empty ones are fields too") {
  // "a, bb,,  c ": a at 1, bb at 4 (after the space), the empty field at 7, c at 10.
  const auto f = split_fields("a, bb,,  c ");
  REQUIRE(f.size() == 4);
  CHECK(f[0].text == "a");
  CHECK(f[1].text == "bb");
  CHECK(f[1].column == 4);
  CHECK(f[2].text.empty());
  CHECK(f[3].text == "c");
  CHECK(f[3].column == 10);
  const auto w = split_words("  size\tcount  type");
  REQUIRE(w.size() == 3);
  CHECK(w[1].text == "count");
  CHECK(w[1].column == 8);
  CHECK(is_comment_or_blank("   # note"));
  CHECK(is_comment_or_blank(" \t"));
  CHECK_FALSE(is_comment_or_blank("1,# two"));
}

TEST_CASE("a bad field is an error at its line and column") {
  Lines lines("size,time\n1024, 5.2x\n", "d.csv");
  lines.next();
  const auto line = *lines.next();
  const auto f = split_fields(line.text);
  CHECK(line.as_number(f[0], "size") == 1024);
  CHECK_THROWS_WITH_AS(line.as_number(f[1], "time_us"), "d.csv:2:7: time_us: expected a number, got '5.2x'",
                       InputError);
  CHECK_THROWS_WITH_AS(line.as_number(Field{"inf", 3}, "x"), "d.csv:2:3: x: expected a number, got 'inf'", InputError);
  CHECK(line.as_size(Field{"1MiB", 1}, "cell").count() == 1048576);
  CHECK_THROWS_AS(line.as_size(Field{"1M", 1}, "cell"), InputError);
  CHECK(to_number<long long>("-12") == -12);
  CHECK_FALSE(to_number<long long>("12a"));
  CHECK_FALSE(to_number<double>(""));
}
