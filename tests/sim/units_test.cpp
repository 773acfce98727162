#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/units.h"
#include "tests/approx.h"

using namespace wiresim::sim;

TEST_CASE("sizes parse with decimal and binary prefixes") {
  CHECK(parse_size("8B").count() == 8.0);
  CHECK(parse_size("4KiB").count() == 4096.0);
  CHECK(parse_size("64MB").count() == 64e6);
  CHECK(parse_size("1GiB").count() == 1073741824.0);
  CHECK(parse_size("1.5GB").count() == 1.5e9);
  CHECK(parse_size(" 2 TiB ").count() == 2.0 * 1099511627776.0);
}

TEST_CASE("a size without its B, or with an unknown unit, is refused") {
  CHECK_THROWS_AS(parse_size("8"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size("8G"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size("8XB"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size("-8B"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size("GB"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size(""), std::invalid_argument);
}

TEST_CASE("rates: bytes vs bits, per direction vs bidirectional") {
  // 450 GB/s = 4.5e11 B/s; 400 Gb/s = 400e9 / 8 = 5e10 B/s.
  CHECK(parse_rate("450GB/s").count() == 4.5e11);
  CHECK(parse_rate("400Gb/s").count() == 5e10);
  CHECK(parse_rate("25GBps").count() == 25e9);
  // A bidirectional headline is halved: 900 GB/s bidir = 450 GB/s per direction.
  CHECK(parse_rate("900GB/s-bidir").count() == 4.5e11);
  CHECK(parse_rate_text("900GB/s-bidir").was_bidirectional);
  CHECK_FALSE(parse_rate_text("900GB/s").was_bidirectional);
  CHECK(parse_rate("1.8TB/s-bidir").count() == 9e11);
  CHECK_THROWS_AS(parse_rate("450"), std::invalid_argument);
  CHECK_THROWS_AS(parse_rate("450GB"), std::invalid_argument);
  CHECK_THROWS_AS(parse_rate("450GX/s"), std::invalid_argument);
}

TEST_CASE("times parse from ps to s") {
  CHECK(parse_time("500ns").count() == rel_approx(5e-7));
  CHECK(parse_time("1.5us").count() == rel_approx(1.5e-6));
  CHECK(parse_time("1.5\xC2\xB5s").count() == rel_approx(1.5e-6));
  CHECK(parse_time("2ms").count() == rel_approx(2e-3));
  CHECK(parse_time("3s").count() == 3.0);
  CHECK_THROWS_AS(parse_time("3"), std::invalid_argument);
  CHECK_THROWS_AS(parse_time("3min"), std::invalid_argument);
}

TEST_CASE("unit arithmetic: bytes over a rate is a time") {
  // 1 GiB over 400 Gb/s: 2^30 / 5e10 = 21.47483648 ms.
  const Seconds t = parse_size("1GiB") / parse_rate("400Gb/s");
  CHECK(t.count() == rel_approx(0.02147483648));
  const Bytes b = parse_rate("100GB/s") * Seconds{1e-3};
  CHECK(b.count() == rel_approx(1e8));
  CHECK(Bytes{6} / Bytes{3} == 2.0);
}

TEST_CASE("units round-trip through their printed form") {
  for (const char* s : {"8 B", "4 KiB", "1 GiB", "1.5 GiB", "64 MiB"})
    CHECK(format_size(parse_size(std::string(s).erase(std::string(s).find(' '), 1))) == s);
  CHECK(format_rate(parse_rate("450GB/s")) == "450 GB/s");
  CHECK(format_rate(parse_rate("400Gb/s")) == "50 GB/s");
  CHECK(format_time(parse_time("1.5us")) == "1.50 us");
  CHECK(format_time(parse_time("2ms")) == "2.000 ms");
  CHECK(parse_time("1.50us").count() == parse_time("1.5us").count());
}

TEST_CASE("simulated time is integer picoseconds, rounded up") {
  CHECK(to_sim_time(Seconds{1e-6}) == 1'000'000);
  CHECK(to_sim_time(Seconds{1.5e-12}) == 2);
  CHECK(to_seconds(1'000'000).count() == rel_approx(1e-6));
}

