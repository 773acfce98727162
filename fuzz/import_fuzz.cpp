// Fuzz target: `nvidia-smi topo -m` text -> TopoMatrix -> topology YAML -> LinkGraph
// (topologies/import.h). Bad input must end in input::InputError; an imported topology must
// load (a YAML the importer wrote that the builder refuses is a bug, so it is not caught).
#include <cstddef>
#include <cstdint>
#include <string>

#include "input/input_error.h"
#include "topologies/builder.h"
#include "topologies/import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string yaml;
  try {
    const auto matrix = wiresim::topo::parse_topo_matrix(text, "fuzz.txt");
    yaml = wiresim::topo::import_topology(matrix, {});
  } catch (const wiresim::input::InputError&) {
    return 0;
  }
  (void)wiresim::topo::load_topology_text(yaml, "/nonexistent/imported.yaml");
  return 0;
}
