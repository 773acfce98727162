// The hardware catalogue: the shipped file loads, names topologies that load, sources every
// figure, and holds the datasheet's numbers in SI units; bad input is a located error.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "input/input_error.h"
#include "tests/approx.h"
#include "tests/scratch_dir.h"
#include "topologies/builder.h"
#include "topologies/catalog.h"

using namespace wiresim::topo;
using wiresim::input::InputError;

namespace {

const std::string kTopologyDir = WIRESIM_SOURCE_DIR "/topologies";

// A valid one-system catalogue; each bad-input case below edits one line of it.
const std::string kGood =
    "accelerators:\n"                                                                      // 1
    "  H100-SXM:\n"                                                                        // 2
    "    model: NVIDIA H100 SXM5 80GB\n"                                                   // 3
    "    memory: {value: 80GB, source: datasheet, date: 2026-12-01}\n"                     // 4
    "    memory_bandwidth: {value: 3.35TB/s, source: datasheet, date: 2026-12-01}\n"       // 5
    "    peak_flops:\n"                                                                    // 6
    "      bf16: {value: 989.4TFLOP/s, source: datasheet, date: 2026-12-01}\n"             // 7
    "    power_w: {value: 700, source: datasheet, date: 2026-12-01}\n"                     // 8
    "    price_per_gpu_hour_usd: {value: 2.69, source: a price page, date: 2026-12-01}\n"  // 9
    "systems:\n"                                                                           // 10
    "  hgx-h100: {topology: hgx-h100.yaml, accelerator: H100-SXM}\n";                      // 11

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

Catalog load_text(const std::string& yaml, const Overrides& overrides = {}) {
  return load_catalog_text(yaml, "c.yaml", kTopologyDir, overrides);
}

InputError error_of(const std::string& yaml, const Overrides& overrides = {}) {
  try {
    load_text(yaml, overrides);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error for:\n" << yaml);
  return InputError("");
}

// Expects an error at `line`, at the column where `at` starts on that line.
void expect(const std::string& yaml, int line, const std::string& at, const std::string& says) {
  const InputError e = error_of(yaml);
  const std::string what = e.what();
  CAPTURE(what);
  std::size_t start = 0;
  for (int l = 1; l < line; ++l) start = yaml.find('\n', start) + 1;
  const std::string text = yaml.substr(start, yaml.find('\n', start) - start);
  REQUIRE(text.find(at) != std::string::npos);
  CHECK(e.file() == "c.yaml");
  CHECK(e.line() == line);
  CHECK(e.column() == static_cast<int>(text.find(at)) + 1);
  CHECK(e.message().find(says) != std::string::npos);
}

// The GPU model a topology declares (its first GPU's).
const Device& first_gpu(const LinkGraph& g) { return g.device(g.gpus().front()); }

}  // namespace

TEST_CASE("the shipped catalogue loads and covers the systems the planner needs") {
  const Catalog& c = default_catalog();
  std::set<std::string> names;
  for (const auto& e : c.entries) names.insert(e.name);
  for (const char* required : {"hgx-h100", "hgx-h200", "hgx-b200", "gb200-nvl72", "mi300x-8", "hgx-a100",
                               "pcie-h100-8gpu-2socket", "pcie-l40s-8gpu-2switch", "cluster-h100-ib",
                               "cluster-b200-ib", "cluster-mi300x-roce", "gb200-nvl72-ib"}) {
    CAPTURE(required);
    CHECK(names.count(required) == 1);
  }
  CHECK(names.size() == c.entries.size());  // no system twice
}

TEST_CASE("reading the shipped file gives the compiled-in catalogue") {
  const Catalog file = load_catalog(kTopologyDir + "/catalog.yaml");
  const Catalog& built_in = default_catalog();
  REQUIRE(file.entries.size() == built_in.entries.size());
  for (std::size_t i = 0; i < file.entries.size(); ++i) {
    CHECK(file.entries[i].name == built_in.entries[i].name);
    CHECK(std::filesystem::equivalent(file.entries[i].topology_path, built_in.entries[i].topology_path));
    CHECK(*file.entries[i].price_per_gpu_hour_usd.value == *built_in.entries[i].price_per_gpu_hour_usd.value);
  }
}

TEST_CASE("every entry's topology loads from anywhere, has GPUs, and agrees on the GPU's HBM") {
  for (const auto& e : default_catalog().entries) {
    CAPTURE(e.name);
    // The compiled-in paths do not depend on the current directory.
    CHECK(std::filesystem::path(e.topology_path).is_absolute());
    REQUIRE(std::filesystem::is_regular_file(e.topology_path));
    const LinkGraph g = load_topology(e.topology_path);
    CHECK(g.gpus().size() > 0);
    // The topology and the catalogue describe the same GPU; B200 differs by 4% (7.7 vs 8 TB/s).
    const double topo_bw = first_gpu(g).memory_bandwidth.count();
    CHECK(e.memory_bandwidth.value->count() == rel_approx(topo_bw).epsilon(0.05));
    // The capacity a memory check uses is the catalogue's, exactly.
    CHECK(first_gpu(g).memory.count() == e.memory.value->count());
  }
}

TEST_CASE("every figure of every entry has a value, a source and a read date") {
  auto check = [](const auto& figure, const std::string& what) {
    CAPTURE(what);
    CHECK(figure.value.has_value());
    CHECK(!figure.source.empty());
    CHECK(figure.date.size() == 10);
  };
  for (const auto& e : default_catalog().entries) {
    CAPTURE(e.name);
    CHECK(!e.model.empty());
    check(e.memory, "memory");
    check(e.memory_bandwidth, "memory_bandwidth");
    check(e.power_w, "power_w");
    check(e.price_per_gpu_hour_usd, "price_per_gpu_hour_usd");
    CHECK(e.peak_flops.count("bf16") == 1);
    for (const auto& [dtype, f] : e.peak_flops) check(f, "peak_flops." + dtype);
    // An estimate must say how it was reached.
    if (e.price_per_gpu_hour_usd.estimate) CHECK(!e.price_per_gpu_hour_usd.note.empty());
  }
}

TEST_CASE("units: the H100 SXM holds what its datasheet says, in bytes and FLOP/s") {
  const CatalogEntry& h100 = default_catalog().at("hgx-h100");
  // Oracles from NVIDIA's H100 SXM datasheet: 80 GB, 3.35 TB/s, BF16 1,979 and FP8 3,958
  // TFLOPS with sparsity (dense is half), 700 W.
  CHECK(h100.memory.value->count() == 80e9);
  CHECK(h100.memory_bandwidth.value->count() == rel_approx(3.35e12));
  CHECK(*h100.peak_flops.at("bf16").value == rel_approx(1979e12 / 2).epsilon(0.001));
  CHECK(*h100.peak_flops.at("fp8").value == rel_approx(3958e12 / 2).epsilon(0.001));
  CHECK(*h100.power_w.value == 700);
  // FP8 is twice BF16 on every GPU that has it (the L40S datasheet: 733 vs 362.05, 2.02x);
  // the A100 (Ampere) has none.
  for (const auto& e : default_catalog().entries)
    if (e.peak_flops.count("fp8"))
      CHECK(*e.peak_flops.at("fp8").value == rel_approx(2 * *e.peak_flops.at("bf16").value).epsilon(0.02));
  CHECK(default_catalog().at("hgx-a100").peak_flops.count("fp8") == 0);
  // Systems built of the same GPU share its figures.
  CHECK(default_catalog().at("cluster-h100-ib").memory.value->count() == 80e9);
}

TEST_CASE("the good text loads; an unknown system is an error naming the nearest") {
  const Catalog c = load_text(kGood);
  REQUIRE(c.entries.size() == 1);
  CHECK(c.entries[0].accelerator == "H100-SXM");
  CHECK(c.entries[0].topology == "hgx-h100.yaml");
  CHECK_THROWS_WITH_AS(c.at("hgx-h10"), doctest::Contains("did you mean 'hgx-h100'"), InputError);
}

TEST_CASE("bad input: unknown keys get a did-you-mean at their place") {
  expect(replace(kGood, "    memory: {", "    memroy: {"), 4, "memroy", "did you mean 'memory'");
  expect(replace(kGood, "      bf16:", "      bf61:"), 7, "bf61", "did you mean 'bf16'");
  expect(replace(kGood, "source: datasheet, date: 2026-12-01}\n    power", "sourse: datasheet, date: 2026-12-01}\n    power"),
         7, "sourse", "did you mean 'source'");
  expect(replace(kGood, "accelerator: H100-SXM}", "accelerator: H100-SMX}"), 11, "H100-SMX",
         "did you mean 'H100-SXM'");
}

TEST_CASE("bad input: values without their unit, or out of range") {
  expect(replace(kGood, "value: 80GB", "value: 80"), 4, "80,", "expected a size with a unit");
  expect(replace(kGood, "value: 3.35TB/s", "value: 3.35TB/s-bidir"), 5, "3.35TB/s-bidir", "not per direction");
  expect(replace(kGood, "value: 989.4TFLOP/s", "value: 989.4TFLOPS"), 7, "989.4TFLOPS", "989TFLOP/s");
  expect(replace(kGood, "value: 2.69", "value: -2.5"), 9, "-2.5", "expected a positive price");
  expect(replace(kGood, "value: 700", "value: 0"), 8, "0,", "expected a positive power");
  expect(replace(kGood, "value: 2.69, source: a price page, date: 2026-12-01", "value: 2.69, source: a price page, date: 1/12/2026"),
         9, "1/12/2026", "expected a date YYYY-MM-DD");
}

TEST_CASE("bad input: missing fields and files") {
  // A missing key is reported where its mapping starts.
  expect(replace(kGood, "    power_w: {value: 700, source: datasheet, date: 2026-12-01}\n", ""), 3, "model",
         "missing 'power_w'");
  expect(replace(kGood, "{value: 2.69, source: a price page, date: 2026-12-01}", "{value: 2.69, date: 2026-12-01}"), 9,
         "{value", "missing 'source'");
  expect(replace(kGood, "topology: hgx-h100.yaml", "topology: hgx-h1000.yaml"), 11, "hgx-h1000.yaml", "no file");
  expect(replace(kGood, "      bf16:", "      fp8:"), 7, "fp8", "missing 'bf16'");
}

TEST_CASE("a figure with no source says so, and has nothing else") {
  const std::string unsourced =
      replace(kGood, "{value: 2.69, source: a price page, date: 2026-12-01}", "{unsourced: no list price found}");
  const Catalog c = load_text(unsourced);
  CHECK(!c.entries[0].price_per_gpu_hour_usd.value.has_value());
  CHECK(c.entries[0].price_per_gpu_hour_usd.note == "no list price found");
  expect(replace(kGood, "{value: 2.69, source: a price page, date: 2026-12-01}", "{unsourced: none, value: 2.69}"), 9,
         "value", "nothing else");
}

TEST_CASE("--set overrides one figure of one system, read with the file's units") {
  const Catalog c = default_catalog(parse_overrides({"hgx-h100.price_per_gpu_hour_usd=2.5",
                                                     "hgx-h100.memory=96GB", "hgx-h100.peak_flops.fp8=2PFLOP/s"}));
  const CatalogEntry& h = c.at("hgx-h100");
  CHECK(*h.price_per_gpu_hour_usd.value == 2.5);
  CHECK(h.price_per_gpu_hour_usd.source == "--set hgx-h100.price_per_gpu_hour_usd=2.5");
  CHECK(h.memory.value->count() == 96e9);
  CHECK(*h.peak_flops.at("fp8").value == 2e15);
  // The same accelerator in another system keeps the file's figure; the default is untouched.
  CHECK(*c.at("cluster-h100-ib").price_per_gpu_hour_usd.value == 2.69);
  CHECK(*default_catalog().at("hgx-h100").price_per_gpu_hour_usd.value == 2.69);
}

TEST_CASE("bad --set: unknown system, figure or dtype; a value without its unit") {
  auto error = [](const std::string& setting) {
    try {
      default_catalog(parse_overrides({setting}));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    FAIL("no error for --set " << setting);
    return std::string();
  };
  CHECK(error("hgx-h10.power_w=700").find("did you mean 'hgx-h100'") != std::string::npos);
  CHECK(error("hgx-h100.price=2").find("cannot set 'price'") != std::string::npos);
  CHECK(error("hgx-h100.peak_flops.bf61=1PFLOP/s").find("did you mean 'bf16'") != std::string::npos);
  CHECK(error("hgx-h100.memory=80").find("--set hgx-h100.memory: expected a size with a unit") != std::string::npos);
  CHECK(error("hgx-h100.price_per_gpu_hour_usd=-1").find("expected a positive price") != std::string::npos);
}

TEST_CASE("an edited copy elsewhere may include the shipped catalogue and change one figure") {
  const auto dir = scratch_dir();
  const auto path = (dir / "mine.yaml").string();
  std::ofstream(path) << "include: " << kTopologyDir << "/catalog.yaml\n"
                      << "accelerators:\n"
                      << "  H100-SXM:\n"
                      << "    price_per_gpu_hour_usd: {value: 2.1, source: our contract, date: 2026-12-01}\n";
  const Catalog c = load_catalog(path);
  CHECK(c.entries.size() == default_catalog().entries.size());
  // Systems of that accelerator all take the new figure; topologies still resolve to the
  // shipped folder, where the included file names them.
  CHECK(*c.at("hgx-h100").price_per_gpu_hour_usd.value == 2.1);
  CHECK(*c.at("cluster-h100-ib").price_per_gpu_hour_usd.value == 2.1);
  CHECK(c.at("hgx-h100").price_per_gpu_hour_usd.source == "our contract");
  CHECK(std::filesystem::equivalent(c.at("hgx-h100").topology_path, kTopologyDir + "/hgx-h100.yaml"));
  std::filesystem::remove_all(dir);
}
