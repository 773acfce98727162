// Fuzz target: the probe's CSV (calibrate/probe_csv.h) and the grouping `calibrate fit` does
// on it. Bad input must end in InputError; rows that read must write out and read back (a
// written file its own reader refuses is a bug, so that is not caught).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "calibrate/fit_groups.h"
#include "calibrate/probe_csv.h"
#include "input/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace wiresim::calibrate;
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)looks_like_probe_csv(text);
  std::vector<ProbeRow> rows;
  try {
    rows = parse_probe_csv(text, "fuzz.csv");
  } catch (const wiresim::input::InputError&) {
    return 0;
  }
  std::ostringstream out;
  write_probe_csv(out, rows);
  if (parse_probe_csv(out.str(), "written.csv").size() != rows.size()) __builtin_trap();
  (void)groups_from_probe(rows, "fuzz.csv");
  return 0;
}
