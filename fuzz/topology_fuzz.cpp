// Fuzz target: topology YAML -> LinkGraph (topologies/builder.h), then routes and the text
// views `wiresim topo` prints. Bad input must end in input::InputError; anything else that
// escapes (another exception, a crash, a leak, undefined behaviour) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "input/input_error.h"
#include "topologies/builder.h"
#include "topologies/describe.h"
#include "topologies/routes.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // A folder that does not exist: `include:` cannot reach real files.
    const auto graph = wiresim::topo::load_topology_text(text, "/nonexistent/fuzz.yaml");
    if (graph.device_count() > 4096) return 0;  // routes of big graphs: slow, not interesting here
    const wiresim::topo::Router router(graph);
    (void)wiresim::topo::topo_summary(graph, router);
    (void)wiresim::topo::topo_matrix(graph, router);
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}
