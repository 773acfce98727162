// Plausibility: rates that parse but are most likely a slip of the unit. They are warnings,
// not errors (the reader cannot know the hardware is not exotic): the builder keeps them in
// LinkGraph::warnings at file:line:column, and tools/ prints them to stderr.
//
// - A network cable (fabric nic_link, uplink) above 1.6 Tb/s = 200 GB/s, the fastest port
//   shipped (shared/data/hardware.md §6): `400GB/s` is 3.2 Tb/s, 8x the NDR port it meant
//   (400Gb/s = 50 GB/s). Network rates are quoted in bits; a hint names the Gb/s it meant.
// - A PCIe link faster than a x16 link of its generation: of the GPU's generation when one
//   end is a GPU of a known architecture (volta Gen3, ampere Gen4, hopper Gen5, ...), else of
//   Gen6 (128 GB/s per direction, the fastest), from hardware.md §5.
//
//   network_rate_warning(sim::parse_rate("400GB/s"));   // "400 GB/s per cable is 3.2 Tb/s, ..."
//   pcie_rate_warning(sim::parse_rate("63GB/s"), "ampere");   // "... above PCIe Gen4 x16 ..."
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/units.h"

namespace wiresim::topo {

std::optional<std::string> network_rate_warning(sim::BytesPerSec per_cable);
// gpu_arch: the architecture of the GPU at one end, empty when neither end is a GPU.
std::optional<std::string> pcie_rate_warning(sim::BytesPerSec per_link, std::string_view gpu_arch);

}  // namespace wiresim::topo
