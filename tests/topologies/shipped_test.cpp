// Every shipped topology loads with the GPU count, per-GPU NVLink bandwidth and NIC count
// its header comment documents.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/approx.h"
#include "topologies/builder.h"
#include "topologies/routes.h"

using namespace wiresim::topo;

namespace {

const std::string kDir = WIRESIM_SOURCE_DIR "/topologies/";

struct Expected {
  const char* file;
  std::size_t gpus;
  double nvlink_gbps;  // per GPU, per direction, over nvlink/xgmi links
  std::size_t nics;
  const char* model;
};

std::size_t count_kind(const LinkGraph& g, DeviceKind kind) {
  std::size_t n = 0;
  for (DeviceId d = 0; d < g.device_count(); ++d) n += g.device(d).kind == kind;
  return n;
}

double nvlink_gbps(const LinkGraph& g, DeviceId gpu) {
  double total = 0;
  for (LinkId id : g.out_links(gpu))
    if (g.link(id).tier == Tier::nvlink || g.link(id).tier == Tier::xgmi)
      total += g.link(id).bandwidth.gbps();
  return total;
}

}  // namespace

TEST_CASE("every shipped topology loads with its GPU count, NVLink bandwidth and NICs") {
  // Per GPU per direction: H100/H200 18 x 25 = 450, A100 12 x 25 = 300, B200/GB200
  // 18 x 50 = 900, MI300X 7 xGMI x 64 = 448, L40S none (hardware.md §1, §7).
  const Expected cases[] = {
      {"hgx-a100.yaml", 8, 300, 8, "A100"},
      {"hgx-h100.yaml", 8, 450, 8, "H100"},
      {"hgx-h200.yaml", 8, 450, 8, "H200"},
      {"hgx-b200.yaml", 8, 900, 8, "B200"},
      {"pcie-8gpu-2socket.yaml", 8, 0, 4, "L40S"},
      {"gb200-nvl72.yaml", 72, 900, 72, "GB200"},
      {"mi300x-8.yaml", 8, 448, 8, "MI300X"},
      {"cluster-h100-ib.yaml", 32, 450, 32, "H100"},
      {"cluster-h100-roce.yaml", 32, 450, 32, "H100"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const LinkGraph g = load_topology(kDir + c.file);
    CHECK(g.gpus().size() == c.gpus);
    CHECK(count_kind(g, DeviceKind::nic) == c.nics);
    for (DeviceId gpu : g.gpus()) {
      CHECK(nvlink_gbps(g, gpu) == rel_approx(c.nvlink_gbps));
      CHECK(g.device(gpu).model == c.model);
      CHECK(g.device(gpu).memory_bandwidth.count() > 0);
    }
  }
}

TEST_CASE("hgx-h200 is hgx-h100 with H200 GPUs") {
  const LinkGraph h100 = load_topology(kDir + "hgx-h100.yaml");
  const LinkGraph h200 = load_topology(kDir + "hgx-h200.yaml");
  CHECK(h200.name == "hgx-h200");
  CHECK(h200.device_count() == h100.device_count());
  CHECK(h200.link_count() == h100.link_count());
  CHECK(h200.device(h200.gpus()[0]).memory_bandwidth.count() == rel_approx(4.8e12));
  CHECK(h200.device(h200.gpus()[0]).arch == "hopper");
}

TEST_CASE("pcie-8gpu-2socket: PIX under a switch, NODE across switches, SYS across sockets") {
  const LinkGraph g = load_topology(kDir + "pcie-8gpu-2socket.yaml");
  const Router r(g);
  const auto gpu = [&](int i) { return g.gpus()[i]; };
  CHECK(r.matrix_label(gpu(0), gpu(1)) == "PIX");
  CHECK(r.matrix_label(gpu(0), gpu(2)) == "NODE");
  CHECK(r.matrix_label(gpu(0), gpu(4)) == "SYS");
  CHECK(r.matrix_label(gpu(6), gpu(7)) == "PIX");
  CHECK(r.matrix_label(gpu(1), *g.find("nic0")) == "PIX");
  CHECK(r.matrix_label(gpu(2), *g.find("nic0")) == "NODE");
  CHECK(r.nvlink_domain() == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  // NCCL's default P2P level is PXB: P2P within a switch, SHM through the CPU.
  CHECK(r.transport(gpu(0), gpu(1)) == Transport::p2p_pcie);
  CHECK(r.transport(gpu(0), gpu(2)) == Transport::shm);
  CHECK(r.transport(gpu(0), gpu(4)) == Transport::shm);
  // gpu0 -> pcie_switch0 -> cpu0 -> cpu1 -> pcie_switch2 -> gpu4: bottleneck the GPU's Gen4 x16.
  const auto cross = r.route(gpu(0), gpu(4));
  REQUIRE(cross.size() == 5);
  CHECK(g.link(cross[2]).tier == Tier::upi);
  CHECK(r.bottleneck(cross).count() == rel_approx(31.5e9));
  // Two GPUs share each NIC.
  CHECK(r.nic_for(gpu(0)) == *g.find("nic0"));
  CHECK(r.nic_for(gpu(1)) == *g.find("nic0"));
  CHECK(r.nic_for(gpu(7)) == *g.find("nic3"));
}

TEST_CASE("dgx-h100-nvme: 8 data drives, 4 a socket, read only from, never through") {
  const LinkGraph g = load_topology(kDir + "dgx-h100-nvme.yaml");
  CHECK(count_kind(g, DeviceKind::nvme) == 8);
  int on_socket[2] = {0, 0};
  for (DeviceId d = 0; d < g.device_count(); ++d)
    if (g.device(d).kind == DeviceKind::nvme) {
      REQUIRE(g.device(d).socket >= 0);
      ++on_socket[g.device(d).socket];
      CHECK(g.device(d).read_bandwidth.count() == rel_approx(6.6 * 1073741824.0));
    }
  CHECK(on_socket[0] == 4);
  CHECK(on_socket[1] == 4);
  const Router r(g);
  // nvme0 sits on pcie_upstream0 with gpu0 and gpu1's switches: drive -> upstream -> switch -> GPU.
  const auto read = r.route(*g.find("nvme0"), g.gpus()[0]);
  CHECK(read.size() == 3);
  // No route forwards through a drive: a drive's links all start or end at that drive.
  for (DeviceId a : g.gpus())
    for (LinkId l : r.route(a, *g.find("nvme7")))
      if (g.device(g.link(l).from).kind == DeviceKind::nvme) CHECK(false);
  // Everything else is hgx-h100's.
  CHECK(g.gpus().size() == 8);
  CHECK(count_kind(g, DeviceKind::nic) == 8);
}

TEST_CASE("mi300x-8: a full mesh, one xGMI link per pair") {
  const LinkGraph g = load_topology(kDir + "mi300x-8.yaml");
  const Router r(g);
  for (DeviceId a : g.gpus())
    for (DeviceId b : g.gpus()) {
      if (a == b) continue;
      const auto links = r.route(a, b);
      REQUIRE(links.size() == 1);
      CHECK(g.link(links[0]).tier == Tier::xgmi);
      CHECK(r.matrix_label(a, b) == "XGMI");
    }
  CHECK(r.nvlink_domain() == std::vector<int>(8, 0));
  CHECK_FALSE(r.multicast_switch(g.gpus()[0]).has_value());
}

TEST_CASE("gb200-nvl72: one NVLink domain of 72 GPUs, one switch hop apart") {
  const LinkGraph g = load_topology(kDir + "gb200-nvl72.yaml");
  const Router r(g);
  CHECK(r.nvlink_domain() == std::vector<int>(72, 0));
  const auto links = r.route(g.gpus()[0], g.gpus()[71]);
  CHECK(links.size() == 2);
  CHECK(r.matrix_label(g.gpus()[0], g.gpus()[71]) == "NV18");
  CHECK(r.multicast_switch(g.gpus()[40]).has_value());
  // GPU0 and GPU1 share a Grace and its two NICs: one each.
  CHECK(r.nearest_nics(g.gpus()[0]).size() == 2);
  CHECK(r.nic_for(g.gpus()[0]) != r.nic_for(g.gpus()[1]));
  CHECK(g.device(g.gpus()[5]).socket == 2);
}

TEST_CASE("every YAML file in topologies/ loads and cites its sources") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    if (entry.path().extension() != ".yaml") continue;
    // The hardware catalogue sits beside the topologies it names; catalog_test.cpp checks it.
    if (entry.path().filename() == "catalog.yaml") continue;
    CAPTURE(entry.path().string());
    ++files;
    const LinkGraph g = load_topology(entry.path().string());
    CHECK(!g.gpus().empty());
    CHECK(g.name == entry.path().stem().string());
    // Shipped rates are plausible: no PCIe faster than its generation, no network in GB/s slips.
    CHECK(g.warnings.empty());
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str().starts_with("#"));
    CHECK(text.str().find("hardware.md") != std::string::npos);
  }
  CHECK(files >= 9);
}
