// Fuzz target: the hardware catalogue (topologies/catalog.h). Bad input must end in
// InputError; anything else that escapes is a bug. Topology paths resolve into a folder that
// does not exist, so only the catalogue's own reader is exercised (an `include:` of an
// absolute path may still reach a real file, which is fine).
#include <cstddef>
#include <cstdint>
#include <string>

#include "input/input_error.h"
#include "topologies/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto c = wiresim::topo::load_catalog_text(text, "/nonexistent/catalog.yaml", "/nonexistent");
    for (const auto& e : c.entries) (void)c.find(e.name);
  } catch (const wiresim::input::InputError&) {
  }
  return 0;
}
