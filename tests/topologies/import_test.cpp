// Import of real `nvidia-smi topo -m` outputs: each one imports, and the imported graph
// prints the same matrix back.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "input/input_error.h"
#include "tests/approx.h"
#include "topologies/builder.h"
#include "topologies/describe.h"
#include "topologies/import.h"
#include "topologies/routes.h"

using namespace wiresim::topo;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kData = WIRESIM_SOURCE_DIR "/tests/data/topo/";

struct Case {
  const char* file;
  std::size_t gpus, nics;
  const char* model;
};

}  // namespace

TEST_CASE("each real matrix imports and prints the same matrix back") {
  const Case cases[] = {
      {"topo_h100_dgx_8gpu_13nic.txt", 8, 13, "H100"},
      {"topo_a100_oci_bm-gpu4-8_18nic.txt", 8, 18, "A100"},
      {"topo_v100_dgx1_hybrid_cube_mesh_8gpu.txt", 8, 0, "V100"},
      {"topo_rtx4090_pcie_8gpu_1nic.txt", 8, 1, "unknown"},
      {"topo_v100_4gpu_c4140_nv2_1nic.txt", 4, 1, "V100"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const TopoMatrix m = parse_topo_matrix(read(kData + c.file), c.file);
    REQUIRE(m.columns.size() == c.gpus + c.nics);
    ImportOptions options;
    options.name = "imported";
    const std::string yaml = import_topology(m, options);
    const LinkGraph g = load_topology_text(yaml, "imported.yaml");
    CHECK(g.gpus().size() == c.gpus);
    CHECK(g.device(g.gpus()[0]).model == c.model);
    // Print the graph's matrix like nvidia-smi and read it back: the same labels.
    const Router router(g);
    const TopoMatrix back = parse_topo_matrix(topo_matrix(g, router), "printed");
    REQUIRE(back.columns.size() == m.columns.size());
    CHECK(back.labels == m.labels);
  }
}

TEST_CASE("import: what the labels say about the machine") {
  const TopoMatrix dgx1 = parse_topo_matrix(read(kData + "topo_v100_dgx1_hybrid_cube_mesh_8gpu.txt"), "dgx1");
  const LinkGraph g = load_topology_text(import_topology(dgx1, {}), "dgx1.yaml");
  const Router r(g);
  // Hybrid cube mesh: GPU0-GPU3 NV2 is one direct link of 2 NVLinks; GPU0-GPU5 has none.
  const auto l03 = r.route(g.gpus()[0], g.gpus()[3]);
  REQUIRE(l03.size() == 1);
  CHECK(g.link(l03[0]).count == 2);
  CHECK(g.link(l03[0]).bandwidth.count() == rel_approx(50e9));
  CHECK(r.transport(g.gpus()[0], g.gpus()[5]) == Transport::shm);
  // All 8 GPUs are one NVLink domain even though not every pair has a link.
  CHECK(r.nvlink_domain() == std::vector<int>(8, 0));
  CHECK(g.device(g.gpus()[0]).socket != g.device(g.gpus()[4]).socket);

  const TopoMatrix h100 = parse_topo_matrix(read(kData + "topo_h100_dgx_8gpu_13nic.txt"), "h100");
  CHECK(h100.nic_names.at("NIC8") == "mlx5_eth0");
  CHECK(h100.numa[4] == 1);
  const LinkGraph h = load_topology_text(import_topology(h100, {}), "h100.yaml");
  const Router hr(h);
  CHECK(hr.multicast_switch(h.gpus()[0]).has_value());
  CHECK(hr.route(h.gpus()[0], h.gpus()[7]).size() == 2);  // through the NVSwitch
  CHECK(hr.nearest_nics(h.gpus()[5]).size() == 1);
}

TEST_CASE("import options: the GPU model and per-label link rates") {
  const TopoMatrix m = parse_topo_matrix(read(kData + "topo_rtx4090_pcie_8gpu_1nic.txt"), "4090");
  ImportOptions o;
  o.gpu_model = "L40S";
  o.links["PIX"] = parse_link_override("PIX=25GB/s,200ns").second;
  const LinkGraph g = load_topology_text(import_topology(m, o), "4090.yaml");
  CHECK(g.device(g.gpus()[0]).arch == "ada");
  const Link& l = g.link(g.out_links(g.gpus()[0])[0]);
  CHECK(l.bandwidth.count() == rel_approx(25e9));
  CHECK(l.latency.count() == rel_approx(200e-9));
  o.gpu_model = "Z900";
  CHECK_THROWS_AS(import_topology(m, o), wiresim::input::InputError);
  CHECK_THROWS_AS(parse_link_override("PCI=25GB/s"), wiresim::input::InputError);
  CHECK_THROWS_AS(parse_link_override("NV=25"), wiresim::input::InputError);
}

TEST_CASE("import refuses numbers no matrix holds, at their place (fuzzer finds)") {
  // A NUMA affinity past int range made std::stoi throw out_of_range, which no caller catches;
  // an NV count likewise. Both are now one-line errors at file:line:column.
  const std::string head = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n";
  const std::string numa = head + "GPU0\t X \tNV2\t0-7\t0\nGPU1\tNV2\t X \t0-7\t022222222222222222222\n";
  try {
    parse_topo_matrix(numa, "m.txt");
    FAIL("accepted a 21-digit NUMA node");
  } catch (const wiresim::input::InputError& e) {
    CHECK(std::string(e.what()).find("m.txt:3:") != std::string::npos);
    CHECK(std::string(e.what()).find("NUMA") != std::string::npos);
  }
  const std::string nv = head + "GPU0\t X \tNV99999999999\t0-7\t0\nGPU1\tNV99999999999\t X \t0-7\t0\n";
  CHECK_THROWS_AS(parse_topo_matrix(nv, "m.txt"), wiresim::input::InputError);
}
