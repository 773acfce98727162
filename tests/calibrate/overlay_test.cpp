#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "calibrate/overlay.h"
#include "input/input_error.h"
#include "tests/approx.h"

using namespace wiresim::calibrate;
using namespace wiresim;
using sim::Bytes;
using sim::BytesPerSec;
using input::Collective;
using input::InputError;
using sim::Seconds;
using topo::Tier;

namespace {

topo::Device device(const std::string& name, topo::DeviceKind kind) {
  topo::Device d;
  d.name = name;
  d.kind = kind;
  return d;
}

// Two GPUs on an NVSwitch (450 GB/s each way, 0.5 us per link), both on one PCIe switch
// (64 GB/s) with a 64 GB/s uplink to the CPU, and a doubled 128 GB/s switch-to-switch link
// standing in for a wider uplink of the same tier.
struct Box {
  topo::LinkGraph g;
  topo::DeviceId gpu0, gpu1, nvswitch, pcie_switch, cpu;
  sim::LinkId gpu0_nv, nv_gpu1, gpu0_pcie, uplink;
  Box() {
    gpu0 = g.add_device(device("gpu0", topo::DeviceKind::gpu));
    gpu1 = g.add_device(device("gpu1", topo::DeviceKind::gpu));
    nvswitch = g.add_device(device("nvswitch0", topo::DeviceKind::nvswitch));
    pcie_switch = g.add_device(device("plx0", topo::DeviceKind::pcie_switch));
    cpu = g.add_device(device("cpu0", topo::DeviceKind::cpu));
    const BytesPerSec nv{450e9}, pcie{64e9};
    const Seconds half_us{0.5e-6};
    gpu0_nv = g.add_duplex({gpu0, nvswitch, Tier::nvlink, 18, nv, half_us});
    nv_gpu1 = g.add_duplex({nvswitch, gpu1, Tier::nvlink, 18, nv, half_us});
    gpu0_pcie = g.add_duplex({gpu0, pcie_switch, Tier::pcie, 1, pcie, half_us});
    g.add_duplex({gpu1, pcie_switch, Tier::pcie, 1, pcie, half_us});
    uplink = g.add_duplex({pcie_switch, cpu, Tier::pcie, 2, pcie * 2.0, half_us});
  }
  // A lone transfer on gpu0 -> nvswitch -> gpu1: latencies add, the narrowest link sets the rate.
  Seconds nvlink_copy(Bytes b) const {
    const auto& a = g.link(gpu0_nv);
    const auto& c = g.link(nv_gpu1);
    return a.latency + c.latency + b / std::min(a.bandwidth, c.bandwidth);
  }
};

InputError error_of(const std::string& text) {
  try {
    parse_overlay(text, "fit.yaml");
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return InputError("unreachable");
}

}  // namespace

TEST_CASE("an overlay reads, and unknown keys and tiers are refused with a hint") {
  const Overlay o = parse_overlay(
      "# a comment\n"
      "tiers:\n"
      "  nvlink: {bandwidth: 360GB/s, latency: 2us}\n"
      "  pcie:   {efficiency: 0.5}\n"
      "collectives:\n"
      "  - {collective: all_reduce, ranks: 8, latency: 49.7us, busbw: 119GB/s, source: a.log}\n",
      "fit.yaml");
  REQUIRE(o.tiers.size() == 2);
  CHECK(o.tiers.at(Tier::nvlink).bandwidth->count() == 360e9);
  CHECK(o.tiers.at(Tier::nvlink).latency->count() == rel_approx(2e-6));
  CHECK(o.tiers.at(Tier::pcie).efficiency == 0.5);
  REQUIRE(o.collectives.size() == 1);
  CHECK(o.collectives[0].collective == Collective::all_reduce);
  CHECK(o.collectives[0].busbw.count() == 119e9);

  const InputError key = error_of("tiers:\n  nvlink: {bandwidth: 360GB/s, latncy: 2us}\n");
  CHECK(key.line() == 2);
  CHECK(key.message() == "tiers.nvlink.latncy: unknown key 'latncy'; did you mean 'latency'?");
  const InputError tier = error_of("tiers:\n  nvlnk: {bandwidth: 360GB/s}\n");
  CHECK(tier.message() == "tiers: unknown tier 'nvlnk'; did you mean 'nvlink'?");
  const InputError unit = error_of("tiers:\n  pcie: {bandwidth: 24}\n");
  CHECK(unit.line() == 2);
  CHECK(unit.column() == 21);
  CHECK(unit.message().find("tiers.pcie.bandwidth: expected a rate") == 0);
  const InputError both = error_of("tiers:\n  pcie: {bandwidth: 24GB/s, efficiency: 0.5}\n");
  CHECK(both.message().find("not both") != std::string::npos);
  CHECK(error_of("tiers: [1, 2]\n").message() == "tiers: expected a mapping (key: value lines), got a list");
  CHECK(error_of("tiers: {nvlink: {bandwidth: 1GB/s}\n").line() >= 1);  // YAML syntax error
}

TEST_CASE("an overlay round-trips through its writer") {
  Overlay o;
  o.tiers[Tier::nvlink] = {BytesPerSec{371.25e9}, std::nullopt, Seconds{2.125e-6}, "a note"};
  o.tiers[Tier::pcie] = {std::nullopt, 0.86, std::nullopt, ""};
  o.collectives.push_back({Collective::all_gather, 8, Seconds{28e-6}, BytesPerSec{357e9}, "dir/x \"y\".log"});
  std::ostringstream out;
  write_overlay(out, o, "wiresim calibration overlay, a test");
  CHECK(out.str().rfind("# wiresim calibration overlay, a test\ntiers:\n  nvlink: {bandwidth: 371.25GB/s", 0) == 0);
  const Overlay back = parse_overlay(out.str(), "written.yaml");
  CHECK(back.tiers.at(Tier::nvlink).bandwidth->count() == rel_approx(371.25e9));
  CHECK(back.tiers.at(Tier::nvlink).latency->count() == rel_approx(2.125e-6));
  CHECK(back.tiers.at(Tier::pcie).efficiency == rel_approx(0.86));
  CHECK(back.collectives.at(0).collective == Collective::all_gather);
  CHECK(back.collectives.at(0).source == "dir/x \"y\".log");
  // A source with control characters (a file name with a tab, say) is escaped, not written raw.
  o.collectives.at(0).source = "a\tb\x01" "c";
  std::ostringstream escaped;
  write_overlay(escaped, o, "control characters");
  CHECK(escaped.str().find("source: \"a\\x09b\\x01c\"") != std::string::npos);
  CHECK(parse_overlay(escaped.str(), "written.yaml").collectives.at(0).source == "a\tb\x01" "c");
}

TEST_CASE("applying an overlay scales a tier's links and changes predictions as expected") {
  Box box;
  // Before: 1 GiB over gpu0 -> nvswitch -> gpu1 takes 2 × 0.5 us + 2^30 / 450e9 s.
  const Bytes gib{double(1 << 30)};
  CHECK(box.nvlink_copy(gib).count() == rel_approx(1e-6 + gib.count() / 450e9));

  Overlay o;
  o.tiers[Tier::nvlink].bandwidth = BytesPerSec{360e9};  // measured: 80% of the 450 GB/s links
  o.tiers[Tier::nvlink].latency = Seconds{3e-6};         // end to end, across the switch
  o.tiers[Tier::pcie].efficiency = 0.5;
  o.tiers[Tier::ib].efficiency = 0.9;                    // the box has no IB: nothing to do
  const auto applied = apply_overlay(box.g, o);
  REQUIRE(applied.size() == 3);
  CHECK(applied[0].tier == Tier::nvlink);
  CHECK(applied[0].links == 4);
  CHECK(applied[0].efficiency == rel_approx(0.8));
  CHECK(applied[2].tier == Tier::ib);
  CHECK(applied[2].links == 0);

  // NVLink: 450 × 0.8 = 360 GB/s on every link; 3 us over 2 hops (via the switch) = 1.5 us each.
  CHECK(box.g.link(box.gpu0_nv).bandwidth.count() == rel_approx(360e9));
  CHECK(box.g.link(box.gpu0_nv + 1).bandwidth.count() == rel_approx(360e9));
  CHECK(box.g.link(box.nv_gpu1).latency.count() == rel_approx(1.5e-6));
  // So 1 GiB now takes 3 us + 2^30 / 360e9 s: the bandwidth term grows by 450/360.
  CHECK(box.nvlink_copy(gib).count() == rel_approx(3e-6 + gib.count() / 360e9));
  // PCIe: halved, the 128 GB/s uplink stays twice a GPU's link; latency untouched.
  CHECK(box.g.link(box.gpu0_pcie).bandwidth.count() == rel_approx(32e9));
  CHECK(box.g.link(box.uplink).bandwidth.count() == rel_approx(64e9));
  CHECK(box.g.link(box.uplink).latency.count() == rel_approx(0.5e-6));
}

TEST_CASE("fits become an overlay: best β per tier, latency from peer kernels less launch") {
  auto group = [](std::string kind, std::string tier, double alpha_us, double beta_gbps) {
    GroupFit f;
    f.group.kind = kind;
    f.group.tier = tier;
    f.group.label = kind + " " + tier;
    f.group.collective = input::parse_collective(kind);
    f.group.ranks = f.group.collective ? 8 : 2;
    f.fit.alpha = Seconds{alpha_us * 1e-6};
    f.fit.beta = beta_gbps > 0 ? BytesPerSec{beta_gbps * 1e9} : BytesPerSec::unlimited();
    f.fit.beta_identifiable = beta_gbps > 0;
    return f;
  };
  const std::vector<GroupFit> fits = {
      group("launch", "launch", 4.0, 0),          group("p2p_copy", "nvlink", 9.0, 370),
      group("p2p_load", "nvlink", 6.5, 390),      group("h2d_pinned", "pcie", 2.0, 55),
      group("d2h_pinned", "pcie", 2.2, 52),       group("d2d", "hbm", 3.0, 1500),
      group("all_reduce", "nccl", 30.0, 360)};
  const Overlay o = overlay_from_fits(fits);
  REQUIRE(o.tiers.size() == 2);  // hbm, launch and nccl are not link tiers
  CHECK(o.tiers.at(Tier::nvlink).bandwidth->count() == rel_approx(390e9));
  // 6.5 us for a peer load kernel, 4 us of which an empty kernel also takes.
  CHECK(o.tiers.at(Tier::nvlink).latency->count() == rel_approx(2.5e-6));
  CHECK(o.tiers.at(Tier::pcie).bandwidth->count() == rel_approx(55e9));
  CHECK_FALSE(o.tiers.at(Tier::pcie).latency.has_value());
  REQUIRE(o.collectives.size() == 1);
  CHECK(o.collectives[0].ranks == 8);
}
