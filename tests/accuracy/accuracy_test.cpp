// accuracy/: the validation map and data files, the statistics by region, and the fitted
// constants — their tags in models/params.yaml, their data sets' roles, and that the committed
// values are where the fit leaves them.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "accuracy/dataset.h"
#include "accuracy/fit.h"
#include "accuracy/runner.h"
#include "accuracy/stats.h"
#include "input/input_error.h"
#include "tests/approx.h"
#include "tests/scratch_dir.h"

using namespace wiresim;
using namespace wiresim::accuracy;

namespace {

namespace fs = std::filesystem;

const std::string kSource = WIRESIM_SOURCE_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch(const std::string& name, const std::string& text) {
  const fs::path dir = scratch_dir();
  std::ofstream(dir / name) << text;
  return dir / name;
}

Result result_of(std::vector<std::pair<double, double>> size_and_error) {
  Result r;
  for (auto [size, err] : size_and_error) {
    Point p;
    p.size = size;
    p.predicted_us = 100.0;
    p.measured_us = 100.0 * (1.0 + err / 100.0);   // error() = measured / predicted - 1
    r.points.push_back(p);
  }
  return r;
}

// Every role-fit data set of the validation map, ready to run.
std::vector<Prepared> fit_sets() {
  const auto map = read_map(kSource + "/validation/map.yaml");
  std::vector<std::string> files;
  for (const auto& [name, m] : map)
    if (m.role == Role::fit) files.push_back(kSource + "/validation/data/" + name);
  return prepare(files, map, "validation/map.yaml");
}

}  // namespace

TEST_CASE("a data file's '-g N' says how many GPUs one thread launches for") {
  const auto path = scratch("g8.csv",
                            "# collective: all_reduce_perf, float\n# command: ./all_reduce_perf -b 8 -e 1G -f 2 -g 8\n"
                            "size_bytes,time_us,algbw_GBps,busbw_GBps\n8,32.0,0.00,0.00\n1024,32.5,0.03,0.06\n");
  const DataFile d = read_data(path.string());
  CHECK(d.collective == "all_reduce_perf");
  CHECK(d.gpus_per_thread == 8);
  REQUIRE(d.points.size() == 2);
  CHECK(d.points[1].size == 1024.0);
  const auto one = scratch("g1.csv", "# command: mpirun -np 16 all_reduce_perf -g 1\nsize_bytes,time_us\n8,20\n");
  CHECK(read_data(one.string()).gpus_per_thread == 1);
  const auto none = scratch("none.csv", "size_bytes,time_us\n8,20\n");
  CHECK(read_data(none.string()).gpus_per_thread == 1);
}

TEST_CASE("a row whose algbw is not its size over its time is refused at its column") {
  const auto good = scratch("ok.csv", "size_bytes,time_us,algbw_GBps,busbw_GBps\n1048576,82.17,12.76,24.73\n");
  CHECK(read_data(good.string()).points.size() == 1);
  // The same row with a digit dropped from the time (8.217 us would be 127.611 GB/s).
  const auto bad = scratch("typo.csv", "# collective: all_reduce_perf\nsize_bytes,time_us,algbw_GBps,busbw_GBps\n"
                                       "1048576,82.17,12.76,24.73\n1048576,8.217,12.76,24.73\n");
  try {
    read_data(bad.string());
    FAIL("a row whose columns disagree was accepted");
  } catch (const input::InputError& e) {
    CHECK(std::string(e.what()).find("typo.csv:4:15:") != std::string::npos);
    CHECK(std::string(e.what()).find("127.611 GB/s") != std::string::npos);
  }
  // No algbw column (or an empty one): nothing to check.
  CHECK(read_data(scratch("two.csv", "size_bytes,time_us\n1048576,8.217\n").string()).points.size() == 1);
}

TEST_CASE("a file whose busbw says another rank count than its mapping is refused, with the count it says") {
  // 16 ranks' all_reduce (busbw = 1.875 x algbw) mapped to one 8-GPU node (1.75 x).
  const auto data = scratch("r16.csv", "# collective: all_reduce_perf, float\nsize_bytes,time_us,algbw_GBps,busbw_GBps\n"
                                       "1024,30.0,0.03,0.06\n1073741824,4484.9,239.41,448.90\n");
  const std::string topology = kSource + "/topologies/hgx-h100.yaml";
  const auto wrong = scratch("r16.yaml", "datasets:\n  r16.csv: {topology: " + topology + "}\n");
  const auto sets = prepare({data.string()}, read_map(wrong.string()), wrong.string());
  REQUIRE(sets.size() == 1);
  const Result r = run(sets.front(), models::default_params(), models::Method::analytic);
  REQUIRE(r.skipped.has_value());
  CHECK(r.skipped->find("r16.csv:4:1:") != std::string::npos);   // the first row with digits enough
  CHECK(r.skipped->find("about 16 ranks") != std::string::npos);
  CHECK(r.skipped->find("8 GPUs") != std::string::npos);
  CHECK(r.points.empty());
  // Mapped to 16 GPUs (2 nodes) it runs.
  const auto right = scratch("r16b.yaml", "datasets:\n  r16.csv: {topology: " + kSource +
                                              "/topologies/cluster-h100-ib.yaml, set: {nodes: 2}}\n");
  const Result ok = run(prepare({data.string()}, read_map(right.string()), right.string()).front(),
                        models::default_params(), models::Method::analytic);
  CHECK_FALSE(ok.skipped.has_value());
  CHECK(ok.points.size() == 2);
}

TEST_CASE("the map's roles and classes are read; a bad role is refused at its position") {
  const auto good = scratch("map.yaml",
                            "datasets:\n  a.csv: {topology: t.yaml, role: checked, class: nvlink-node, gpus_per_thread: 8}\n"
                            "  b.csv: {topology: t.yaml, role: fit}\n");
  const auto map = read_map(good.string());
  CHECK(map.at("a.csv").role == Role::checked);
  CHECK(map.at("a.csv").hw_class == "nvlink-node");
  CHECK(map.at("a.csv").gpus_per_thread == 8);
  CHECK(map.at("b.csv").role == Role::fit);
  const auto bad = scratch("bad.yaml", "datasets:\n  a.csv: {topology: t.yaml, role: training}\n");
  try {
    read_map(bad.string());
    FAIL("a bad role was accepted");
  } catch (const input::InputError& e) {
    CHECK(std::string(e.what()).find("bad.yaml:2:") != std::string::npos);
    CHECK(std::string(e.what()).find("fit, checked or holdout") != std::string::npos);
  }
}

TEST_CASE("regions split sizes at 64 KiB and 256 MiB; the bias is the signed median") {
  CHECK(in_region(65535, Region::floor));
  CHECK(in_region(65536, Region::ramp));
  CHECK(in_region(256.0 * 1024 * 1024 - 1, Region::ramp));
  CHECK(in_region(256.0 * 1024 * 1024, Region::plateau));
  CHECK(in_region(1024.0 * 1024, Region::large));
  // Floor errors +10, +20, -5: |e| median 10, bias +10. Ramp +30. Plateau -4, -6: bias -5.
  const Result r = result_of({{8, 10}, {1024, 20}, {4096, -5}, {1 << 20, 30}, {1 << 30, -4}, {2.0 * (1 << 30), -6}});
  const Stats floor = stats(r, Region::floor);
  CHECK(floor.count == 3);
  CHECK(floor.median_abs == rel_approx(10.0));
  CHECK(floor.bias == rel_approx(10.0));
  CHECK(floor.max_abs == rel_approx(20.0));
  CHECK(stats(r, Region::ramp).bias == rel_approx(30.0));
  CHECK(stats(r, Region::plateau).bias == rel_approx(-5.0));
  CHECK(std::isnan(stats(result_of({{8, 1}}), Region::plateau).bias));
  // Two sets: medians |e| 10 and 5 -> median of medians 7.5; one above 15 % none.
  const std::vector<Result> two{result_of({{8, 10}, {16, -10}}), result_of({{8, 5}})};
  const Summary s = summarise(two, [](const Result&) { return true; });
  CHECK(s.sets == 2);
  CHECK(s.median_of_medians == rel_approx(7.5));
  CHECK(s.above15 == 0);
  CHECK(s.regions[0].bias == rel_approx(5.0));   // floor: -10, 5, 10
}

TEST_CASE("write_fitted rewrites exactly the tagged values, every line that carries the tag") {
  FitReport rep;
  for (const auto& c : fitted_constants()) rep.constants.push_back({c.name, c.unit, c.prior, c.prior, true});
  rep.constants[0].value = 12.3;   // host_launch
  REQUIRE(fitted_constants()[0].name == "host_launch");
  const std::string text = "host_launch: 4.0us   # [F:host_launch]\nother: 4.0us\n"
                           "  x: {a: 1, host_launch: 1us}  # again [F:host_launch]\n";
  const std::string out = write_fitted(text, rep);
  CHECK(out == "host_launch: 12.3us   # [F:host_launch]\nother: 4.0us\n"
               "  x: {a: 1, host_launch: 12.3us}  # again [F:host_launch]\n");
}

TEST_CASE("every fitted constant is tagged in models/params.yaml, and every fit data set is fitted on") {
  const std::string params = slurp(kSource + "/models/params.yaml");
  std::set<std::string> names;
  for (const auto& c : fitted_constants()) {
    CAPTURE(c.name);
    names.insert(c.name);
    CHECK(params.find("[F:" + c.name + "]") != std::string::npos);
  }
  const std::regex tag("\\[F:([a-z0-9_.]+)\\]");
  for (std::sregex_iterator it(params.begin(), params.end(), tag), end; it != end; ++it) {
    CAPTURE((*it)[1].str());
    CHECK(names.count((*it)[1].str()));
  }
  // Roles: a constant's data sets are all 'fit'; a 'fit' set has a constant fitted on it.
  const auto map = read_map(kSource + "/validation/map.yaml");
  std::set<std::string> used;
  for (const auto& c : fitted_constants())
    for (const auto& d : c.datasets) {
      CAPTURE(d);
      REQUIRE(map.count(d));
      CHECK(map.at(d).role == Role::fit);
      used.insert(d);
    }
  for (const auto& entry : map) {
    const std::string& name = entry.first;  // not a structured binding: clang cannot capture one
    const auto& m = entry.second;
    CAPTURE(name);
    CHECK(!m.hw_class.empty());
    if (m.role == Role::fit) CHECK(used.count(name));
  }
}

TEST_CASE("the committed constants are where the fit leaves them: no grid step beside them does better") {
  // The fit (wiresim validate --fit) moves a constant only to a strictly better value, so at
  // its result no neighbour on the grid is strictly better for that constant's own objective.
  const auto sets = fit_sets();
  const models::Params& params = models::default_params();
  for (const auto& c : fitted_constants()) {
    CAPTURE(c.name);
    std::vector<Prepared> own;   // its sets' sizes of its region (restricted)
    for (const auto& s : sets)
      if (std::count(c.datasets.begin(), c.datasets.end(), s.name)) own.push_back(restricted(s, c.region));
    REQUIRE(!own.empty());
    const auto score = [&](double v) {
      models::Params p = params;
      c.set(p, v);
      double total = 0.0;
      for (const auto& s : own) total += stats(run(s, p, models::Method::simulate), c.region).median_abs;
      return total;
    };
    const double at = c.get(params);
    const double here = score(at);
    for (double step : {-c.grid, c.grid}) {
      const double v = std::clamp(at + step, c.lo, c.hi);
      if (v == at) continue;
      CHECK(score(v) >= here - 1e-9);
    }
  }
}

TEST_CASE("every data set a constant is fitted on exercises it: moving the constant moves that set's objective") {
  // A set whose objective does not move when its constant does adds a constant to the fit and
  // fits nothing; the constant would claim a fit on hardware it was never fitted on.
  const auto sets = fit_sets();
  for (const auto& c : fitted_constants()) {
    CAPTURE(c.name);
    const auto idle = idle_sets(c, sets, models::default_params(), models::Method::simulate);
    std::string names;
    for (const auto& n : idle) names += n + " ";
    CHECK_MESSAGE(idle.empty(), "idle: " << names);
  }
}

TEST_CASE("a constant that changes nothing leaves every one of its sets idle") {
  const auto map = read_map(kSource + "/validation/map.yaml");
  const std::string a100 = "a100_hgx8_allreduce_oci-bm-gpu4-ocitutorials.csv";
  const auto sets = prepare({kSource + "/validation/data/" + a100}, map, "validation/map.yaml");
  double unused = 3.0;
  FittedConstant c;
  c.name = "nothing";
  c.unit = "us";
  c.lo = 0.0, c.hi = 10.0, c.grid = 0.1;
  c.datasets = {a100};
  c.set = [&unused](models::Params&, double v) { unused = v; };
  c.get = [&unused](const models::Params&) { return unused; };
  CHECK(idle_sets(c, sets, models::default_params(), models::Method::simulate) == std::vector<std::string>{a100});
  // The host launch sets the A100 set's floor: it is not idle there.
  const auto& host = *std::find_if(fitted_constants().begin(), fitted_constants().end(),
                                   [](const FittedConstant& f) { return f.name == "host_launch"; });
  CHECK(idle_sets(host, sets, models::default_params(), models::Method::simulate).empty());
}
