#include "tools/mpi_sweep.h"

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#ifdef WIRESIM_MPI
#include <mpi.h>
#endif

namespace wiresim::tools {
namespace {

int g_rank = 0;
int g_size = 1;
bool g_started = false;

nlohmann::json row_to_json(const scenarios::SweepRow& row) {
  const auto& l = row.layout;
  const auto& r = row.result;
  nlohmann::json j{{"index", row.index},
                   {"micro_batches", row.micro_batches},
                   {"layout", {l.tp, l.ep, l.pp, l.dp, static_cast<int>(l.placement)}},
                   {"step", r.step.count()},
                   {"compute", r.compute.count()},
                   {"comm", r.comm.count()},
                   {"exposed", r.exposed_comm.count()},
                   {"tokens_per_s", r.tokens_per_s},
                   {"per_token", r.per_token_latency.count()}};
  for (const auto& [k, c] : r.by_collective)
    j["collectives"][k] = {c.count, c.bytes.count(), c.time.count(), c.algorithm};
  for (const auto& [k, t] : r.by_tier) j["tiers"][k] = {t.bytes.count(), t.busy.count()};
  for (const auto& u : r.utilisation) j["utilisation"].push_back({u.link, u.utilisation});
  return j;
}

scenarios::SweepRow row_from_json(const nlohmann::json& j) {
  scenarios::SweepRow row;
  row.index = j.at("index").get<int>();
  row.micro_batches = j.at("micro_batches").get<int>();
  const auto& l = j.at("layout");
  row.layout.tp = l[0];
  row.layout.ep = l[1];
  row.layout.pp = l[2];
  row.layout.dp = l[3];
  row.layout.placement = static_cast<scenarios::Placement>(l[4].get<int>());
  auto& r = row.result;
  r.step = sim::Seconds{j.at("step").get<double>()};
  r.compute = sim::Seconds{j.at("compute").get<double>()};
  r.comm = sim::Seconds{j.at("comm").get<double>()};
  r.exposed_comm = sim::Seconds{j.at("exposed").get<double>()};
  r.tokens_per_s = j.at("tokens_per_s").get<double>();
  r.per_token_latency = sim::Seconds{j.at("per_token").get<double>()};
  if (j.contains("collectives"))
    for (const auto& [k, c] : j["collectives"].items())
      r.by_collective[k] = {c[0].get<int>(), sim::Bytes{c[1].get<double>()}, sim::Seconds{c[2].get<double>()},
                            c[3].get<std::string>()};
  if (j.contains("tiers"))
    for (const auto& [k, t] : j["tiers"].items()) r.by_tier[k] = {sim::Bytes{t[0].get<double>()}, sim::Seconds{t[1].get<double>()}};
  if (j.contains("utilisation"))
    for (const auto& u : j["utilisation"]) r.utilisation.push_back({u[0].get<std::string>(), u[1].get<double>()});
  r.busiest.assign(r.utilisation.begin(), r.utilisation.begin() + std::min<std::size_t>(5, r.utilisation.size()));
  return row;
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
#ifdef WIRESIM_MPI
  // Only under a launcher: a plain `wiresim` run needs no MPI runtime.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK")) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_started = true;
  }
#else
  (void)argc;
  (void)argv;
#endif
}

MpiSession::~MpiSession() {
#ifdef WIRESIM_MPI
  if (g_started) MPI_Finalize();
#endif
}

int MpiSession::rank() { return g_rank; }
int MpiSession::size() { return g_size; }

std::vector<scenarios::SweepRow> gather_sweep(const std::vector<scenarios::SweepRow>& local) {
  if (g_size == 1) return local;
  std::vector<scenarios::SweepRow> all;
#ifdef WIRESIM_MPI
  nlohmann::json mine = nlohmann::json::array();
  for (const auto& row : local) mine.push_back(row_to_json(row));
  const std::string text = mine.dump();
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(g_size), offsets(g_size);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string gathered;
  if (g_rank == 0) {
    int total = 0;
    for (int r = 0; r < g_size; ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    gathered.resize(total);
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, gathered.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  if (g_rank == 0)
    for (int r = 0; r < g_size; ++r)
      for (const auto& j : nlohmann::json::parse(gathered.substr(offsets[r], lengths[r]))) all.push_back(row_from_json(j));
#endif
  return all;
}

}  // namespace wiresim::tools
