#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/fit_groups.h"
#include "calibrate/probe_csv.h"
#include "input/input_error.h"
#include "tests/approx.h"

using namespace wiresim::calibrate;
using wiresim::sim::Bytes;
using wiresim::sim::BytesPerSec;
using wiresim::input::InputError;
using wiresim::sim::Seconds;

namespace {

// What the probe would write for one kind: sizes 8 B .. 1 GiB (x4), t = α + S/β, ±1% spread.
void add_rows(std::vector<ProbeRow>& rows, const std::string& kind, const std::string& src, const std::string& dst,
              const std::string& tier, int ranks, Seconds alpha, BytesPerSec beta, double factor = 1.0) {
  for (double s = 8; s <= double(1 << 30); s *= 4) {
    const Seconds t = alpha + Bytes{s * factor} / beta;
    // A deterministic ±0.5% wobble standing in for noise.
    const double wobble = 1.0 + 0.005 * std::sin(s);
    rows.push_back({kind, src, dst, tier, ranks, Bytes{s}, 20, t * wobble, t * 0.98, t * 1.05, 0});
  }
}

std::vector<ProbeRow> reparse(const std::vector<ProbeRow>& rows) {
  std::stringstream text;
  text << "# wiresim-probe v1, a test\n";
  write_probe_csv(text, rows);
  return parse_probe_csv(text.str(), "probe.csv");
}

InputError error_of(const std::string& text) {
  try {
    parse_probe_csv(text, "probe.csv");
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return InputError("unreachable");
}

}  // namespace

TEST_CASE("probe CSV rows round-trip through text") {
  std::vector<ProbeRow> rows;
  add_rows(rows, kKindH2dPinned, "host", "gpu0", "pcie", 1, Seconds{2e-6}, BytesPerSec{25e9});
  const std::vector<ProbeRow> back = reparse(rows);
  REQUIRE(back.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(back[i].kind == rows[i].kind);
    CHECK(back[i].dst == rows[i].dst);
    CHECK(back[i].tier == rows[i].tier);
    CHECK(back[i].bytes.count() == rows[i].bytes.count());
    CHECK(back[i].median.count() == rel_approx(rows[i].median.count()).epsilon(1e-8));
    CHECK(back[i].line == static_cast<int>(i) + 3);  // comment, header, then rows
  }
}

TEST_CASE("the probe CSV goes through the fitter: one group per kind and tier") {
  std::vector<ProbeRow> rows;
  add_rows(rows, kKindH2dPinned, "host", "gpu0", "pcie", 1, Seconds{2e-6}, BytesPerSec{25e9});
  add_rows(rows, kKindP2pCopy, "gpu0", "gpu1", "nvlink", 2, Seconds{3e-6}, BytesPerSec{370e9});
  add_rows(rows, kKindP2pCopy, "gpu1", "gpu0", "nvlink", 2, Seconds{3e-6}, BytesPerSec{370e9});
  // all_reduce over 8 ranks: t = α + S·(2·7/8)/busbw.
  add_rows(rows, "all_reduce", "gpu0", "all", kTierNccl, 8, Seconds{30e-6}, BytesPerSec{360e9}, 1.75);
  const auto groups = groups_from_probe(reparse(rows), "probe.csv");
  REQUIRE(groups.size() == 3);
  const auto fits = fit_groups(groups);
  REQUIRE(fits.size() == 3);
  // std::map order: (kind, tier, ranks).
  CHECK(fits[0].group.label == "all_reduce 8 ranks");
  CHECK(fits[0].group.bus_factor == rel_approx(1.75));
  CHECK(fits[0].fit.alpha.count() == rel_approx(30e-6).epsilon(0.02));
  CHECK(fits[0].fit.beta.count() == rel_approx(360e9).epsilon(0.02));
  CHECK(fits[1].group.label == "h2d_pinned pcie");
  CHECK(fits[1].fit.alpha.count() == rel_approx(2e-6).epsilon(0.02));
  CHECK(fits[1].fit.beta.count() == rel_approx(25e9).epsilon(0.02));
  CHECK(fits[2].group.label == "p2p_copy nvlink");
  CHECK(fits[2].group.points.size() == 2 * 14);  // both directions pooled
  CHECK(fits[2].fit.beta.count() == rel_approx(370e9).epsilon(0.02));
  // Each fit is checked on the sizes it did not see: 14 sizes, every third held out (4 of
  // them); the times are α-β with ±0.5% wobble, so the held-out error is under 1%.
  CHECK(fits[1].held_out_points == 4);
  CHECK(fits[1].held_out_pct < 1.0);
  CHECK(fits[2].held_out_points == 2 * 4);   // both directions of a held-out size held out
}

TEST_CASE("a fit's held-out error shows data that α-β does not describe") {
  // A copy whose rate steps from 20 to 50 GB/s at 16 MiB (a protocol change), measured from
  // 64 KiB to 1 GiB: no α and β fit both sides, and the sizes the fit did not see say so.
  std::vector<ProbeRow> rows;
  for (double s = 65536; s <= double(1 << 30); s *= 2) {
    const Seconds t = Seconds{3e-6} + Bytes{s} / BytesPerSec{s < (1 << 24) ? 20e9 : 50e9};
    rows.push_back({kKindH2dPinned, "host", "gpu0", "pcie", 1, Bytes{s}, 20, t, t, t, 0});
  }
  const auto fits = fit_groups(groups_from_probe(reparse(rows), "probe.csv"));
  REQUIRE(fits.size() == 1);
  CHECK(fits[0].held_out_points == 5);   // 15 sizes: the 3rd, 6th, ..., 15th
  CHECK(fits[0].held_out_pct > 5.0);
  // Fewer than six points: not checked.
  rows.resize(5);
  const auto few = fit_groups(groups_from_probe(reparse(rows), "probe.csv"));
  CHECK(std::isnan(few[0].held_out_pct));
}

TEST_CASE("a bad probe CSV is refused at its line and column") {
  const std::string header = std::string(kProbeCsvHeader) + "\n";
  const InputError missing = error_of(header + "h2d_pinned,host,gpu0,pcie,1,8,20,2.0,1.9\n");
  CHECK(missing.line() == 2);
  CHECK(missing.message().find("expected 10 fields") != std::string::npos);

  const InputError bad = error_of(header + "h2d_pinned,host,gpu0,pcie,1,8,20,fast,1.9,2.5\n");
  CHECK(bad.line() == 2);
  CHECK(bad.column() == 34);
  CHECK(bad.message() == "median_us: expected a number, got 'fast'");

  const InputError order = error_of(header + "h2d_pinned,host,gpu0,pcie,1,8,20,3.0,1.9,2.5\n");
  CHECK(order.message().find("min_us <= median_us <= max_us") != std::string::npos);

  // ranks and repeats are counts: a fraction or a number past int is refused, never cast.
  const InputError huge = error_of(header + "h2d_pinned,host,gpu0,pcie,1e300,8,20,2.0,1.9,2.5\n");
  CHECK(huge.column() == 27);
  CHECK(huge.message().find("ranks: expected a whole number") != std::string::npos);
  CHECK(error_of(header + "h2d_pinned,host,gpu0,pcie,1,8,2.5,2.0,1.9,2.5\n").message().find("repeats") !=
        std::string::npos);

  const InputError no_header = error_of("kind,src\n");
  CHECK(no_header.line() == 1);
}
