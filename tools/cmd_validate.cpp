#include "tools/commands.h"
#include "sim/input_error.h"

namespace wiresim::tools {

void add_validate_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("validate", "(not built yet)");
  cmd->callback([exit_code] {
    *exit_code = 2;
    throw sim::InputError("wiresim validate is not built yet");
  });
}

}  // namespace wiresim::tools
