// Import of NCCL topology dumps (NCCL_TOPO_DUMP_FILE): real dumps import, load, and have the
// devices, rates and nvidia-smi labels that a read of the dump by hand gives.
#include <doctest/doctest.h>

#include <algorithm>

#include "input/file.h"
#include "input/input_error.h"
#include "tests/approx.h"
#include "topologies/builder.h"
#include "topologies/describe.h"
#include "topologies/import.h"
#include "topologies/import_nccl_xml.h"
#include "topologies/routes.h"

using namespace wiresim::topo;

namespace {

const std::string kData = WIRESIM_SOURCE_DIR "/tests/data/topo/";

struct Imported {
  std::string yaml;
  LinkGraph graph;
};

Imported import_file(const std::string& name, const ImportOptions& options = {}) {
  const std::string text = wiresim::input::read_file(kData + name);
  REQUIRE(looks_like_nccl_xml(text));
  std::string yaml = import_nccl_xml(text, name, options);
  LinkGraph g = load_topology_text(yaml, name + ".yaml");
  return {std::move(yaml), std::move(g)};
}

std::size_t count(const LinkGraph& g, DeviceKind kind) {
  std::size_t n = 0;
  for (DeviceId d = 0; d < g.device_count(); ++d) n += g.device(d).kind == kind;
  return n;
}

const Link& link(const LinkGraph& g, const char* from, const char* to) {
  const auto id = g.find_link(*g.find(from), *g.find(to));
  REQUIRE(id.has_value());
  return g.link(*id);
}

// The label `topo matrix` prints for a pair, read back through the matrix parser.
std::string label(const LinkGraph& g, const std::string& a, const std::string& b) {
  const TopoMatrix m = parse_topo_matrix(topo_matrix(g, Router(g)), "printed");
  const auto col = [&](const std::string& name) {
    const auto it = std::find(m.columns.begin(), m.columns.end(), name);
    REQUIRE(it != m.columns.end());
    return it - m.columns.begin();
  };
  return m.labels[col(a)][col(b)];
}

std::string error_of(const std::string& xml) {
  try {
    import_nccl_xml(xml, "bad.xml", {});
  } catch (const wiresim::input::InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("IBM Cloud H100 VM dump: 8 GPUs on NVSwitch, a GPU and a NIC per bridge, 2 sockets") {
  const auto [yaml, g] = import_file("nccl_h100_ibm_vpc_8gpu_8nic.xml");
  // By hand from the dump: 2 <cpu>, 8 <gpu>, 8 <net>, 8 bridges (class 0x060400), and every
  // GPU's <nvlink> targets carry class 0x068000 (NVSwitch).
  CHECK(g.gpus().size() == 8);
  CHECK(count(g, DeviceKind::nic) == 8);
  CHECK(count(g, DeviceKind::cpu) == 2);
  CHECK(count(g, DeviceKind::pcie_switch) == 8);
  CHECK(count(g, DeviceKind::nvswitch) == 1);
  CHECK(g.device(g.gpus()[0]).model == "H100");  // sm="90"
  CHECK(g.device(g.gpus()[0]).arch == "hopper");
  // NVLinks to the 4 NVSwitch targets: 5 + 5 + 4 + 4 = 18, at 25 GB/s each per direction.
  const Link& nv = link(g, "gpu0", "nvswitch0");
  CHECK(nv.tier == Tier::nvlink);
  CHECK(nv.count == 18);
  CHECK(nv.bandwidth.count() == rel_approx(450e9));
  // GPU <pci>: 32.0 GT/s, link_width 0 (read as x16): 32e9 x 16 x 128/130 / 8 B/s.
  CHECK(link(g, "gpu0", "pcie_switch0").bandwidth.count() == rel_approx(32e9 * 16 * 128 / 130 / 8));
  // The VM's bridges: 2.5 GT/s x1 with 8b/10b = 0.25 GB/s up to the CPU.
  CHECK(link(g, "pcie_switch0", "cpu0").bandwidth.count() == rel_approx(0.25e9));
  // familyid 6, modelid 143 (0x8F): Sapphire Rapids, UPI ~32 GB/s per link.
  const Link& upi = link(g, "cpu0", "cpu1");
  CHECK(upi.tier == Tier::upi);
  CHECK(upi.bandwidth.count() == rel_approx(32e9));
  // vendor="GenuineIntel": NCCL reads the Intel row of its LL caps across nodes.
  CHECK(g.device(*g.find("cpu1")).vendor == "intel");
  // NICs in document order: nic0 is mlx5_7, under the first bridge with GPU0; speed 200000 Mb/s.
  CHECK(yaml.find("nic[0]: mlx5_7, busid 0000:a3:00.0, port 1, 200 Gb/s = 25GB/s") != std::string::npos);
  CHECK(yaml.find("One node") != std::string::npos);
  // nvidia-smi labels: same bridge PIX, other bridge of the socket NODE, other socket SYS.
  CHECK(label(g, "GPU0", "NIC0") == "PIX");
  CHECK(label(g, "GPU0", "NIC1") == "NODE");
  CHECK(label(g, "GPU0", "NIC4") == "SYS");
  CHECK(label(g, "GPU0", "GPU5") == "NV18");
  CHECK(Router(g).multicast_switch(g.gpus()[0]).has_value());
}

TEST_CASE("Azure NC A100 v4 dump: NVLink-bridged pairs, 4 NUMA nodes, no PCIe speeds") {
  const auto [yaml, g] = import_file("nccl_a100_azure_ncv4_4gpu.xml");
  // 4 <cpu> with one GPU each; one <nic> (eth0) straight under the first <cpu>; no bridges.
  CHECK(g.gpus().size() == 4);
  CHECK(count(g, DeviceKind::nic) == 1);
  CHECK(count(g, DeviceKind::cpu) == 4);
  CHECK(count(g, DeviceKind::pcie_switch) == 0);
  CHECK(count(g, DeviceKind::nvswitch) == 0);
  CHECK(g.device(g.gpus()[0]).model == "A100");  // sm="80"
  // GPU0 <-> GPU1 and GPU2 <-> GPU3: count 12 to a class 0x030200 target (a GPU), 25 GB/s each.
  const Link& pair = link(g, "gpu0", "gpu1");
  CHECK(pair.count == 12);
  CHECK(pair.bandwidth.count() == rel_approx(300e9));
  CHECK(link(g, "gpu2", "gpu3").count == 12);
  CHECK_FALSE(g.find_link(*g.find("gpu0"), *g.find("gpu2")).has_value());
  // link_speed "" and link_width 0: NCCL's fallback 8 GT/s x16 = 8e9 x 16 x 128/130 / 8 B/s.
  CHECK(link(g, "gpu0", "cpu0").bandwidth.count() == rel_approx(8e9 * 16 * 128 / 130 / 8));
  // eth0 has no PCIe link in the dump: its speed, 100000 Mb/s = 12.5 GB/s, stands for it.
  CHECK(link(g, "nic0", "cpu0").bandwidth.count() == rel_approx(12.5e9));
  // AuthenticAMD familyid 175 (0x19), modelid 1: EPYC 7003, xGMI at ~32 GB/s; 4 NUMA nodes: 6 pairs.
  const Link& xgmi = link(g, "cpu1", "cpu3");
  CHECK(xgmi.tier == Tier::xgmi);
  CHECK(xgmi.bandwidth.count() == rel_approx(32e9));
  CHECK(g.device(*g.find("cpu3")).vendor == "amd");
  CHECK(label(g, "GPU0", "GPU1") == "NV12");
  CHECK(label(g, "GPU0", "GPU2") == "SYS");
  CHECK(label(g, "GPU0", "NIC0") == "NODE");
  CHECK(label(g, "GPU1", "NIC0") == "SYS");
  CHECK(yaml.find("empty link_speed is read as 8 GT/s") != std::string::npos);
}

TEST_CASE("nested bridges, a Blackwell NVSwitch node, a device with no GPU or NIC, --gpu-model") {
  // Hand-written in the dump's form: bridge 01 holds bridges 02 (GPU0, GPU1) and 05 (GPU2, a
  // NIC, an NVMe disk); GPU2 has no NVLink.
  const std::string xml = R"(<?xml version="1.0"?>
<system version="1">
  <cpu numaid="0" arch="x86_64" vendor="AuthenticAMD" familyid="175" modelid="17">
    <pci busid="0000:01:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:02:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
        <pci busid="0000:03:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
          <gpu dev="0" sm="100" rank="0" gdr="1"><nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/></gpu>
        </pci>
        <pci busid="0000:04:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="8">
          <gpu dev="1" sm="100" rank="1" gdr="1"><nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/></gpu>
        </pci>
      </pci>
      <pci busid="0000:05:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
        <pci busid="0000:06:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
          <gpu dev="2" sm="100" rank="2" gdr="1"/>
        </pci>
        <pci busid="0000:07:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
          <nic><net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/></nic>
        </pci>
        <pci busid="0000:08:00.0" class="0x010802" link_speed="16.0 GT/s PCIe" link_width="4"/>
      </pci>
    </pci>
  </cpu>
  <cpu numaid="1" arch="x86_64" vendor="AuthenticAMD" familyid="175" modelid="17">
    <nic><net name="eth0" dev="1" speed="-1" port="0" gdr="0"/></nic>
  </cpu>
</system>
)";
  REQUIRE(looks_like_nccl_xml(xml));
  const LinkGraph g = load_topology_text(import_nccl_xml(xml, "nested.xml", {}), "nested.yaml");
  CHECK(count(g, DeviceKind::pcie_switch) == 3);  // 01, 02, 05; the disk (08) is left out
  CHECK(g.device(g.gpus()[0]).model == "B200");
  CHECK(g.device(g.gpus()[0]).arch == "blackwell");
  CHECK(link(g, "gpu0", "nvswitch0").bandwidth.count() == rel_approx(18 * 50e9));  // NVLink 5
  CHECK(link(g, "gpu1", "pcie_switch1").bandwidth.count() == rel_approx(16e9 * 8 * 128 / 130 / 8));
  CHECK(link(g, "cpu0", "cpu1").bandwidth.count() == rel_approx(64e9));  // modelid 17: EPYC 9004
  CHECK(link(g, "nic1", "cpu1").bandwidth.count() == rel_approx(10e9 / 8));  // speed -1: 10000 Mb/s
  CHECK(label(g, "GPU0", "GPU1") == "NV18");
  CHECK(label(g, "GPU0", "GPU2") == "PXB");   // through bridges 02, 01, 05
  CHECK(label(g, "GPU2", "NIC0") == "PIX");   // both under bridge 05
  CHECK(label(g, "GPU1", "NIC0") == "PXB");
  CHECK(label(g, "GPU2", "NIC1") == "SYS");

  ImportOptions o;
  o.gpu_model = "H200";
  const LinkGraph h = load_topology_text(import_nccl_xml(xml, "nested.xml", o), "nested.yaml");
  CHECK(h.device(h.gpus()[0]).model == "H200");
  CHECK(h.device(h.gpus()[0]).arch == "hopper");
  CHECK(link(h, "gpu0", "nvswitch0").bandwidth.count() == rel_approx(18 * 25e9));
  o.links["NV"] = parse_link_override("NV=25GB/s").second;
  CHECK_THROWS_AS(import_nccl_xml(xml, "nested.xml", o), wiresim::input::InputError);
}

TEST_CASE("NVLink-C2C to the GPU's own CPU, an arm64 CPU") {
  // <c2c bw count>: bw is MB/s per link (NCCL topo.cc: bw * count / 1000 GB/s), so 2 x 20000.
  const std::string xml = R"(<system version="1">
  <cpu numaid="0" arch="arm64">
    <pci busid="0009:00:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0009:01:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1"><c2c bw="20000" count="2"/></gpu>
      </pci>
    </pci>
  </cpu>
  <cpu numaid="1" arch="arm64"/>
</system>)";
  const LinkGraph g = load_topology_text(import_nccl_xml(xml, "c2c.xml", {}), "c2c.yaml");
  const Link& c2c = link(g, "gpu0", "cpu0");
  REQUIRE(c2c.tier == Tier::c2c);
  CHECK(c2c.count == 2);
  CHECK(c2c.bandwidth.count() == rel_approx(40e9));
  // No inter-socket rate is known for arm64: the 32 GB/s placeholder, on the UPI tier.
  CHECK(link(g, "cpu0", "cpu1").tier == Tier::upi);
  CHECK(error_of("<system><cpu numaid=\"0\"><pci link_speed=\"8 GT/s\"><gpu sm=\"90\"><c2c bw=\"0\"/>"
                 "</gpu></pci></cpu></system>").find("positive MB/s") != std::string::npos);
}

TEST_CASE("an NCCL dump is told from a matrix by content") {
  CHECK(looks_like_nccl_xml("<!-- a note -->\n<?xml version=\"1.0\"?>\n<system version=\"1\"/>"));
  CHECK_FALSE(looks_like_nccl_xml(wiresim::input::read_file(kData + "topo_h100_dgx_8gpu_13nic.txt")));
  CHECK_FALSE(looks_like_nccl_xml("<graphs version=\"1\"/>"));
  CHECK_FALSE(looks_like_nccl_xml("<!-- unclosed comment"));
}

TEST_CASE("bad dumps give one located error") {
  // Line 3 closes <system> while <cpu> (line 2) is open: expat stops at the end tag.
  const std::string mismatched = error_of("<system version=\"1\">\n  <cpu numaid=\"0\">\n</system>\n");
  CHECK(mismatched.find("bad.xml:3:") == 0);
  CHECK(mismatched.find("mismatched tag") != std::string::npos);
  CHECK(error_of("").find("bad.xml:1:") == 0);
  const std::string head = "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"x86_64\">\n";
  const std::string speed = error_of(head + "    <pci busid=\"0000:01:00.0\" link_speed=\"fast\" link_width=\"16\">"
                                     "<gpu dev=\"0\" sm=\"90\"/></pci>\n  </cpu>\n</system>\n");
  CHECK(speed.find("bad.xml:3:5: <pci>: link_speed=\"fast\"; expected a PCIe rate") == 0);
  const std::string sm = error_of(head + "    <pci busid=\"0000:01:00.0\" link_speed=\"16.0 GT/s PCIe\" "
                                  "link_width=\"16\">\n      <gpu dev=\"0\"/></pci>\n  </cpu>\n</system>\n");
  CHECK(sm.find("bad.xml:4:7: <gpu>: missing sm") == 0);
  const std::string hosts = error_of(
      "<system version=\"1\">\n<cpu host_hash=\"0x1\" numaid=\"0\"/>\n<cpu host_hash=\"0x2\" numaid=\"0\"/>\n</system>");
  CHECK(hosts.find("bad.xml:3:1:") == 0);
  CHECK(hosts.find("several hosts") != std::string::npos);
  CHECK(error_of("<system version=\"1\">\n<cpu numaid=\"0\"/>\n</system>").find("no <gpu>") != std::string::npos);
  CHECK(error_of("<!DOCTYPE system>\n<system/>").find("DOCTYPE") != std::string::npos);
  CHECK(error_of("<graphs version=\"1\"/>").find("bad.xml:1:1: <graphs>: expected <system>") == 0);
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "<pci>";
  CHECK(error_of("<system>" + deep).find("nested") != std::string::npos);
}
