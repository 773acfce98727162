#include "tools/commands.h"
#include "sim/input_error.h"

namespace wiresim::tools {

void add_sweep_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("sweep", "(not built yet)");
  cmd->callback([exit_code] {
    *exit_code = 2;
    throw sim::InputError("wiresim sweep is not built yet");
  });
}

}  // namespace wiresim::tools
