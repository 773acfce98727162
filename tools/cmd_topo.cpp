#include "tools/commands.h"

namespace wiresim::tools {

void add_topo_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("topo", "(being built)");
  cmd->callback([exit_code] { *exit_code = 2; });
}

}  // namespace wiresim::tools
