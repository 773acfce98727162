// wiresim topo show|matrix|dot TOPOLOGY.yaml [--set k=v]...; wiresim topo import MATRIX.txt|DUMP.xml
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/core.h>

#include "input/file.h"
#include "input/input_error.h"
#include "tools/commands.h"
#include "topologies/builder.h"
#include "topologies/describe.h"
#include "topologies/import.h"
#include "topologies/import_nccl_xml.h"
#include "topologies/routes.h"

namespace wiresim::tools {
namespace {

struct TopoArgs {
  std::string file;
  std::vector<std::string> settings;
  int nodes = 2;
  std::string output;
  std::string name;
  std::string gpu_model;
  std::vector<std::string> links;
};

CLI::App* add_view(CLI::App& topo, const std::shared_ptr<TopoArgs>& args, const char* name,
                   const char* help) {
  auto* cmd = topo.add_subcommand(name, help);
  cmd->add_option("topology", args->file, "topology YAML file")->required();
  cmd->add_option("--set", args->settings, "override a parameter of the file (repeatable)")
      ->type_name("NAME=VALUE");
  return cmd;
}

void run_import(const TopoArgs& args) {
  const std::string text = input::read_file(args.file);
  topo::ImportOptions options;
  options.name = !args.name.empty() ? args.name
                 : std::filesystem::path(args.output.empty() ? args.file : args.output).stem().string();
  if (!args.gpu_model.empty()) options.gpu_model = args.gpu_model;
  for (const auto& l : args.links) {
    auto [label, value] = topo::parse_link_override(l);
    options.links[label] = value;
  }
  // NCCL's dump (NCCL_TOPO_DUMP_FILE) is told from nvidia-smi's matrix by content.
  const std::string yaml = topo::looks_like_nccl_xml(text)
                               ? topo::import_nccl_xml(text, args.file, options)
                               : topo::import_topology(topo::parse_topo_matrix(text, args.file), options);
  if (args.output.empty()) {
    fmt::print("{}", yaml);
    return;
  }
  std::ofstream out(args.output);
  if (!(out << yaml)) throw input::InputError(args.output, 0, 0, "cannot write the file");
}

}  // namespace

void add_topo_command(CLI::App& app, int* exit_code) {
  auto* topo = app.add_subcommand("topo", "inspect a topology, or import one from nvidia-smi topo -m or an NCCL dump");
  topo->require_subcommand(1);
  auto args = std::make_shared<TopoArgs>();
  const auto load = [args] {
    topo::LinkGraph g = topo::load_topology(args->file, topo::parse_overrides(args->settings));
    print_warnings(g.warnings);
    return g;
  };

  add_view(*topo, args, "show",
           "devices by kind, links by tier, per-GPU bandwidth, NVLink domains, NICs per GPU")
      ->callback([=] {
        const topo::LinkGraph g = load();
        fmt::print("{}", topo::topo_summary(g, topo::Router(g)));
        *exit_code = 0;
      });

  auto* matrix = add_view(*topo, args, "matrix",
                          "the GPU/NIC matrix of nvidia-smi topo -m (NV#, PIX, PXB, PHB, NODE, SYS, NET)");
  matrix->add_option("--nodes", args->nodes, "on a cluster, show the first N nodes")
      ->default_val(2)->check(CLI::PositiveNumber);
  matrix->callback([=] {
    const topo::LinkGraph g = load();
    fmt::print("{}", topo::topo_matrix(g, topo::Router(g), {args->nodes}));
    *exit_code = 0;
  });

  add_view(*topo, args, "dot", "Graphviz of devices and links (wiresim topo dot T.yaml | dot -Tsvg)")
      ->callback([=] {
        fmt::print("{}", topo::topo_dot(load()));
        *exit_code = 0;
      });

  auto* import = topo->add_subcommand(
      "import", "turn an nvidia-smi topo -m output or an NCCL topology dump into a topology YAML file");
  import->add_option("matrix", args->file,
                     "text file with the output of nvidia-smi topo -m, or the XML NCCL writes with "
                     "NCCL_TOPO_DUMP_FILE")->required();
  import->add_option("-o,--output", args->output, "YAML file to write (default: print it)");
  import->add_option("--name", args->name, "the topology's name (default: the output file's stem)");
  import->add_option("--gpu-model", args->gpu_model,
                     "V100, A100, H100, H200, B200, L40S or unknown (default: guessed from the labels, or "
                     "from a dump's sm)");
  import->add_option("--link", args->links,
                     "rate and latency of the links behind a label, e.g. NV=25GB/s,250ns or "
                     "PIX=31.5GB/s (labels NV, PIX, PXB, PHB, NODE, SYS; repeatable; matrices only)")
      ->type_name("LABEL=RATE[,LATENCY]");
  import->callback([=] {
    run_import(*args);
    *exit_code = 0;
  });
}

}  // namespace wiresim::tools
