// Import of NCCL's own topology dump (the XML written with NCCL_TOPO_DUMP_FILE=dump.xml) into
// a topology YAML file (topologies/builder.h reads it back). What each element means is
// NCCL's (src/graph/xml.cc writes the dump, src/graph/topo.cc reads it):
//   <cpu numaid arch vendor familyid modelid>  a NUMA node: one cpu device; every pair is
//       joined by one inter-socket link, UPI for GenuineIntel, xGMI for AuthenticAMD.
//   <pci busid class link_speed link_width>    a PCI device and its link to the parent,
//       link_speed ("32.0 GT/s PCIe") x link_width lanes per direction after encoding. A
//       <pci> holding <pci> elements is a bridge: a pcie_switch device.
//   <gpu dev sm rank gdr>                      a GPU under its <pci>; sm gives the generation.
//   <nvlink target count tclass>               count NVLinks to the device at busid target:
//       tclass 0x068000 is an NVSwitch (all of them become one logical nvswitch), a 0x03
//       class a GPU (a direct link).
//   <c2c bw count>                             NVLink-C2C to the GPU's CPU, bw in MB/s per link.
//   <nic><net name speed port gdr ...>         one nic device per <net>, speed in Mb/s.
// A dump describes one host: the YAML is one node, and says how to add a fabric.
//
//   if (looks_like_nccl_xml(text)) yaml = import_nccl_xml(text, "dump.xml", ImportOptions{});
#pragma once

#include <string>

#include "topologies/import.h"

namespace wiresim::topo {

// True when the text is an XML document whose first element is <system> (NCCL's dump).
bool looks_like_nccl_xml(const std::string& text);

// YAML text of the one node the dump describes; throws input::InputError at file:line:col
// for XML that is not well formed or an element NCCL would not have written (a GPU without
// sm, a link_speed that is no PCIe rate, a dump of several hosts). options.name names the
// topology, options.gpu_model overrides the model guessed from sm; options.links is for
// nvidia-smi matrices and must be empty.
std::string import_nccl_xml(const std::string& text, const std::string& file, const ImportOptions& options);

}  // namespace wiresim::topo
