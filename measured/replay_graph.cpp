// SPDX-License-Identifier: Apache-2.0
#include "measured/replay_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>

#include "base/error.h"
#include "base/units.h"

namespace tessera::measured {

using graph::CollType;
using graph::ExecGraph;
using graph::Group;
using graph::GroupKind;
using graph::Node;
using graph::NodeId;
using graph::NodeKind;
using graph::OpClass;
using graph::RankGraph;
using graph::Stream;

namespace {

constexpr std::int64_t kWaitSlackNs = 5'000;     // unexplained start delay that counts as a wait
constexpr std::int64_t kWaitWindowNs = 50'000;   // how far back the waited-for activity may end
constexpr std::int64_t kEndToleranceNs = 2'000;  // clock skew between CPU and GPU timestamps
constexpr std::int64_t kBlockedCallNs = 50'000;  // a launch call this long waited for the GPU
constexpr std::int64_t kMaxDurationNs = 1'000'000'000'000'000;  // 11.6 days, 1e18 ps

// A node before ordering: the graph needs every dependency to precede its dependent.
struct Item {
  Node node;
  std::vector<std::uint32_t> deps;
  // The deps that order a chain (a CUDA stream's, a host thread's): they alone cannot form a
  // cycle. The others (launches, synchronizations, inferred waits) come from timestamps and
  // are dropped where contradictory timestamps make them form one.
  std::vector<std::uint32_t> chain_deps;
  std::int64_t key = 0;  // measured time, to order items
};

OpClass op_class(Category c) {
  switch (c) {
    case Category::kGemm:
      return OpClass::kGemm;
    case Category::kAttention:
      return OpClass::kAttention;
    case Category::kNorm:
      return OpClass::kNorm;
    case Category::kOptimizer:
      return OpClass::kOptimizer;
    case Category::kMemcpy:
    case Category::kMemset:
      return OpClass::kCopy;
    default:
      return OpClass::kElementwise;
  }
}

CollType coll_type(CommType c) {
  switch (c) {
    case CommType::kAllReduce:
    case CommType::kReduce:
      return CollType::kAllReduce;
    case CommType::kAllGather:
      return CollType::kAllGather;
    case CommType::kReduceScatter:
      return CollType::kReduceScatter;
    case CommType::kBroadcast:
      return CollType::kBroadcast;
    default:
      return CollType::kAllToAll;  // send/recv and unknown: an exchange
  }
}

class Builder {
 public:
  Builder(const KinetoTrace& t, const Iteration& it) : t_(t), it_(it) {}

  ReplayGraph build() {
    ReplayGraph out;
    out.measured_ns = it_.span_ns();
    host_name_ = g_.intern("host: CPU time between CUDA calls");
    sync_name_ = g_.intern("host: synchronize");
    carry_name_ = g_.intern("previous iteration's work on this stream");
    release_name_ = g_.intern("release of an activity without a launch record");
    assign_streams();
    add_activities();
    add_carry_over();
    add_host_threads();
    infer_waits();
    emit();
    out.graph = std::move(g_);
    out.stats = stats_;
    return out;
  }

 private:
  std::uint32_t add_item(Item item) {
    items_.push_back(std::move(item));
    return static_cast<std::uint32_t>(items_.size() - 1);
  }

  // Nanoseconds to the graph's picoseconds. The reader bounds each event's duration, but a
  // host gap spans two timestamps, which a corrupt trace can put centuries apart.
  base::SimTime to_ps(std::int64_t ns) const {
    if (ns > kMaxDurationNs) {
      throw base::InputError(
          base::SourceLoc{t_.path},
          fmt::format("the replayed iteration has a gap of {} between two events; replay "
                      "handles up to {}",
                      base::format_seconds(static_cast<double>(ns) * 1e-9),
                      base::format_seconds(static_cast<double>(kMaxDurationNs) * 1e-9)),
          "the trace's timestamps are inconsistent");
    }
    return std::max<std::int64_t>(0, ns) * 1000;
  }

  Item host_item(std::uint32_t name, std::int64_t dur_ns, std::int64_t key) const {
    Item h;
    h.node.kind = NodeKind::kCompute;
    h.node.stream = kHostStream;  // unordered: host chains order themselves by deps
    h.node.fixed_duration = to_ps(dur_ns);
    h.node.name = name;
    h.key = key;
    return h;
  }

  void assign_streams() {
    std::map<std::int64_t, std::pair<bool, std::size_t>> streams;  // nccl?, count
    for (std::uint32_t i : it_.activities) {
      auto& s = streams[t_.gpu[i].stream];
      s.first = s.first || t_.gpu[i].category == Category::kComm;
      ++s.second;
    }
    std::vector<std::pair<std::size_t, std::int64_t>> compute;
    std::vector<std::pair<std::size_t, std::int64_t>> comm;
    for (const auto& [id, s] : streams) {
      (s.first ? comm : compute).emplace_back(s.second, id);
    }
    auto by_count = [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    };
    std::sort(compute.begin(), compute.end(), by_count);
    std::sort(comm.begin(), comm.end(), by_count);
    for (std::size_t i = 0; i < compute.size(); ++i) {
      stream_of_[compute[i].second] =
          i == 0 ? Stream::kCompute : (i == 1 ? Stream::kTP : Stream::kPPSendFwd);
    }
    for (std::size_t i = 0; i < comm.size(); ++i) {
      stream_of_[comm[i].second] = i == 0 ? Stream::kDP : Stream::kPPSendBwd;
    }
    stats_.cuda_streams = streams.size();
  }

  void add_activities() {
    g_.groups.push_back(Group{GroupKind::kDP, {0}});
    std::unordered_map<std::int64_t, std::uint32_t> last_on_stream;
    item_of_.reserve(it_.activities.size());
    for (std::uint32_t i : it_.activities) {
      const GpuActivity& a = t_.gpu[i];
      Item item;
      Node& n = item.node;
      n.fixed_duration = to_ps(a.dur_ns);
      n.name = g_.intern(t_.name_of(a));
      n.stream = stream_of_.at(a.stream);
      n.op = op_class(a.category);
      if (a.category == Category::kComm) {
        const CommArgs& c = t_.comms[static_cast<std::size_t>(a.comm)];
        n.kind = NodeKind::kCollective;
        n.coll = coll_type(c.type);
        n.group = 0;
        n.bytes = static_cast<double>(std::max<std::int64_t>(0, c.bytes()));
        ++stats_.collectives;
      } else {
        n.bytes = static_cast<double>(std::max<std::int64_t>(0, a.bytes));
      }
      item.key = a.ts_ns;
      if (auto p = last_on_stream.find(a.stream); p != last_on_stream.end()) {
        item.deps.push_back(p->second);
        item.chain_deps.push_back(p->second);
        pred_[i] = act_of_item_[p->second];
      }
      std::uint32_t id = add_item(std::move(item));
      item_of_[i] = id;
      act_of_item_[id] = i;
      last_on_stream[a.stream] = id;
      if (first_on_stream_.count(a.stream) == 0) {
        first_on_stream_[a.stream] = i;
      }
    }
    stats_.gpu_nodes = it_.activities.size();
  }

  void add_carry_over() {
    std::unordered_map<std::int64_t, std::int64_t> busy_until;
    for (std::size_t i = 0; i < t_.gpu.size(); ++i) {
      const GpuActivity& a = t_.gpu[i];
      auto f = first_on_stream_.find(a.stream);
      if (f == first_on_stream_.end() || item_of_.count(static_cast<std::uint32_t>(i)) != 0) {
        continue;
      }
      if (a.ts_ns < t_.gpu[f->second].ts_ns && a.end_ns() > it_.begin_ns) {
        auto& b = busy_until[a.stream];
        b = std::max(b, a.end_ns());
      }
    }
    for (const auto& [stream, until] : busy_until) {
      std::uint32_t first = first_on_stream_.at(stream);
      std::uint32_t c = add_item(host_item(carry_name_, until - it_.begin_ns, until));
      items_[item_of_.at(first)].deps.push_back(c);
      carry_end_[stream] = until;
      ++stats_.carried_streams;
    }
  }

  void add_host_threads() {
    std::unordered_map<std::int64_t, std::uint32_t> launch_of;  // correlation -> activity
    for (std::uint32_t i : it_.activities) {
      if (t_.gpu[i].correlation >= 0) {
        launch_of.emplace(t_.gpu[i].correlation, i);
      }
    }
    std::map<std::int64_t, std::vector<std::uint32_t>> threads;
    std::int64_t window_end = std::max(it_.window_end_ns, it_.end_ns);
    for (std::size_t r = 0; r < t_.runtime.size(); ++r) {
      const RuntimeCall& c = t_.runtime[r];
      if (c.ts_ns >= it_.begin_ns && c.ts_ns < window_end) {
        threads[c.tid].push_back(static_cast<std::uint32_t>(r));
      }
    }
    // An activity's launch: the latest call with its correlation id that started no later
    // than the activity did (a trace may repeat an id; a call after the activity started
    // cannot have launched it).
    std::unordered_map<std::uint32_t, std::uint32_t> launch_call;  // activity -> runtime call
    for (const auto& [tid, calls] : threads) {
      for (std::uint32_t r : calls) {
        const RuntimeCall& c = t_.runtime[r];
        auto l = launch_of.find(c.correlation);
        if (l == launch_of.end() || c.ts_ns > t_.gpu[l->second].ts_ns) {
          continue;
        }
        auto [at, inserted] = launch_time_.try_emplace(l->second, c.ts_ns);
        if (inserted || c.ts_ns > at->second) {
          at->second = c.ts_ns;
          launch_call[l->second] = r;
        }
      }
    }
    // Activities by end time, to find what a synchronize waited for.
    by_end_ = it_.activities;
    std::sort(by_end_.begin(), by_end_.end(), [this](std::uint32_t a, std::uint32_t b) {
      return t_.gpu[a].end_ns() < t_.gpu[b].end_ns();
    });
    for (auto& [tid, calls] : threads) {
      std::sort(calls.begin(), calls.end(), [this](std::uint32_t a, std::uint32_t b) {
        return t_.runtime[a].ts_ns < t_.runtime[b].ts_ns;
      });
      std::int64_t prev_time = it_.begin_ns;
      std::int64_t prev = -1;
      bool used = false;
      auto gap_to = [&](std::int64_t when) {
        Item h = host_item(host_name_, when - prev_time, when);
        if (prev >= 0) {
          h.deps.push_back(static_cast<std::uint32_t>(prev));
          h.chain_deps.push_back(static_cast<std::uint32_t>(prev));
        }
        prev = add_item(std::move(h));
        prev_time = std::max(prev_time, when);
      };
      // The host waits in `c` for activity `waited`, then spends the rest of the call: on the
      // measured hardware it leaves the call when it did; on faster hardware, earlier.
      auto wait_in = [&](const RuntimeCall& c, std::int64_t waited) {
        const GpuActivity& w = t_.gpu[static_cast<std::size_t>(waited)];
        Item s = host_item(sync_name_, c.end_ns() - std::max(c.ts_ns, w.end_ns()),
                           std::max(c.end_ns(), w.end_ns()));
        s.deps = {static_cast<std::uint32_t>(prev),
                  item_of_.at(static_cast<std::uint32_t>(waited))};
        s.chain_deps = {static_cast<std::uint32_t>(prev)};
        prev = add_item(std::move(s));
        prev_time = std::max(prev_time, c.end_ns());
        ++stats_.sync_waits;
      };
      for (std::uint32_t r : calls) {
        const RuntimeCall& c = t_.runtime[r];
        if (auto l = launch_of.find(c.correlation); l != launch_of.end() &&
                                                    launch_call.count(l->second) != 0 &&
                                                    launch_call.at(l->second) == r) {
          gap_to(c.ts_ns);
          items_[item_of_.at(l->second)].deps.push_back(static_cast<std::uint32_t>(prev));
          ++stats_.launches;
          used = true;
          // A launch that blocked: a copy to pageable memory returns when the copy (and so
          // the stream's work before it) is done; a kernel launch into a full queue returns
          // when an earlier kernel frees a slot.
          if (c.dur_ns > kBlockedCallNs) {
            if (std::int64_t waited = waited_activity(c, true); waited >= 0) {
              wait_in(c, waited);
              ++stats_.blocking_launches;
            }
          }
        } else if (t_.names[c.name].find("Synchronize") != std::string::npos) {
          std::int64_t waited = waited_activity(c, false);
          if (waited < 0) {
            continue;
          }
          gap_to(c.ts_ns);
          wait_in(c, waited);
          used = true;
        }
      }
      if (used) {
        ++stats_.host_threads;
        if (prev_time < it_.end_ns) {
          gap_to(it_.end_ns);
        }
      }
    }
    // Activities nobody launched in this window: released at their measured start.
    for (std::uint32_t i : it_.activities) {
      if (launch_time_.count(i) == 0) {
        std::uint32_t rel =
            add_item(host_item(release_name_, t_.gpu[i].ts_ns - it_.begin_ns, t_.gpu[i].ts_ns));
        items_[item_of_.at(i)].deps.push_back(rel);
        ++stats_.unlaunched;
      }
    }
  }

  // The activity launched before `c` (or by it, when `own`) whose end falls inside the call
  // (the latest such), or -1.
  std::int64_t waited_activity(const RuntimeCall& c, bool own) const {
    auto hi = std::upper_bound(
        by_end_.begin(), by_end_.end(), c.end_ns() + kEndToleranceNs,
        [this](std::int64_t v, std::uint32_t a) { return v < t_.gpu[a].end_ns(); });
    while (hi != by_end_.begin()) {
      --hi;
      const GpuActivity& a = t_.gpu[*hi];
      if (a.end_ns() < c.ts_ns) {
        break;
      }
      auto l = launch_time_.find(*hi);
      if (l != launch_time_.end() && (l->second < c.ts_ns || (own && l->second == c.ts_ns))) {
        return *hi;
      }
    }
    return -1;
  }

  void infer_waits() {
    for (std::uint32_t i : it_.activities) {
      const GpuActivity& a = t_.gpu[i];
      auto l = launch_time_.find(i);
      if (l == launch_time_.end()) {
        continue;  // pinned at its measured start
      }
      std::int64_t ready = l->second;
      if (auto p = pred_.find(i); p != pred_.end()) {
        ready = std::max(ready, t_.gpu[p->second].end_ns());
      } else if (auto c = carry_end_.find(a.stream); c != carry_end_.end()) {
        ready = std::max(ready, c->second);
      }
      if (a.ts_ns - ready <= kWaitSlackNs) {
        continue;
      }
      auto hi = std::upper_bound(
          by_end_.begin(), by_end_.end(), a.ts_ns + kEndToleranceNs,
          [this](std::int64_t v, std::uint32_t x) { return v < t_.gpu[x].end_ns(); });
      while (hi != by_end_.begin()) {
        --hi;
        const GpuActivity& w = t_.gpu[*hi];
        if (w.end_ns() <= ready || a.ts_ns - w.end_ns() > kWaitWindowNs) {
          break;
        }
        if (w.stream != a.stream && w.ts_ns < a.ts_ns) {
          items_[item_of_.at(i)].deps.push_back(item_of_.at(*hi));
          ++stats_.inferred_waits;
          break;
        }
      }
    }
  }

  // Kahn's algorithm, taking ready items in measured-time order.
  void emit() {
    std::vector<std::uint32_t> pending(items_.size(), 0);
    std::vector<std::vector<std::uint32_t>> out(items_.size());
    for (std::uint32_t i = 0; i < items_.size(); ++i) {
      auto& d = items_[i].deps;
      std::sort(d.begin(), d.end());
      d.erase(std::unique(d.begin(), d.end()), d.end());
      pending[i] = static_cast<std::uint32_t>(d.size());
      for (std::uint32_t p : d) {
        out[p].push_back(i);
      }
    }
    std::vector<bool> done(items_.size(), false);
    using Entry = std::pair<std::int64_t, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (std::uint32_t i = 0; i < items_.size(); ++i) {
      if (pending[i] == 0) {
        ready.emplace(items_[i].key, i);
      }
    }
    RankGraph rg;
    std::vector<NodeId> node_of(items_.size(), 0);
    std::vector<NodeId> deps;
    for (;;) {
      if (ready.empty()) {
        if (rg.size() == items_.size()) {
          break;
        }
        // Every item left waits: the timestamps contradict each other (a cycle).
        std::uint32_t i = break_cycle(done, pending, out);
        ready.emplace(items_[i].key, i);
      }
      std::uint32_t i = ready.top().second;
      ready.pop();
      done[i] = true;
      deps.clear();
      for (std::uint32_t p : items_[i].deps) {
        deps.push_back(node_of[p]);
      }
      node_of[i] = rg.add(items_[i].node, deps);
      for (std::uint32_t s : out[i]) {
        if (--pending[s] == 0) {
          ready.emplace(items_[s].key, s);
        }
      }
    }
    g_.num_ranks = 1;
    g_.classes.push_back(std::move(rg));
    g_.class_of_rank = {0};
    g_.class_rep = {0};
  }

  // Drops the timestamp-derived deps on items not yet emitted of the earliest waiting item
  // that has any, until it waits for nothing; returns it. Chains alone are acyclic, so one
  // such item always exists while items wait.
  std::uint32_t break_cycle(const std::vector<bool>& done, std::vector<std::uint32_t>& pending,
                            std::vector<std::vector<std::uint32_t>>& out) {
    std::optional<std::uint32_t> best;
    for (std::uint32_t i = 0; i < items_.size(); ++i) {
      if (done[i] || pending[i] == 0) {
        continue;
      }
      const Item& it = items_[i];
      bool chained = std::any_of(it.chain_deps.begin(), it.chain_deps.end(),
                                 [&](std::uint32_t p) { return !done[p]; });
      if (!chained && (!best || it.key < items_[*best].key)) {
        best = i;
      }
    }
    if (!best) {
      throw base::InternalError("kineto replay: a cycle along a stream or host thread");
    }
    Item& it = items_[*best];
    auto dropped = std::stable_partition(it.deps.begin(), it.deps.end(),
                                         [&](std::uint32_t p) { return done[p]; });
    for (auto d = dropped; d != it.deps.end(); ++d) {
      auto& o = out[*d];
      o.erase(std::find(o.begin(), o.end(), *best));
      ++stats_.dropped_deps;
    }
    it.deps.erase(dropped, it.deps.end());
    pending[*best] = 0;
    return *best;
  }

  const KinetoTrace& t_;
  const Iteration& it_;
  ExecGraph g_;
  std::vector<Item> items_;
  ReplayStats stats_;
  std::unordered_map<std::int64_t, Stream> stream_of_;
  std::unordered_map<std::uint32_t, std::uint32_t> item_of_;      // activity -> item
  std::unordered_map<std::uint32_t, std::uint32_t> act_of_item_;  // item -> activity
  std::unordered_map<std::uint32_t, std::uint32_t> pred_;         // activity -> stream predecessor
  std::unordered_map<std::int64_t, std::uint32_t> first_on_stream_;
  std::unordered_map<std::int64_t, std::int64_t> carry_end_;
  std::unordered_map<std::uint32_t, std::int64_t> launch_time_;
  std::vector<std::uint32_t> by_end_;
  std::uint32_t host_name_ = 0, sync_name_ = 0, carry_name_ = 0, release_name_ = 0;
};

}  // namespace

ReplayGraph build_replay(const KinetoTrace& t, const IterationSet& set, std::size_t iteration) {
  if (iteration >= set.iterations.size()) {
    throw base::InputError(base::SourceLoc{t.path},
                           fmt::format("there is no iteration {} (the trace has {})", iteration,
                                       set.iterations.size()));
  }
  const Iteration& it = set.iterations[iteration];
  if (it.activities.empty()) {
    throw base::InputError(base::SourceLoc{t.path},
                           fmt::format("iteration {} has no GPU activity to replay", iteration));
  }
  return Builder(t, it).build();
}

}  // namespace tessera::measured
