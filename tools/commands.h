// The subcommands of `wiresim`. Each cmd_<name>.cpp adds its subcommand to the app; its
// callback stores the process exit code in *exit_code. Input errors are thrown as
// input::InputError and reported once by main (tools/wiresim.cpp); warnings (what a reader
// noticed but did not refuse) go to stderr as they come, in the same form.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace wiresim::tools {

// "wiresim: x.yaml:3:5: warning: ..." on stderr, one line each.
inline void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) fmt::print(stderr, "wiresim: {}\n", w);
}

void add_topo_command(CLI::App& app, int* exit_code);
void add_coll_command(CLI::App& app, int* exit_code);
void add_calibrate_command(CLI::App& app, int* exit_code);
// `calibrate compare`, added to the calibrate subcommand by add_calibrate_command.
void add_calibrate_compare(CLI::App* calibrate, int* exit_code);
void add_validate_command(CLI::App& app, int* exit_code);
void add_run_command(CLI::App& app, int* exit_code);
void add_sweep_command(CLI::App& app, int* exit_code);
void add_plan_command(CLI::App& app, int* exit_code);
void add_jobs_command(CLI::App& app, int* exit_code);

}  // namespace wiresim::tools
