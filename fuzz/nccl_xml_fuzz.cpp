// Fuzz target: NCCL topology dump (XML) -> topology YAML -> LinkGraph
// (topologies/import_nccl_xml.h). Bad input must end in input::InputError; an imported
// topology must load (a YAML the importer wrote that the builder refuses is a bug, so it is
// not caught).
#include <cstddef>
#include <cstdint>
#include <string>

#include "input/input_error.h"
#include "topologies/builder.h"
#include "topologies/import_nccl_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)wiresim::topo::looks_like_nccl_xml(text);
  std::string yaml;
  try {
    yaml = wiresim::topo::import_nccl_xml(text, "fuzz.xml", {});
  } catch (const wiresim::input::InputError&) {
    return 0;
  }
  (void)wiresim::topo::load_topology_text(yaml, "/nonexistent/imported.yaml");
  return 0;
}
