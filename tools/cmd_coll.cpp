#include "tools/commands.h"

namespace wiresim::tools {

void add_coll_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("coll", "(being built)");
  cmd->callback([exit_code] { *exit_code = 2; });
}

}  // namespace wiresim::tools
