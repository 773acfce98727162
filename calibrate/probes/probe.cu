// wiresim-probe: main, options, timing helpers and output. See probe.h.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "calibrate/probe_format.h"
#include "calibrate/probes/probe.h"

namespace wiresim::probe {

Stats summarize(std::vector<double> us) {
  Stats s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  const std::size_t n = us.size();
  s.median_us = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
  s.min_us = us.front();
  s.max_us = us.back();
  s.repeats = static_cast<int>(n);
  return s;
}

Output::Output(const Options& options, FILE* csv)
    : options_(options), csv_(csv), start_(std::chrono::steady_clock::now()) {}

void Output::row(const std::string& kind, const std::string& src, const std::string& dst, const std::string& tier,
                 int ranks, double bytes, const Stats& s) {
  std::fprintf(csv_, "%s,%s,%s,%s,%d,%.0f,%d,%.4f,%.4f,%.4f\n", kind.c_str(), src.c_str(), dst.c_str(), tier.c_str(),
               ranks, bytes, s.repeats, s.median_us, s.min_us, s.max_us);
  std::fflush(csv_);
}

bool Output::out_of_time() const {
  const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start_;
  return spent.count() > options_.budget_s;
}

void Output::attempt(const std::string& what, const std::function<void()>& measure) {
  if (out_of_time()) {
    std::fprintf(stderr, "wiresim-probe: skipped %s: time budget (%.0f s) spent\n", what.c_str(), options_.budget_s);
    return;
  }
  try {
    measure();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wiresim-probe: skipped %s: %s\n", what.c_str(), e.what());
    cudaGetLastError();  // clear a sticky-free error so later measurements can run
  }
}

std::vector<double> sizes(const Options& o, double limit) {
  std::vector<double> out;
  for (double s = o.min_bytes; s <= std::min(o.max_bytes, limit); s *= o.step) out.push_back(s);
  return out;
}

Stats time_on_stream(cudaStream_t stream, const Options& o, const std::function<void()>& op) {
  cudaEvent_t start, stop;
  WIRESIM_CUDA(cudaEventCreate(&start));
  WIRESIM_CUDA(cudaEventCreate(&stop));
  std::vector<double> us;
  try {
    for (int i = 0; i < o.warmup; ++i) op();
    WIRESIM_CUDA(cudaStreamSynchronize(stream));
    for (int i = 0; i < o.repeats; ++i) {
      WIRESIM_CUDA(cudaEventRecord(start, stream));
      op();
      WIRESIM_CUDA(cudaEventRecord(stop, stream));
      WIRESIM_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      WIRESIM_CUDA(cudaEventElapsedTime(&ms, start, stop));
      us.push_back(ms * 1e3);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return summarize(std::move(us));
}

namespace {

void usage() {
  std::printf(
      "usage: wiresim-probe [--quick] [--out PREFIX] [--max-size BYTES] [--repeats N] [--budget SECONDS]\n"
      "                     [--no-p2p] [--no-nccl]\n"
      "Measures host<->device copies (pinned, pageable), device copies, kernel launch latency, peer copies\n"
      "and peer load/store kernels for every GPU pair, and NCCL collectives where built with NCCL.\n"
      "Writes PREFIX.csv (format: docs/calibrate.md) and PREFIX.json (machine facts).\n"
      "--quick: sizes x4 up to 256 MiB, 7 repeats, a 100 s budget (under 2 minutes on one GPU).\n");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--quick") {
      o.quick = true;
      o.step = 4;
      o.max_bytes = double(256ull << 20);
      o.warmup = 2;
      o.repeats = 7;
      o.budget_s = 100;
    } else if (a == "--out") o.out = next();
    else if (a == "--max-size") o.max_bytes = std::stod(next());
    else if (a == "--repeats") o.repeats = std::max(1, std::stoi(next()));
    else if (a == "--budget") o.budget_s = std::stod(next());
    else if (a == "--no-p2p") o.skip_p2p = true;
    else if (a == "--no-nccl") o.skip_nccl = true;
    else if (a == "-h" || a == "--help") {
      usage();
      std::exit(0);
    } else throw std::invalid_argument("unknown argument '" + a + "' (see --help)");
  }
  return o;
}

}  // namespace
}  // namespace wiresim::probe

int main(int argc, char** argv) {
  using namespace wiresim::probe;
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wiresim-probe: %s\n", e.what());
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "wiresim-probe: no CUDA device found\n");
    return 1;
  }
  const Machine m = describe_machine();
  FILE* json = std::fopen((o.out + ".json").c_str(), "w");
  FILE* csv = std::fopen((o.out + ".csv").c_str(), "w");
  if (!json || !csv) {
    std::fprintf(stderr, "wiresim-probe: cannot write %s.csv / %s.json\n", o.out.c_str(), o.out.c_str());
    return 2;
  }
  std::fputs(m.json.c_str(), json);
  std::fclose(json);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", std::gmtime(&now));
  std::fprintf(csv, "# %s, %s UTC, %d GPU(s), %s mode; facts in %s.json\n", wiresim::calibrate::kProbeCsvVersion,
               date, m.gpu_count, o.quick ? "quick" : "full", o.out.c_str());
  std::fprintf(csv, "%s\n", wiresim::calibrate::kProbeCsvHeader);
  Output out(o, csv);
  // Host copies and the device's own figures on GPU 0 (in quick mode) or every GPU.
  const int host_gpus = o.quick ? 1 : m.gpu_count;
  for (int d = 0; d < host_gpus; ++d) {
    measure_host_copies(out, d, m.host_tier);
    measure_device(out, d);
  }
  if (m.gpu_count > 1 && !o.skip_p2p) measure_peers(out, m);
  if (m.gpu_count > 1 && !o.skip_nccl) measure_nccl(out, m.gpu_count);
  std::fclose(csv);
  std::fprintf(stderr, "wiresim-probe: wrote %s.csv and %s.json\n", o.out.c_str(), o.out.c_str());
  return 0;
}
