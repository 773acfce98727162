// accuracy/bands: the hardware class of a run, the quantile bands from cross-validated points,
// the bands file (written, read back, refused when wrong) and the shipped bands.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "accuracy/bands.h"
#include "accuracy/dataset.h"
#include "input/input_error.h"
#include "tests/approx.h"
#include "topologies/builder.h"

using namespace wiresim;
using namespace wiresim::accuracy;

namespace {

const std::string kSource = WIRESIM_SOURCE_DIR;

Result ratios(const std::string& hw_class, std::initializer_list<double> sizes_and_ratios_pairs) {
  Result r;
  r.map.hw_class = hw_class;
  const std::vector<double> v(sizes_and_ratios_pairs);
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
    Point p;
    p.size = v[i];
    p.predicted_us = 100.0;
    p.measured_us = 100.0 * v[i + 1];
    r.points.push_back(p);
  }
  return r;
}

}  // namespace

TEST_CASE("every mapped data set's topology and GPUs give the class the map gives it") {
  // The map's classes were assigned by hand from the hardware; hardware_class must agree.
  const auto map = read_map(kSource + "/validation/map.yaml");
  int checked = 0;
  for (const auto& entry : map) {
    const std::string& name = entry.first;
    const Mapping& m = entry.second;
    if (m.unmapped || m.topology.empty() || m.hw_class == "summaries") continue;
    CAPTURE(name);
    const topo::LinkGraph g = topo::load_topology(m.topology, m.settings);
    CHECK(hardware_class(g, pick_ranks(g, m), m.p2p) == m.hw_class);
    ++checked;
  }
  CHECK(checked >= 40);
}

TEST_CASE("a band is the 10th and 90th percentile of measured / predicted time, by region") {
  // Ramp (1 MiB): ratios 1.0, 1.1, ..., 2.0 — eleven points, so the 10th percentile is 1.1 and
  // the 90th 1.9 exactly. Floor (1 KiB): one point, 0.5. Plateau: none.
  const Result ramp = ratios("x", {1 << 20, 1.0, 1 << 20, 1.1, 1 << 20, 1.2, 1 << 20, 1.3, 1 << 20, 1.4, 1 << 20, 1.5,
                        1 << 20, 1.6, 1 << 20, 1.7, 1 << 20, 1.8, 1 << 20, 1.9, 1 << 20, 2.0, 1024, 0.5});
  const Result other = ratios("y", {1 << 20, 3.0});
  const ErrorBands b = compute_bands({ramp, other});
  const Band r = b.at("x", 1 << 20);
  CHECK(r.points == 11);
  CHECK(r.low == rel_approx(1.1));
  CHECK(r.high == rel_approx(1.9));
  const Band f = b.at("x", 1024);
  CHECK(f.points == 1);
  CHECK(f.low == rel_approx(0.5));
  CHECK(f.high == rel_approx(0.5));
  // No plateau point: the class's band over every size (12 points) answers, and says so.
  const Band p = b.at("x", 1e9);
  CHECK(p.points == 12);
  CHECK(p.source.find("none measured") != std::string::npos);
  // A class with no data: every class's sizes pooled, and said so. Ramp: x's eleven and y's 3.0,
  // twelve ratios; the 90th percentile lies at 0.9 x 11 = 9.9, between 1.9 and 2.0: 1.99.
  const Band any = b.at("nope", 1 << 20);
  CHECK(any.points == 12);
  CHECK(any.high == rel_approx(1.99));
  CHECK(any.source.find("no checked data of class nope") != std::string::npos);
  CHECK_THROWS_AS(ErrorBands{}.at("x", 1e6), input::InputError);

  // Written and read back: the same numbers (to the 3 decimals written).
  const ErrorBands back = read_bands(write_bands(b, "# test\n"), "t.yaml");
  CHECK(back.at("x", 1 << 20).low == rel_approx(1.1));
  CHECK(back.at("x", 1 << 20).high == rel_approx(1.9));
  CHECK(back.at("x", 1e9).points == 12);
}

TEST_CASE("a bands file that is wrong is refused at its place") {
  try {
    read_bands("classes:\n  x:\n    floor: {low: 2.0, high: 1.0, points: 3}\n    ramp: {points: 0}\n"
               "    plateau: {points: 0}\n    all: {points: 0}\n",
               "b.yaml");
    FAIL("accepted low > high");
  } catch (const input::InputError& e) {
    CHECK(std::string(e.what()).find("b.yaml:3:") != std::string::npos);
  }
  CHECK_THROWS_AS(read_bands("classes:\n  x:\n    flor: {points: 0}\n", "b.yaml"), input::InputError);
}

TEST_CASE("the shipped bands give every class of the validation map a band with points") {
  const auto map = read_map(kSource + "/validation/map.yaml");
  const ErrorBands& b = shipped_bands();
  REQUIRE(b.classes.count(std::string(kAnyClass)));
  for (const auto& entry : map) {
    if (entry.second.hw_class == "summaries") continue;
    CAPTURE(entry.first);
    for (const double size : {1024.0, 1048576.0, 1e9}) {
      const Band band = b.at(entry.second.hw_class, size);
      CHECK(band.points > 0);
      CHECK(band.low > 0.0);
      CHECK(band.high >= band.low);
    }
  }
}
