// wiresim: command-line entry point. Dispatch only; each subcommand lives in cmd_<name>.cpp.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "input/input_error.h"
#include "tools/commands.h"
#include "tools/mpi_sweep.h"

int main(int argc, char** argv) {
  const wiresim::tools::MpiSession mpi(&argc, &argv);
  CLI::App app{"wiresim: a discrete-event simulator of GPU interconnects and collectives"};
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log what the simulator does (to stderr)");
  app.set_version_flag("--version", "wiresim 0.1");
  int exit_code = 0;
  wiresim::tools::add_topo_command(app, &exit_code);
  wiresim::tools::add_coll_command(app, &exit_code);
  wiresim::tools::add_calibrate_command(app, &exit_code);
  wiresim::tools::add_validate_command(app, &exit_code);
  wiresim::tools::add_run_command(app, &exit_code);
  wiresim::tools::add_sweep_command(app, &exit_code);
  wiresim::tools::add_plan_command(app, &exit_code);
  wiresim::tools::add_jobs_command(app, &exit_code);
  app.parse_complete_callback([&] {
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; a real usage error exits 2.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const wiresim::input::InputError& e) {
    fmt::print(stderr, "wiresim: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "wiresim: error: {}\n", e.what());
    return 2;
  }
  std::fflush(stdout);
  return exit_code;
}
