// The machine options (tools/machine_input.h) are one group: every simulating command takes
// them, and each reaches what the command runs — validate's overlay, run's and sweep's --p2p.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/approx.h"
#include "tests/tools/run_binary.h"

using namespace wiresim_test;

namespace {

// The long options a subcommand's --help lists.
bool lists(const std::string& help, const std::string& option) {
  return help.find(option + " ") != std::string::npos || help.find(option + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("coll, run, sweep, jobs and calibrate compare list the same machine options; validate and plan the ones they can use") {
  const std::vector<std::string> all{"--topo",   "--set",     "--p2p",        "--p2p-level",   "--gdr",   "--net",
                                     "--fail",   "--degrade", "--params",     "--overlay",     "--max-memory",
                                     "--max-events"};
  for (const char* cmd : {"coll", "run", "sweep", "jobs", "calibrate compare"}) {
    const Run r = wiresim(std::string(cmd) + " --help");
    CAPTURE(cmd);
    REQUIRE(r.exit_code == 0);
    for (const auto& o : all) CHECK_MESSAGE(lists(r.out, o), o);
  }
  const Run v = wiresim("validate --help");
  REQUIRE(v.exit_code == 0);
  for (const char* o : {"--params", "--overlay", "--max-memory", "--max-events", "--format"}) CHECK_MESSAGE(lists(v.out, o), o);
  // Data sets name their own topology and transport: validate takes no --topo, --set or --p2p.
  for (const char* o : {"--topo", "--set", "--p2p", "--p2p-level", "--gdr", "--net", "--fail", "--degrade"})
    CHECK_MESSAGE(!lists(v.out, o), o);
  // The planner spans the catalogue's topologies: the transport knobs, no topology, faults or overlay.
  const Run p = wiresim("plan --help");
  REQUIRE(p.exit_code == 0);
  for (const char* o : {"--p2p", "--p2p-level", "--gdr", "--net", "--params", "--max-memory"}) CHECK_MESSAGE(lists(p.out, o), o);
  for (const char* o : {"--topo", "--fail", "--degrade", "--overlay"}) CHECK_MESSAGE(!lists(p.out, o), o);
}

TEST_CASE("validate --overlay: the overlay's parameters and measured tiers change the predictions") {
  const std::string set = "validation/data/h100_hgx8_allreduce_nccl-tests-i290.csv";
  const auto predicted = [&](const std::string& extra) {
    const Run r = wiresim("validate " + set + " --format json" + extra);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    std::vector<double> us;
    for (const auto& p : j["datasets"][0]["points"]) us.push_back(p["predicted_us"].get<double>());
    return std::make_pair(us, j.contains("overlay"));
  };
  const auto [plain, plain_named] = predicted("");
  CHECK_FALSE(plain_named);
  // A 40 us launch overhead on Hopper: every size gets slower by about that much or more.
  const fs::path launch = scratch() / "launch-overlay.yaml";
  std::ofstream(launch) << "parameters:\n  architecture: hopper\n  launch_overhead: 40us\n";
  const auto [slow, slow_named] = predicted(" --overlay " + launch.string());
  CHECK(slow_named);
  REQUIRE(slow.size() == plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) CHECK(slow[i] > plain[i] + 10.0);
  // A measured NVLink rate of a quarter of the nominal: the largest size takes far longer.
  const fs::path tier = scratch() / "tier-overlay.yaml";
  std::ofstream(tier) << "tiers:\n  nvlink: {bandwidth: 100GB/s}\n";
  const auto [narrow, narrow_named] = predicted(" --overlay " + tier.string());
  CHECK(narrow_named);
  CHECK(narrow.back() > 2.0 * plain.back());
}

TEST_CASE("an overlay's fitted parameters reach only the collectives and reach of their scope") {
  // Fitted on an all_to_all within one node: a 40 us launch overhead for Hopper.
  const fs::path scoped = scratch() / "scoped-overlay.yaml";
  std::ofstream(scoped) << "parameters:\n  architecture: hopper\n  launch_overhead: 40us\n"
                           "  scope: {collectives: [all_to_all], reach: within_node}\n";
  const auto time_us = [](const std::string& cmd) {
    const Run r = wiresim(cmd + " --format json");
    CAPTURE(cmd);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    return std::make_pair(j["results"][0]["time_us"].get<double>(), j.value("overlay", std::string()));
  };
  const std::string node = "--topo topologies/hgx-h100.yaml --sizes 1MiB";
  const std::string two = "--topo topologies/cluster-h100-ib.yaml --set nodes=2 --sizes 1MiB";
  // In scope: the all_to_all on one node pays the 40 us.
  const auto [a2a, a2a_note] = time_us("coll all_to_all " + node);
  const auto [a2a_scoped, a2a_scoped_note] = time_us("coll all_to_all " + node + " --overlay " + scoped.string());
  CHECK(a2a_scoped > a2a + 35.0);
  CHECK(a2a_scoped_note.find("fitted on all_to_all within one node") != std::string::npos);
  CHECK(a2a_scoped_note.find("NOT applied") == std::string::npos);
  // Out of scope, by family (send_recv) and by reach (all_to_all across nodes): the built-in
  // values, to the bit, and the overlay's line says so.
  for (const std::string& c : {"coll send_recv " + node, "coll all_to_all " + two}) {
    const auto [plain, plain_note] = time_us(c);
    const auto [under, note] = time_us(c + " --overlay " + scoped.string());
    CAPTURE(c);
    CHECK(under == plain);
    CHECK(note.find("NOT applied") != std::string::npos);
  }
  // A scope naming what does not exist is refused where it is written.
  const fs::path bad = scratch() / "bad-scope.yaml";
  std::ofstream(bad) << "parameters:\n  architecture: hopper\n  scope: {collectives: [all_to_all], reach: sideways}\n";
  const Run r = wiresim("coll all_to_all " + node + " --overlay " + bad.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad-scope.yaml:3:") != std::string::npos);
  CHECK(r.err.find("expected within_node, across_nodes or both, got 'sideways'") != std::string::npos);
}

TEST_CASE("run --p2p off reaches the step: GPUs of a PCIe box exchange through host memory, and the output says so") {
  const std::string scenario = "run scenarios/llama8b-tp4-pcie-switch.yaml --format json";
  const Run on = wiresim(scenario);
  const Run off = wiresim(scenario + " --p2p off");
  REQUIRE(on.exit_code == 0);
  REQUIRE(off.exit_code == 0);
  const auto a = nlohmann::json::parse(on.out), b = nlohmann::json::parse(off.out);
  CHECK_FALSE(a.contains("transport"));
  CHECK(b["transport"].get<std::string>().find("NCCL_P2P_DISABLE=1") != std::string::npos);
  // Through host memory at the SHM rate, not PCIe peer-to-peer: slower.
  CHECK(b["step_time_ms"].get<double>() > 1.05 * a["step_time_ms"].get<double>());
  const Run table = wiresim("run scenarios/llama8b-tp4-pcie-switch.yaml --p2p off");
  CHECK(table.out.find("NCCL_P2P_DISABLE=1") != std::string::npos);
  const Run bad = wiresim("run scenarios/llama8b-tp4-pcie-switch.yaml --p2p maybe");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--p2p: expected on or off") != std::string::npos);
}

TEST_CASE("coll --gdr off: a 2-node H100 all_reduce is slower at large sizes, and says why") {
  const std::string c = "coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 --sizes 1GiB --format json";
  const Run on = wiresim(c);
  const Run off = wiresim(c + " --gdr off");
  REQUIRE(on.exit_code == 0);
  REQUIRE(off.exit_code == 0);
  const double t_on = nlohmann::json::parse(on.out)["results"][0]["time_us"].get<double>();
  const auto j = nlohmann::json::parse(off.out);
  CHECK(j["results"][0]["time_us"].get<double>() > 1.3 * t_on);
  CHECK(j["gdr"] == "off");
  // Auto is NCCL's rule, and on these PIX NICs it means GDR: the same as forcing it on.
  const Run forced = wiresim(c + " --gdr on");
  CHECK(nlohmann::json::parse(forced.out)["results"][0]["time_us"].get<double>() == t_on);
  const Run why = wiresim("coll all_reduce --topo topologies/cluster-h100-ib.yaml --set nodes=2 --sizes 1GiB --gdr off "
                          "--explain --gpus-per-node 1");
  REQUIRE(why.exit_code == 0);
  CHECK(why.out.find("NET via host memory") != std::string::npos);
  CHECK(why.out.find("no GPUDirect RDMA") != std::string::npos);
  const Run bad = wiresim(c + " --gdr maybe");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--gdr: expected auto, on or off") != std::string::npos);
}

TEST_CASE("a scenario's transport: section is its step's; the command line's --net wins; a bad knob is located") {
  const auto step_ms = [](const Run& r) {
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["step_time_ms"].get<double>();
  };
  const Run healthy = wiresim("run scenarios/llama70b-2node-tp16.yaml --format json");
  const Run socket = wiresim("run scenarios/llama70b-2node-tp16-socket.yaml --format json");
  const double t_ib = step_ms(healthy), t_socket = step_ms(socket);
  // NET/Socket: the TP 16 all_reduces cross the nodes over one TCP stream per channel
  // connection, several times slower than the NICs' RDMA (docs/scenarios.md).
  CHECK(t_socket > 3.0 * t_ib);
  CHECK(nlohmann::json::parse(socket.out)["transport"].get<std::string>().find("NET/Socket") != std::string::npos);
  CHECK(step_ms(wiresim("run scenarios/llama70b-2node-tp16.yaml --net socket --format json")) == t_socket);
  CHECK(step_ms(wiresim("run scenarios/llama70b-2node-tp16-socket.yaml --net ib --format json")) == t_ib);
  const Run why = wiresim("run scenarios/llama70b-2node-tp16-socket.yaml --explain");
  REQUIRE(why.exit_code == 0);
  CHECK(why.out.find("NET/Socket through host memory") != std::string::npos);

  const fs::path dir = scratch();
  const std::string text = slurp(fs::path(WIRESIM_SOURCE_DIR) / "scenarios/llama70b-2node-tp16-socket.yaml");
  const auto write = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    std::ofstream(dir / name) << t;
    return (dir / name).string();
  };
  // Read with the scenario, before its topology.
  const std::string bad = write("bad-net.yaml", "transport: {net: socket}", "transport: {net: tcp}");
  expect_one_line_error(wiresim("run " + bad), "bad-net.yaml:12:", "transport.net: expected ib or socket, got 'tcp'");
  const std::string unknown = write("bad-key.yaml", "transport: {net: socket}", "transport: {rdma: on}");
  expect_one_line_error(wiresim("run " + unknown), "bad-key.yaml:12:", "rdma");
}

TEST_CASE("the shipped gdr-off scenario: the TP 16 prefill without GPUDirect RDMA is slower, and says why") {
  const auto json = [](const Run& r) {
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto on = json(wiresim("run scenarios/llama70b-2node-tp16.yaml --format json"));
  const auto off = json(wiresim("run scenarios/llama70b-2node-tp16-gdr-off.yaml --format json"));
  const double t_on = on["step_time_ms"].get<double>(), t_off = off["step_time_ms"].get<double>();
  // Without GDR a NET byte goes GPU -> PCIe switch -> upstream switch -> CPU and back down to
  // the NIC (hgx-h100.yaml), on both nodes: 6 PCIe hops a side instead of 2, so the PCIe tier
  // carries 12 hop-bytes per NET byte, 6 x the IB tier's (each NET byte crosses 2 IB links,
  // NIC -> leaf -> NIC). Its all_reduces run the NVLS tree: on 2 nodes each node sends its
  // whole buffer once (half up one tree, half down the other), 4 x 64 MiB of IB link bytes
  // per all_reduce, 160 of them.
  const auto tier = [](const nlohmann::json& j, const char* t) {
    return j["breakdown"]["by_tier"][t]["bytes"].get<double>();
  };
  CHECK(off["breakdown"]["by_collective"]["tp_all_reduce"]["algorithm"] == "nvls_tree/simple");
  CHECK(tier(off, "ib") == rel_approx(160.0 * 4 * 64 * 1048576).epsilon(1e-9));
  CHECK(tier(off, "pcie") == rel_approx(6 * tier(off, "ib")).epsilon(1e-6));
  // ... and the all_reduces wait for it: more than 1.3x the GDR step (docs/scenarios.md).
  CHECK(t_off > 1.3 * t_on);
  CHECK(off["transport"].get<std::string>().find("gdr off") != std::string::npos);
  // The command line wins over the file's transport: section.
  CHECK(json(wiresim("run scenarios/llama70b-2node-tp16-gdr-off.yaml --gdr auto --format json"))["step_time_ms"] == t_on);
  CHECK(json(wiresim("run scenarios/llama70b-2node-tp16.yaml --gdr off --format json"))["step_time_ms"] == t_off);
  const Run why = wiresim("run scenarios/llama70b-2node-tp16-gdr-off.yaml --explain");
  REQUIRE(why.exit_code == 0);
  CHECK(why.out.find("NET through host memory (no GPUDirect RDMA") != std::string::npos);
}

TEST_CASE("the shipped sharp scenario: the TP 16 prefill on a fabric that reduces runs collnet, faster") {
  const auto json = [](const Run& r) {
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto plain = json(wiresim("run scenarios/llama70b-2node-tp16.yaml --format json"));
  const auto sharp = json(wiresim("run scenarios/llama70b-2node-tp16-sharp.yaml --format json"));
  const auto algorithm = [](const nlohmann::json& j) {
    return j["breakdown"]["by_collective"]["tp_all_reduce"]["algorithm"].get<std::string>();
  };
  CHECK(algorithm(plain).rfind("collnet", 0) == std::string::npos);
  CHECK(algorithm(sharp) == "collnet/simple");
  // docs/scenarios.md: 57.23 ms against 68.64 ms. collnet sends S/8 up and down each NIC, one
  // IB link each way: 8 NICs x 2 nodes x 2 directions x S/8 = 4 S of IB link bytes per
  // all_reduce, 160 of them. NVLink carries more: each of the 16 GPUs writes 7/8 of its
  // 64 MiB to the heads and 7/8 from its head, each write over two links (GPU -> NVSwitch
  // -> GPU), 160 times.
  const auto tier = [](const nlohmann::json& j, const char* t) {
    return j["breakdown"]["by_tier"][t]["bytes"].get<double>();
  };
  CHECK(tier(sharp, "ib") == rel_approx(160.0 * 4 * 64 * 1048576).epsilon(1e-9));
  CHECK(tier(sharp, "nvlink") == rel_approx(160.0 * 16 * 2 * (7.0 / 8) * 64 * 1048576 * 2).epsilon(1e-9));
  CHECK(sharp["step_time_ms"].get<double>() < 0.9 * plain["step_time_ms"].get<double>());
  // The file's set: is the command line's --set.
  CHECK(json(wiresim("run scenarios/llama70b-2node-tp16.yaml --set sharp=true --format json"))["step_time_ms"] ==
        sharp["step_time_ms"]);
}

TEST_CASE("coll --p2p-level SYS: the cross-socket pairs of the A40 box go P2P, faster, and the output says so") {
  const std::string c = "coll all_reduce --topo topologies/a40-pcie-8gpu-2socket.yaml --ranks 0,1,6,7 --sizes 1GiB";
  const Run nccl_default = wiresim(c + " --format json");
  const Run sys = wiresim(c + " --format json --p2p-level SYS");
  REQUIRE(nccl_default.exit_code == 0);
  REQUIRE(sys.exit_code == 0);
  const auto time = [](const Run& r) { return nlohmann::json::parse(r.out)["results"][0]["time_us"].get<double>(); };
  CHECK(time(sys) < 0.5 * time(nccl_default));   // SHM's host copies vs P2P over PCIe and UPI
  const Run why = wiresim(c + " --p2p-level sys --explain");
  REQUIRE(why.exit_code == 0);
  CHECK(why.out.find("NCCL_P2P_LEVEL=SYS") != std::string::npos);
  CHECK(why.out.find("SHM") == std::string::npos);
  CHECK(why.out.find("P2P/PCIe") != std::string::npos);
  const Run bad = wiresim(c + " --p2p-level NODE");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--p2p-level: expected auto, LOC, NVL, PIX, PXB, PHB or SYS, got 'NODE'") != std::string::npos);
}
