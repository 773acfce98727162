#include <doctest/doctest.h>

#include "tests/approx.h"
#include "topologies/builder.h"
#include "topologies/routes.h"

using namespace wiresim::topo;

namespace {
const std::string kDir = WIRESIM_SOURCE_DIR "/topologies/";
DeviceId id(const LinkGraph& g, std::string_view name) { return g.find(name).value(); }
}  // namespace

TEST_CASE("hgx-h100 loads: 8 GPUs with 450 GB/s of NVLink each and a NIC each") {
  const LinkGraph g = load_topology(kDir + "hgx-h100.yaml");
  CHECK(g.name == "hgx-h100");
  REQUIRE(g.gpus().size() == 8);
  const Device& gpu = g.device(g.gpus()[0]);
  CHECK(gpu.model == "H100");
  CHECK(gpu.arch == "hopper");
  CHECK(gpu.memory_bandwidth.count() == rel_approx(3.35e12));
  // 18 NVLinks x 25 GB/s = 450 GB/s per direction, in one link to the logical NVSwitch.
  const Link& nvl = g.link(g.out_links(g.gpus()[0])[0]);
  CHECK(nvl.tier == Tier::nvlink);
  CHECK(nvl.count == 18);
  CHECK(nvl.bandwidth.count() == rel_approx(450e9));
  CHECK(g.device(nvl.to).kind == DeviceKind::nvswitch);
  CHECK(g.device(nvl.to).multicast);
  // Full duplex: every link has its reverse.
  CHECK(g.link_count() % 2 == 0);
  CHECK(g.find_link(nvl.to, nvl.from).has_value());
  CHECK(g.device(id(g, "gpu0")).socket == 0);
  CHECK(g.device(id(g, "gpu7")).socket == 1);
  CHECK(g.device(id(g, "nic5")).socket == 1);
}

TEST_CASE("hgx-h100 routes: GPU pairs go through the NVSwitch, GPU to NIC through PCIe") {
  const LinkGraph g = load_topology(kDir + "hgx-h100.yaml");
  const Router r(g);
  // gpu0 -> nvswitch0 -> gpu5: two NVLink hops of 250 ns, bottleneck 450 GB/s.
  const auto links = r.route(id(g, "gpu0"), id(g, "gpu5"));
  REQUIRE(links.size() == 2);
  CHECK(g.link_name(links[0]) == "gpu0->nvswitch0");
  CHECK(g.link_name(links[1]) == "nvswitch0->gpu5");
  CHECK(r.latency(links).count() == rel_approx(500e-9));
  CHECK(r.bottleneck(links).count() == rel_approx(450e9));
  CHECK(r.transport(id(g, "gpu0"), id(g, "gpu5")) == Transport::p2p_nvlink);
  // The route is cached: asking again gives the same storage.
  CHECK(r.route(id(g, "gpu0"), id(g, "gpu5")).data() == links.data());
  // gpu3 -> pcie_switch3 -> nic3.
  const auto to_nic = r.route(id(g, "gpu3"), id(g, "nic3"));
  CHECK(to_nic.size() == 2);
  REQUIRE(r.nearest_nics(id(g, "gpu3")).size() == 1);
  CHECK(r.nearest_nics(id(g, "gpu3"))[0] == id(g, "nic3"));
  CHECK(r.multicast_switch(id(g, "gpu2")) == id(g, "nvswitch0"));
  CHECK(r.nvlink_domain() == std::vector<int>(8, 0));
}

TEST_CASE("hgx-h100 matrix labels match a real DGX H100's nvidia-smi topo -m") {
  const LinkGraph g = load_topology(kDir + "hgx-h100.yaml");
  const Router r(g);
  CHECK(r.matrix_label(id(g, "gpu0"), id(g, "gpu0")) == "X");
  for (int i = 1; i < 8; ++i)
    CHECK(r.matrix_label(id(g, "gpu0"), g.gpus()[i]) == "NV18");
  // shared/validation-raw/topo_h100_dgx_8gpu_13nic.txt, row GPU0.
  CHECK(r.matrix_label(id(g, "gpu0"), id(g, "nic0")) == "PIX");
  CHECK(r.matrix_label(id(g, "gpu0"), id(g, "nic1")) == "PXB");
  CHECK(r.matrix_label(id(g, "gpu0"), id(g, "nic2")) == "NODE");
  CHECK(r.matrix_label(id(g, "gpu0"), id(g, "nic4")) == "SYS");
  CHECK(r.matrix_label(id(g, "nic0"), id(g, "nic1")) == "PXB");
}
