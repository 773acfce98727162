// InputError now lives in the input module (input/input_error.h). This header keeps the old
// include and the old name, sim::InputError, working for code not yet switched over.
#pragma once

#include "input/input_error.h"

namespace wiresim::sim {
using input::InputError;
}  // namespace wiresim::sim
