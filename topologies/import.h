// Import of `nvidia-smi topo -m` output: the matrix of connection labels between GPUs and
// NICs becomes a topology YAML file (topologies/builder.h reads it back).
//
// The reader accepts what nvidia-smi prints and what people paste: tab- or space-aligned
// columns, a shell prompt line, a "# source:" line, NIC legends, old names (SOC for SYS,
// "mlx5_0" as a column), and the CPU/NUMA affinity columns. The importer rebuilds a
// machine that prints the same labels back:
//   * NV# between GPUs: # bonded NVLinks. When every pair reads the same NV# and the GPUs
//     could not have that many links to each peer (over 18 in all), they sit on an
//     NVSwitch; otherwise each pair has a direct link (DGX-1 hybrid cube mesh, NV2 meshes).
//   * SYS separates NUMA nodes (one cpu device each, all joined by the SMP link).
//   * Within a NUMA node: PIX groups share a PCIe switch, PXB groups a tree of switches
//     under one upstream switch, PHB groups a host bridge; NODE crosses the CPU.
// Labels hide the PCIe relation of NVLink-joined GPUs; a GPU whose PCIe place no label
// pins down hangs directly off its CPU.
//
//   const TopoMatrix m = parse_topo_matrix(text, "topo.txt");
//   const std::string yaml = import_topology(m, ImportOptions{});
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>


namespace wiresim::topo {

struct TopoMatrix {
  std::string file;
  std::vector<std::string> columns;            // "GPU0", ..., "NIC0" or "mlx5_0"
  std::vector<bool> is_gpu;                    // per column
  std::vector<std::vector<std::string>> labels;  // [row][column], normalised (SOC -> SYS)
  std::vector<std::vector<std::pair<int, int>>> at;  // line, column of each label
  std::vector<int> numa;                       // per column: NUMA Affinity, or -1
  std::map<std::string, std::string> nic_names;  // "NIC0" -> "mlx5_ib0" from the NIC Legend
};

// Throws input::InputError at file:line:column when the text is not such a matrix.
TopoMatrix parse_topo_matrix(const std::string& text, const std::string& file);

// A rate and a latency as written ("25GB/s", "250ns"); either may be left to the default.
struct LinkOverride {
  std::optional<std::string> bandwidth;  // per direction; for NV: per NVLink
  std::optional<std::string> latency;
};

struct ImportOptions {
  std::string name = "imported";
  // GPU model (H100, A100, V100, B200, L40S, ...): sets arch, memory bandwidth, NVLink and
  // PCIe rates. Guessed from the labels when absent (NV18 on a switch: H100, NV12: A100,
  // NV1/NV2 without a switch: V100), "unknown" when nothing hints.
  std::optional<std::string> gpu_model;
  // Per-label overrides "NV", "PIX", "PXB", "PHB", "NODE", "SYS" of the defaults.
  std::map<std::string, LinkOverride> links;
};

// YAML text of a topology that prints `matrix` back; throws InputError at the first label
// it cannot reproduce (labels that no tree of PCIe switches gives).
std::string import_topology(const TopoMatrix& matrix, const ImportOptions& options);
// What the importers assume of a GPU model (--gpu-model, or guessed): rates per direction.
struct GpuModel {
  const char* name;
  const char* arch;
  const char* memory;  // shared/data/hardware.md §4
  const char* nvlink;  // per NVLink per direction, §1
  const char* pcie;    // x16 per direction, raw after encoding, §5
  bool multicast;      // NVSwitch with NVLS, §2
};
// The model of that name; throws InputError listing the known names when there is none.
const GpuModel& gpu_model(const std::string& name);

// Parses "NV=25GB/s,250ns", "PIX=31.5GB/s" or "SYS=,300ns" for ImportOptions::links;
// throws InputError naming what is wrong.
std::pair<std::string, LinkOverride> parse_link_override(const std::string& text);

}  // namespace wiresim::topo
