// --bands on a step (`run`, `sweep`): the interval of a simulated step time, from the bands of
// the collectives in it (accuracy/bands.h).
//
// Each kind of collective in the step (the TP all_reduce, the EP all_to_all, the PP sends) is a
// prediction at its mean size (bytes / count), so it takes the band of that size on the
// hardware class of the layout's GPUs. The step's exposed communication is scaled by the
// time-weighted mean of those bands; compute and the overlap of communication with compute are
// held as simulated. So: [compute + exposed × low, compute + exposed × high] — a simple rule,
// stated in the output, not a second simulation.
//
//   const StepInterval b = step_band(input, result);   // b.low_ms, b.high_ms
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "scenarios/step.h"
#include "tools/machine_input.h"

namespace wiresim::tools {

struct StepInterval {
  double low_ms = 0.0, high_ms = 0.0;
  std::string hw_class;
};

inline StepInterval step_band(const MachineInput& in, const scenarios::StepResult& r) {
  std::vector<topo::DeviceId> gpus;
  for (const int g : r.gpu_of_rank)
    if (g >= 0 && g < static_cast<int>(in.graph.gpus().size())) gpus.push_back(in.graph.gpus()[static_cast<std::size_t>(g)]);
  const PredictionBands bands(in, gpus);
  double weight = 0.0, low = 0.0, high = 0.0;
  for (const auto& [kind, c] : r.by_collective) {
    if (c.count <= 0 || c.time.count() <= 0.0 || kind == "weight_load" || kind == "storage_read" ||
        kind.rfind("offload_", 0) == 0)
      continue;
    const accuracy::Band b = bands.at(c.bytes.count() / c.count);
    weight += c.time.count();
    low += c.time.count() * b.low;
    high += c.time.count() * b.high;
  }
  StepInterval out{r.step.ms(), r.step.ms(), bands.hw_class()};
  if (weight <= 0.0) return out;
  // An offloading decode's host copies are no collective: the bands scale only what else is exposed.
  const double exposed = std::max(0.0, r.exposed_comm.ms() - (r.offload ? r.offload->exposed.ms() : 0.0));
  const double rest = r.step.ms() - exposed;
  out.low_ms = rest + exposed * low / weight;
  out.high_ms = rest + exposed * high / weight;
  return out;
}

}  // namespace wiresim::tools
