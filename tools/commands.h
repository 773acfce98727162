// The subcommands of `wiresim`. Each cmd_<name>.cpp adds its subcommand to the app; its
// callback stores the process exit code in *exit_code. Input errors are thrown as
// sim::InputError and reported once by main (tools/wiresim.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace wiresim::tools {

void add_topo_command(CLI::App& app, int* exit_code);
void add_coll_command(CLI::App& app, int* exit_code);
void add_calibrate_command(CLI::App& app, int* exit_code);
// `calibrate compare`, added to the calibrate subcommand by add_calibrate_command.
void add_calibrate_compare(CLI::App* calibrate, int* exit_code);
void add_validate_command(CLI::App& app, int* exit_code);
void add_run_command(CLI::App& app, int* exit_code);
void add_sweep_command(CLI::App& app, int* exit_code);

}  // namespace wiresim::tools
