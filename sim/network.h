// Network: the transfers flowing right now, on directed links, and their max-min fair rates.
//
// A flow crosses a set of links (a path or a multicast tree) at one rate, bounded by its
// rate cap; concurrent flows share each link max-min fairly (sim/maxmin.h). The network
// answers two questions, as SimGrid's next_occurring_event() and update_actions_state()
// do: when does the next flow finish (next_completion), and which flows finish now
// (take_completed). Flows added or finished since the last reshare() mark their links;
// reshare() re-solves only the connected components (flows linked through shared links,
// transitively) that contain a marked link, so a change on one side of the machine costs
// nothing on the other. All completions and starts at one instant are batched into one
// reshare. A flow finishes at the integer picosecond its last byte arrives (rounded up),
// so completion is decided by time, never by comparing leftover bytes with an epsilon.
//
// Giant components (optional, set_window): re-solving a component of F flows costs O(F),
// so a component whose flows end one at a time costs O(F^2) (an uneven all-to-all). With a
// window of W flows, a component found to hold more than W flows is not re-solved whole:
// only the flows on the links that changed are re-shared (max-min among themselves, on
// what the other flows of those links leave), the rest keep their rates. Ends may also be
// deferred: a link whose flows ended re-shares once they freed more than `slack` of its
// capacity. Rates stay feasible (no link over capacity) but are no longer exactly max-min:
// an approximation whose error callers measure (bench/README.md). Off by default.
//
//   Network net({100e9});                       // one link, 100 GB/s
//   net.add_flow(route, 1e6, kNoCap, 0.0, /*tag=*/0, 0);  net.reshare(0);
//   net.next_completion();                      // 10'000'000 ps = 1e6 B / 100 GB/s
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "sim/event_queue.h"
#include "sim/finish_heap.h"
#include "sim/maxmin.h"
#include "sim/transfer_dag.h"
#include "sim/units.h"

namespace wiresim::sim {

class Network {
 public:
  static constexpr double kNoCap = std::numeric_limits<double>::infinity();

  // Capacities in bytes/s, one per link, each finite and > 0.
  explicit Network(std::vector<double> capacity);

  // Makes room for this many flows at once, and on each link for per_link[link] of them
  // (empty: none), so that a burst of starts does not regrow, and briefly double, the flow
  // table and the links' lists (an estimate; more may flow).
  void reserve(std::size_t flows, std::span<const std::uint32_t> per_link = {});

  // Audit mode integrates every link's bytes over time and lets the audit_* calls check
  // capacity, max-min fairness and byte conservation (slow; for tests and debug builds).
  void set_audit(bool on) { audit_ = on; }

  // A flow of `bytes` (> 0) over `route` whose first byte may leave at start_ps (exact
  // picoseconds, in (now - 1, now]); the route's memory must outlive the flow. It is
  // given a rate at the next reshare(). A flow with no links must have a finite cap.
  // `tag` comes back from take_completed (a DAG node, say).
  void add_flow(std::span<const LinkId> route, double bytes, double rate_cap, double start_ps,
                std::uint32_t tag, SimTime now);
  // When the next flow finishes; none when no flow is flowing.
  std::optional<SimTime> next_completion();
  // Removes the flows that finish at `now` and appends their tags.
  void take_completed(SimTime now, std::vector<std::uint32_t>& tags);
  // Re-solves the components touched by flows added or finished since the last call.
  void reshare(SimTime now);
  // Components of more than `flows` flows are re-shared locally (see above); ends are
  // deferred until they freed `slack` (0..1) of a link. flows = 0 turns it off.
  void set_window(std::size_t flows, double slack = 0.0);
  // Whether some re-share was local (the rates were then not exactly max-min).
  bool approximate() const { return local_reshares_ + deferred_ > 0; }
  std::uint64_t local_reshares() const { return local_reshares_; }

  std::size_t active_flows() const { return active_; }
  std::size_t links() const { return links_.size(); }
  // Bytes of finished flows that crossed the link (each flow's full payload).
  double carried(LinkId link) const { return links_[link].carried; }
  // Time during which at least one flow was on the link, up to the last flow's end.
  SimTime busy(LinkId link) const { return links_[link].busy; }
  // The current rate of the flow with `tag`, for tests; none if it is not flowing.
  std::optional<double> rate_of(std::uint32_t tag) const;
  // Work done by reshare(): components solved and flow rates computed in them.
  std::uint64_t components_solved() const { return components_solved_; }
  std::uint64_t flows_resolved() const { return flows_resolved_; }

  // Audit: integrate link bytes up to `now` (call before take_completed), check that no
  // link is over capacity and every rate is max-min fair (call after reshare), and at the
  // end check that each link's integrated bytes equal the bytes of the flows it carried.
  // Each throws std::logic_error naming the violation.
  void audit_advance(SimTime now);
  void audit_sharing() const;
  void audit_finish() const;

 private:
  struct Flow {
    const LinkId* route = nullptr;
    std::uint32_t route_len = 0;
    std::uint32_t tag = 0;
    std::uint32_t mark = 0;   // reshare epoch that last visited it
    std::uint32_t local = 0;  // its index in the component being solved
    bool alive = false;
    std::uint32_t unswept = 0;  // dead: link lists that still hold it (its slot is reused at 0)
    std::uint32_t wmark = 0;    // window epoch that last took it
    double bytes = 0.0;
    double remaining = 0.0;  // bytes left as of last_ps
    double rate = 0.0;       // bytes/s; 0 until its first reshare
    double cap = kNoCap;
    double last_ps = 0.0;    // exact picoseconds at which `remaining` was measured
    SimTime finish = 0;
    std::span<const LinkId> links() const { return {route, route_len}; }
  };
  struct Link {
    double capacity = 0.0;
    std::vector<std::uint32_t> flows;  // flow slots, in arrival order; dead ones until reshare
    std::uint32_t active = 0;          // live flows on it
    std::uint32_t mark = 0;
    std::uint32_t local = 0;
    std::uint32_t big = 0;        // epoch in which an unfinished search found it in a giant component
    std::uint32_t big_until = 0;  // reshare count until which it is taken as giant without a search
    std::uint32_t smark = 0;      // window epoch that last took it as a seed
    std::uint32_t wmark = 0;      // window epoch that last took it as a window link
    std::uint32_t wlocal = 0;
    bool seeded = false;          // a flow was added on it since its last re-share
    bool queued = false;          // in seeds_ (each link is listed there once)
    double load = 0.0;            // sum of the rates of its live flows
    double freed = 0.0;           // rates of flows ended on it since its last re-share
    SimTime busy_since = 0;
    SimTime busy = 0;
    double carried = 0.0;
    double audit_bytes = 0.0;      // integral of the rates on it (audit mode)
    double audit_tolerance = 0.0;  // rounding the integral may differ by (audit mode)
  };
  // Lists a link whose flows changed for the next reshare(), once however many changed.
  void queue_seed(LinkId link) {
    if (links_[link].queued) return;
    links_[link].queued = true;
    seeds_.push_back(link);
  }
  bool collect_component(LinkId seed, std::size_t max_visits);
  bool solve_alone(LinkId seed, SimTime now);
  void solve_component(SimTime now);
  void sweep(std::vector<std::uint32_t>& on_link);
  void reshare_window(SimTime now);
  void set_rate(std::uint32_t flow, double rate, SimTime now);
  void drop_stale_finishes();
  void rebuild_finishes();

  std::vector<Link> links_;
  std::vector<Flow> flows_;  // slots, reused through free_
  std::vector<std::uint32_t> free_;
  std::vector<LinkId> seeds_;  // links touched since the last reshare, each once, in order
  std::vector<LinkId> big_seeds_;  // this reshare's seeds in giant components
  std::size_t window_ = 0;     // 0: every component re-solved whole
  double slack_ = 0.0;
  std::uint32_t reshares_ = 0, wepoch_ = 0;
  std::uint64_t local_reshares_ = 0, deferred_ = 0;
  // Predicted ends: (time, push order) -> flow slot. A flow re-rated gets a new entry and
  // the old one goes stale (its time no longer matches the flow's); stale entries are
  // skipped when they surface, and the whole queue is rebuilt when they outnumber the live.
  FinishQueue finishes_;
  std::size_t active_ = 0;
  std::uint32_t epoch_ = 0;
  bool audit_ = false;
  SimTime audit_time_ = 0;
  std::uint64_t components_solved_ = 0;
  std::uint64_t flows_resolved_ = 0;

  // Scratch for one component, kept between calls so the hot path does not allocate.
  std::vector<std::uint32_t> comp_links_, comp_flows_;
  std::vector<double> comp_capacity_, comp_cap_, comp_rates_;
  std::vector<std::uint32_t> comp_offsets_, comp_route_;
  std::vector<double> comp_inside_;  // window: old rates of window flows, per window link
  std::vector<std::uint8_t> comp_complete_;  // window: every flow of the link is in the window
  MaxMinSolver solver_;
};

}  // namespace wiresim::sim
