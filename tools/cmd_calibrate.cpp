#include "tools/commands.h"

namespace wiresim::tools {

void add_calibrate_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("calibrate", "(being built)");
  cmd->callback([exit_code] { *exit_code = 2; });
}

}  // namespace wiresim::tools
