// The machine's facts: GPUs, versions, PCIe generation and width, peer access, and the
// topology matrix. NVML is loaded at run time (dlopen of libnvidia-ml.so.1, which the driver
// installs) so that the probe builds where only the toolkit is present; without it the PCIe
// fields are null and GPU pairs are classed by CUDA's native-atomics attribute instead.
#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <vector>

#include "calibrate/probes/probe.h"

namespace wiresim::probe {
namespace {

// The few NVML entry points used, declared here (nvml.h is not always installed).
// Values from nvml.h: NVML_SUCCESS 0, NVML_P2P_CAPS_INDEX_NVLINK 2, NVML_P2P_STATUS_OK 0,
// topology levels 0 internal, 10 single switch, 20 multiple, 30 host bridge, 40 node, 50 system.
using NvmlDevice = void*;
struct Nvml {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*pcie_gen)(NvmlDevice, unsigned*) = nullptr;
  int (*pcie_width)(NvmlDevice, unsigned*) = nullptr;
  int (*pcie_max_gen)(NvmlDevice, unsigned*) = nullptr;
  int (*pcie_max_width)(NvmlDevice, unsigned*) = nullptr;
  int (*common_ancestor)(NvmlDevice, NvmlDevice, int*) = nullptr;
  int (*p2p_status)(NvmlDevice, NvmlDevice, int, int*) = nullptr;
  int (*nvlink_state)(NvmlDevice, unsigned, int*) = nullptr;

  bool load() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) return false;
    auto sym = [&](auto& f, const char* name) { f = reinterpret_cast<std::decay_t<decltype(f)>>(dlsym(lib, name)); };
    sym(init, "nvmlInit_v2");
    sym(shutdown, "nvmlShutdown");
    sym(driver_version, "nvmlSystemGetDriverVersion");
    sym(by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    sym(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    sym(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
    sym(pcie_max_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
    sym(pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth");
    sym(common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
    sym(p2p_status, "nvmlDeviceGetP2PStatus");
    sym(nvlink_state, "nvmlDeviceGetNvLinkState");
    return init && by_bus_id && init() == 0;
  }
  ~Nvml() {
    if (lib && shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) q += c;
  }
  return q + "\"";
}

std::string number_or_null(bool ok, unsigned v) { return ok ? std::to_string(v) : "null"; }

const char* level_name(int level) {
  switch (level) {
    case 0: return "X";
    case 10: return "PIX";
    case 20: return "PXB";
    case 30: return "PHB";
    case 40: return "NODE";
    default: return "SYS";
  }
}

}  // namespace

Machine describe_machine() {
  Machine m;
  cudaGetDeviceCount(&m.gpu_count);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  Nvml nvml;
  const bool have_nvml = nvml.load();
  char driver_text[96] = "";
  if (have_nvml && nvml.driver_version) nvml.driver_version(driver_text, sizeof driver_text);

  std::vector<NvmlDevice> handles(m.gpu_count, nullptr);
  std::string gpus;
  for (int d = 0; d < m.gpu_count; ++d) {
    cudaDeviceProp p{};
    cudaGetDeviceProperties(&p, d);
    char bus[32] = "";
    cudaDeviceGetPCIBusId(bus, sizeof bus, d);
    int host_atomics = 0;
    cudaDeviceGetAttribute(&host_atomics, cudaDevAttrHostNativeAtomicSupported, d);
    // Hosts joined by NVLink-C2C (Grace) do native atomics with the GPU; PCIe hosts do not.
    if (d == 0 && host_atomics) m.host_tier = "c2c";
    unsigned gen = 0, width = 0, max_gen = 0, max_width = 0, nvlinks = 0;
    bool ok_gen = false, ok_width = false, ok_max_gen = false, ok_max_width = false;
    if (have_nvml && nvml.by_bus_id(bus, &handles[d]) == 0) {
      ok_gen = nvml.pcie_gen && nvml.pcie_gen(handles[d], &gen) == 0;
      ok_width = nvml.pcie_width && nvml.pcie_width(handles[d], &width) == 0;
      ok_max_gen = nvml.pcie_max_gen && nvml.pcie_max_gen(handles[d], &max_gen) == 0;
      ok_max_width = nvml.pcie_max_width && nvml.pcie_max_width(handles[d], &max_width) == 0;
      for (unsigned link = 0; nvml.nvlink_state && link < 18; ++link) {
        int active = 0;
        if (nvml.nvlink_state(handles[d], link, &active) != 0) break;
        nvlinks += active == 1;
      }
    }
    gpus += std::string(d ? ",\n" : "") + "    {\"index\": " + std::to_string(d) + ", \"name\": " + quoted(p.name) +
            ", \"pci_bus_id\": " + quoted(bus) + ", \"memory_bytes\": " + std::to_string(p.totalGlobalMem) +
            ", \"sm_count\": " + std::to_string(p.multiProcessorCount) + ", \"compute_capability\": \"" +
            std::to_string(p.major) + "." + std::to_string(p.minor) + "\", \"pcie_gen\": " +
            number_or_null(ok_gen, gen) + ", \"pcie_width\": " + number_or_null(ok_width, width) +
            ", \"pcie_max_gen\": " + number_or_null(ok_max_gen, max_gen) + ", \"pcie_max_width\": " +
            number_or_null(ok_max_width, max_width) + ", \"nvlinks_active\": " +
            number_or_null(have_nvml && handles[d], nvlinks) + ", \"host_native_atomics\": " +
            (host_atomics ? "true" : "false") + "}";
  }

  m.pair_tier.assign(m.gpu_count, std::vector<std::string>(m.gpu_count, "-"));
  m.p2p_access.assign(m.gpu_count, std::vector<int>(m.gpu_count, 0));
  std::string matrix, access;
  for (int a = 0; a < m.gpu_count; ++a) {
    std::string row, access_row;
    for (int b = 0; b < m.gpu_count; ++b) {
      std::string cell = "X";
      if (a != b) {
        cudaDeviceCanAccessPeer(&m.p2p_access[a][b], a, b);
        int nvlink_status = -1, level = 50, atomics = 0;
        if (handles[a] && handles[b]) {
          if (nvml.p2p_status) nvml.p2p_status(handles[a], handles[b], 2, &nvlink_status);
          if (nvml.common_ancestor) nvml.common_ancestor(handles[a], handles[b], &level);
        }
        cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b);
        const bool nvlink = handles[a] && handles[b] ? nvlink_status == 0 : atomics == 1;
        m.pair_tier[a][b] = nvlink ? "nvlink" : "pcie";
        cell = nvlink ? "NV" : level_name(level);
      }
      row += std::string(b ? ", " : "") + quoted(cell);
      access_row += std::string(b ? ", " : "") + std::to_string(m.p2p_access[a][b]);
    }
    matrix += std::string(a ? ",\n" : "") + "    [" + row + "]";
    access += std::string(a ? ",\n" : "") + "    [" + access_row + "]";
  }

  m.json = "{\n  \"format\": \"wiresim-probe v1\",\n  \"gpu_count\": " + std::to_string(m.gpu_count) +
           ",\n  \"cuda_driver_version\": " + std::to_string(driver) + ",\n  \"cuda_runtime_version\": " +
           std::to_string(runtime) + ",\n  \"driver_version\": " + (driver_text[0] ? quoted(driver_text) : "null") +
           ",\n  \"nccl_version\": " + (nccl_version().empty() ? "null" : quoted(nccl_version())) +
           ",\n  \"nvml\": " + (have_nvml ? "true" : "false") + ",\n  \"host_tier\": " + quoted(m.host_tier) +
           ",\n  \"gpus\": [\n" + gpus + "\n  ],\n  \"p2p_access\": [\n" + access +
           "\n  ],\n  \"topology_matrix\": [\n" + matrix + "\n  ]\n}\n";
  return m;
}

}  // namespace wiresim::probe
