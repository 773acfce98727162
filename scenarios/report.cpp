#include "scenarios/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace wiresim::scenarios {
namespace {

constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Horizontal stacked bars: one row per layout, one segment per series.
std::string stacked_bars(const std::string& title, const std::string& unit, const std::vector<std::string>& labels,
                         const std::vector<std::string>& series, const std::vector<std::vector<double>>& values) {
  const int label_w = 220, chart_w = 560, row_h = 22, top = 30;
  const int height = top + row_h * static_cast<int>(labels.size()) + 50;
  double max_total = 0.0;
  for (const auto& row : values) {
    double t = 0.0;
    for (double v : row) t += v;
    max_total = std::max(max_total, t);
  }
  if (max_total <= 0.0) max_total = 1.0;
  std::string svg = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">"
      "<title>{}</title><text x=\"4\" y=\"18\" class=\"title\">{} ({})</text>",
      label_w + chart_w + 80, height, escape(title), escape(title), escape(unit));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const int y = top + row_h * static_cast<int>(i);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"label\">{}</text>", label_w - 6, y + 15,
                       escape(labels[i]));
    double x = label_w, total = 0.0;
    for (std::size_t k = 0; k < series.size(); ++k) {
      const double w = values[i][k] / max_total * chart_w;
      total += values[i][k];
      if (w <= 0.0) continue;
      svg += fmt::format("<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\">"
                         "<title>{}: {:.4g} {}</title></rect>",
                         x, y + 3, w, row_h - 6, kColours[k % 10], escape(series[k]), values[i][k], escape(unit));
      x += w;
    }
    svg += fmt::format("<text x=\"{:.2f}\" y=\"{}\" class=\"value\">{:.4g}</text>", x + 4, y + 15, total);
  }
  const int ly = top + row_h * static_cast<int>(labels.size()) + 20;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const int lx = label_w + static_cast<int>(k) * 140;
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{}\" class=\"label\">{}</text>",
                       lx, ly, kColours[k % 10], lx + 16, ly + 11, escape(series[k]));
  }
  return svg + "</svg>";
}

// One cell per link, coloured by utilisation (white 0% to red 100%).
std::string heat_map(const std::string& title, const SweepRow& row) {
  const auto& links = row.result.utilisation;
  const int cols = 16, cell = 34;
  const int rows = std::max<int>(1, (static_cast<int>(links.size()) + cols - 1) / cols);
  std::string svg = fmt::format(
      "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">"
      "<title>{}</title><text x=\"4\" y=\"18\" class=\"title\">{}</text>",
      cols * cell + 10, rows * cell + 40, escape(title), escape(title));
  for (std::size_t i = 0; i < links.size(); ++i) {
    const double u = std::clamp(links[i].utilisation, 0.0, 1.0);
    const int shade = static_cast<int>(255 * (1.0 - u));
    const int x = 4 + static_cast<int>(i % cols) * cell, y = 28 + static_cast<int>(i / cols) * cell;
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb(255,{},{})\" stroke=\"#ccc\">"
                       "<title>{}: {:.1f}%</title></rect>",
                       x, y, cell - 2, cell - 2, shade, shade, escape(links[i].link), 100.0 * links[i].utilisation);
  }
  if (links.empty()) svg += "<text x=\"4\" y=\"44\" class=\"label\">no link carried data</text>";
  return svg + "</svg>";
}

// The layout, and its micro-batch count when it split the batch.
std::string row_name(const SweepRow& row) {
  return row.micro_batches > 1 ? fmt::format("{} mb{}", layout_name(row.layout), row.micro_batches)
                               : layout_name(row.layout);
}

constexpr const char* kStyle =
    "<style>body{font-family:sans-serif;margin:2em;color:#222}svg{display:block;margin:1em 0}"
    ".title{font-weight:bold;font-size:14px}.label,.value{font-size:12px}"
    "table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
    "td:first-child,th:first-child{text-align:left}.conditions{color:#a40000;font-weight:bold}</style>";

// Latency (x, linear) against cost (y, log) of every plan, a colour per system; the front as
// a line through its points; the target as a dashed vertical line.
std::string front_plot(const PlanSpec& spec, const std::vector<Plan>& plans) {
  const int left = 70, width = 640, top = 30, height = 380, legend = 230;
  double max_ms = spec.max_latency ? spec.max_latency->ms() : 0.0, lo = INFINITY, hi = 0.0;
  std::vector<std::string> systems;
  for (const auto& p : plans) {
    max_ms = std::max(max_ms, p.result.step.ms());
    lo = std::min(lo, p.cost_per_mtok);
    hi = std::max(hi, p.cost_per_mtok);
    if (std::find(systems.begin(), systems.end(), p.system) == systems.end()) systems.push_back(p.system);
  }
  if (!(lo > 0.0) || !std::isfinite(hi)) lo = 0.01, hi = 1.0;
  const double l0 = std::floor(std::log10(lo)), l1 = std::max(l0 + 1.0, std::ceil(std::log10(hi)));
  if (max_ms <= 0.0) max_ms = 1.0;
  const auto X = [&](double ms) { return left + ms / (max_ms * 1.05) * width; };
  const auto Y = [&](double cost) { return top + height - (std::log10(cost) - l0) / (l1 - l0) * height; };
  std::string svg = fmt::format(
      "<svg class=\"front\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">"
      "<title>Cost per million tokens against latency</title>"
      "<text x=\"4\" y=\"18\" class=\"title\">Cost (USD per million tokens, log) against latency (ms)</text>",
      left + width + legend, top + height + 50);
  for (double e = l0; e <= l1; e += 1.0)
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"label\">{:g}</text>",
                       left, left + width, Y(std::pow(10.0, e)), Y(std::pow(10.0, e)), left - 4,
                       Y(std::pow(10.0, e)) + 4, std::pow(10.0, e));
  for (int k = 0; k <= 5; ++k) {
    const double ms = max_ms * 1.05 * k / 5.0;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" class=\"label\">{:.3g}</text>", X(ms),
                       top + height + 16, ms);
  }
  if (spec.max_latency)
    svg += fmt::format("<line class=\"target\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#e15759\" "
                       "stroke-dasharray=\"6 4\"/><text x=\"{0:.1f}\" y=\"{3}\" class=\"label\">target</text>",
                       X(spec.max_latency->ms()), top, top + height, top + 10);
  std::vector<const Plan*> front;
  for (const auto& p : plans)
    if (p.front) front.push_back(&p);
  std::sort(front.begin(), front.end(), [](const Plan* a, const Plan* b) { return a->result.step < b->result.step; });
  std::string line;
  for (const Plan* p : front) line += fmt::format("{:.1f},{:.1f} ", X(p->result.step.ms()), Y(p->cost_per_mtok));
  if (!line.empty())
    svg += fmt::format("<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" points=\"{}\"/>", line);
  for (const auto& p : plans) {
    const std::size_t k = std::find(systems.begin(), systems.end(), p.system) - systems.begin();
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\" fill-opacity=\"{}\">"
                       "<title>{}: {} GPUs, {}, batch {}: {:.2f} ms, ${:.3f} per million tokens{}</title></circle>",
                       X(p.result.step.ms()), Y(p.cost_per_mtok), p.front ? 5 : 3, kColours[k % 10],
                       p.front ? 1.0 : 0.45, escape(p.system), p.gpus, escape(layout_name(p.layout)), p.batch,
                       p.result.step.ms(), p.cost_per_mtok, p.front ? " (front)" : "");
  }
  for (std::size_t k = 0; k < systems.size(); ++k)
    svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" class=\"label\">{}</text>",
                       left + width + 20, top + 10 + 18 * static_cast<int>(k), kColours[k % 10], left + width + 30,
                       top + 14 + 18 * static_cast<int>(k), escape(systems[k]));
  return svg + "</svg>";
}

}  // namespace

void write_plan_report(std::ostream& out, const PlanSpec& spec, const PlanResult& result) {
  const bool decode = spec.phase == Phase::decode;
  const std::vector<Plan>& plans = result.plans.empty() ? result.closest : result.plans;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<title>wiresim plan: " << escape(spec.model.name) << "</title>" << kStyle << "</head><body>\n";
  out << fmt::format("<h1>{} {}: {}</h1>\n", escape(spec.model.name), decode ? "decode" : "prefill",
                     spec.max_latency ? fmt::format("{} &le; {:.1f} ms", decode ? "TPOT" : "TTFT", spec.max_latency->ms())
                                      : std::string("no latency target"));
  out << fmt::format("<p>{} plans run, {} layouts left out for memory, {} missed the target. Compute at MFU {:.2f} "
                     "and MBU {:.2f} of the catalogue's peaks; prices from the catalogue (docs/catalog.md); cost of "
                     "one replica.</p>\n",
                     result.counts.evaluated, result.counts.too_big, result.counts.missed, spec.efficiency.mfu,
                     spec.efficiency.mbu);
  if (result.plans.empty()) out << "<p>No plan meets the target: the fastest that ran.</p>\n";
  out << front_plot(spec, plans) << "\n";
  out << "<table><tr><th>system</th><th>GPUs</th><th>layout</th><th>batch</th><th>latency (ms)</th>"
         "<th>tokens/s</th><th>USD / M tokens</th><th>GB / GPU</th><th>front</th><th>bottleneck</th></tr>\n";
  for (std::size_t i = 0; i < std::min<std::size_t>(plans.size(), 100); ++i) {
    const Plan& p = plans[i];
    out << fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}</td><td>{:.0f}</td><td>{:.3f}</td>"
                       "<td>{:.1f}</td><td>{}</td><td>{}</td></tr>\n",
                       escape(p.system), p.gpus, escape(layout_name(p.layout)), p.batch, p.result.step.ms(),
                       p.tokens_per_s, p.cost_per_mtok, p.result.memory.total().count() / 1e9, p.front ? "*" : "",
                       escape(p.bottleneck));
  }
  out << "</table></body></html>\n";
}

namespace {

void write_conditions(std::ostream& out, const std::vector<std::string>& conditions) {
  if (conditions.empty()) return;
  out << "<p class=\"conditions\">Not the topology as shipped:</p>\n<ul class=\"conditions\">\n";
  for (const auto& c : conditions) out << "<li>" << escape(c) << "</li>\n";
  out << "</ul>\n";
}

}  // namespace

void write_jobs_report(std::ostream& out, const std::vector<PlacementRun>& runs,
                       const std::vector<std::string>& conditions) {
  if (runs.empty()) return;
  const JobsSpec& spec = runs.front().spec;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<title>wiresim jobs: " << escape(spec.name.empty() ? spec.file : spec.name) << "</title>" << kStyle
      << "</head><body>\n";
  out << fmt::format("<h1>{} jobs on {}</h1>\n", spec.jobs.size(), escape(spec.topology));
  out << fmt::format("<p>Jobs file {}; times in ms. A job's slowdown is its time beside the others over its time "
                     "with the fabric to itself.</p>\n",
                     escape(spec.file));
  write_conditions(out, conditions);
  if (runs.size() > 1) {
    std::vector<std::string> labels;
    std::vector<std::vector<double>> ends;
    for (const auto& r : runs) {
      labels.push_back(fmt::format("{}", fmt::join(r.names, ", ")));
      ends.push_back({r.result.makespan.ms()});
    }
    out << stacked_bars("When the last job ends, by placement", "ms", labels, {"makespan"}, ends) << "\n";
    out << "<table><tr><th>placement</th><th>makespan (ms)</th><th>job</th><th>where</th><th>alone (ms)</th>"
           "<th>together (ms)</th><th>slowdown</th></tr>\n";
    for (std::size_t i = 0; i < runs.size(); ++i)
      for (std::size_t j = 0; j < runs[i].result.jobs.size(); ++j) {
        const PlacementRun& r = runs[i];
        const JobOutcome& o = r.result.jobs[j];
        out << fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td>"
                           "<td>{:.3f}x</td></tr>\n",
                           j == 0 ? escape(labels[i]) : "",
                           j == 0 ? fmt::format("{:.3f}", r.result.makespan.ms()) : "", escape(o.name),
                           escape(placement_text(r.spec.jobs[j])), o.alone.ms(), o.together.ms(), o.together / o.alone);
      }
    out << "</table></body></html>\n";
    return;
  }
  const JobsResult& result = runs.front().result;
  std::vector<std::string> labels;
  std::vector<std::vector<double>> times;
  for (const auto& o : result.jobs) {
    labels.push_back(o.name);
    times.push_back({o.start.ms(), o.alone.ms(), std::max(0.0, (o.together - o.alone).ms())});
  }
  out << stacked_bars("Each job's step: alone, and what sharing the fabric added", "ms", labels,
                      {"start", "alone", "added by sharing"}, times)
      << "\n";
  out << "<table><tr><th>job</th><th>where</th><th>start (ms)</th><th>alone (ms)</th><th>together (ms)</th>"
         "<th>slowdown</th></tr>\n";
  for (std::size_t j = 0; j < result.jobs.size(); ++j) {
    const JobOutcome& o = result.jobs[j];
    out << fmt::format("<tr><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}x</td></tr>\n",
                       escape(o.name), escape(placement_text(spec.jobs[j])), o.start.ms(), o.alone.ms(), o.together.ms(),
                       o.together / o.alone);
  }
  out << "</table>\n";
  out << fmt::format("<p>All jobs together end at {:.3f} ms. {}</p>\n", result.makespan.ms(),
                     result.shared_count == 0 ? std::string("No link carried more than one job's bytes.")
                                              : fmt::format("{} links carried more than one job's bytes; the busiest "
                                                            "(bytes over capacity x the shared run):",
                                                            result.shared_count));
  if (!result.shared.empty()) {
    out << "<table><tr><th>link</th><th>busy</th>";
    for (const auto& o : result.jobs) out << "<th>" << escape(o.name) << " (GB)</th>";
    out << "</tr>\n";
    for (const auto& l : result.shared) {
      out << fmt::format("<tr><td>{}</td><td>{:.1f}%</td>", escape(l.link), 100.0 * l.utilisation);
      for (const auto& b : l.bytes) out << fmt::format("<td>{:.3f}</td>", b.count() / 1e9);
      out << "</tr>\n";
    }
    out << "</table>\n";
  }
  out << "</body></html>\n";
}

void write_sweep_report(std::ostream& out, const SweepSpec& spec, const std::vector<SweepRow>& rows,
                        const std::vector<std::pair<double, double>>* step_bands,
                        const std::vector<std::string>& conditions) {
  const std::size_t shown = std::min<std::size_t>(rows.size(), 24);
  std::vector<std::string> labels;
  std::set<std::string> kinds, tiers;
  for (std::size_t i = 0; i < shown; ++i) {
    labels.push_back(row_name(rows[i]));
    for (const auto& [k, c] : rows[i].result.by_collective) kinds.insert(k);
    for (const auto& [t, s] : rows[i].result.by_tier) tiers.insert(t);
  }
  std::vector<std::string> time_series(kinds.begin(), kinds.end());
  time_series.push_back("compute");
  std::vector<std::vector<double>> times, bytes;
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = rows[i].result;
    std::vector<double> t;
    for (const auto& k : kinds) t.push_back(r.by_collective.count(k) ? r.by_collective.at(k).time.ms() : 0.0);
    t.push_back(r.compute.ms());
    times.push_back(t);
    std::vector<double> b;
    for (const auto& k : tiers) b.push_back(r.by_tier.count(k) ? r.by_tier.at(k).bytes.count() / 1e9 : 0.0);
    bytes.push_back(b);
  }
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<title>wiresim sweep: " << escape(spec.model.name) << " on " << spec.gpus << " GPUs</title>"
      << kStyle << "</head><body>\n";
  out << fmt::format("<h1>{} on {} GPUs of {}</h1>\n", escape(spec.model.name.empty() ? "model" : spec.model.name),
                     spec.gpus, escape(spec.topology));
  out << fmt::format("<p>{} layouts simulated, ranked by {}; times are per step in ms, bytes in GB (1e9 B).</p>\n",
                     rows.size(),
                     spec.objective == Objective::step_time ? "step time"
                     : spec.objective == Objective::comm_time ? "exposed communication" : "tokens per second");
  write_conditions(out, conditions);
  out << "<ol>\n";
  for (std::size_t i = 0; i < std::min<std::size_t>(rows.size(), 3); ++i)
    out << "<li>" << escape(rows[i].explanation) << "</li>\n";
  out << "</ol>\n";
  out << stacked_bars("Time per step by collective", "ms", labels, time_series, times) << "\n";
  out << stacked_bars("Bytes per step by tier", "GB", labels, std::vector<std::string>(tiers.begin(), tiers.end()), bytes)
      << "\n";
  out << heat_map("Link utilisation, best layout: " + row_name(rows.front()), rows.front()) << "\n";
  out << heat_map("Link utilisation, worst layout: " + row_name(rows.back()), rows.back()) << "\n";
  const bool banded = step_bands && step_bands->size() == rows.size();
  if (banded)
    out << "<p>Step band: where 8 in 10 measured times fell on validation data of the layout's hardware class, "
           "applied to the exposed communication (docs/accuracy.md).</p>\n";
  out << "<table><tr><th>layout</th><th>step (ms)</th>" << (banded ? "<th>step band (ms)</th>" : "")
      << "<th>comm (ms)</th><th>exposed (ms)</th><th>tokens/s</th></tr>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const std::string band =
        banded ? fmt::format("<td>{:.3f}..{:.3f}</td>", (*step_bands)[i].first, (*step_bands)[i].second) : "";
    out << fmt::format("<tr><td>{}</td><td>{:.3f}</td>{}<td>{:.3f}</td><td>{:.3f}</td><td>{:.0f}</td></tr>\n",
                       escape(row_name(row)), row.result.step.ms(), band, row.result.comm.ms(),
                       row.result.exposed_comm.ms(), row.result.tokens_per_s);
  }
  out << "</table></body></html>\n";
}

}  // namespace wiresim::scenarios
