// SPDX-License-Identifier: Apache-2.0
// `tessera replay --measured FILE`: rebuilds one measured iteration of a PyTorch profiler
// (Kineto) trace as an execution graph, simulates it, and prints the replayed against the
// measured iteration time (experiments::replay_iteration).
#include "experiments/replay.h"

#include <fmt/format.h>

#include "base/units.h"
#include "cli/commands.h"
#include "cli/output_paths.h"
#include "experiments/pipeline.h"
#include "measured/iterations.h"
#include "measured/kineto_reader.h"

namespace tessera::cli {

namespace kineto = measured;
using experiments::ReplayResult;

namespace {

void print_moved(const ReplayResult& r) {
  const measured::RetimeFactors& f = *r.moved;
  auto link = [](bool up) { return up ? "scale-up" : "scale-out"; };
  fmt::print(
      "    moved from {} to {}: {} GEMM kernels x{:.3f}, {} attention x{:.3f}, {} memory-bound "
      "x{:.3f}, {} NCCL x{:.3f} ({} to {}); {} host-device copies and host time as "
      "measured\n",
      r.measured_on, r.hardware, f.gemm_nodes, f.gemm, f.attention_nodes, f.attention,
      f.memory_nodes, f.memory, f.comm_nodes, f.comm, link(f.comm_scale_up_from),
      link(f.comm_scale_up_to), f.host_copy_nodes);
}

}  // namespace

namespace {

// The iterations to replay: all, the one asked for, or the second (the first is often a
// warm-up) when there are two or more.
std::vector<std::size_t> iterations_to_replay(const ReplayArgs& a,
                                              const kineto::IterationSet& set) {
  std::vector<std::size_t> which;
  if (a.all) {
    for (std::size_t i = 0; i < set.iterations.size(); ++i) {
      which.push_back(i);
    }
  } else if (a.iteration >= 0) {
    which.push_back(static_cast<std::size_t>(a.iteration));
  } else {
    which.push_back(set.iterations.size() >= 2 ? 1 : 0);
  }
  return which;
}

void print_times(const ReplayResult& r, std::size_t i, std::int64_t step) {
  if (r.moved) {
    fmt::print(
        "  iteration {} (ProfilerStep#{}): measured {} on {}, predicted {} on {} ({:.2f}x)\n", i,
        step, base::format_seconds(r.measured_s), r.measured_on, base::format_seconds(r.replayed_s),
        r.hardware, r.measured_s / r.replayed_s);
    print_moved(r);
    return;
  }
  double err = (r.replayed_s - r.measured_s) / r.measured_s * 100.0;
  double gpu_err = (r.replayed_gpu_end_s - r.measured_gpu_end_s) / r.measured_gpu_end_s * 100.0;
  fmt::print(
      "  iteration {} (ProfilerStep#{}): measured {}, replayed {}  ({:+.2f} %); GPU work ends "
      "at {} measured, {} replayed ({:+.2f} %)\n",
      i, step, base::format_seconds(r.measured_s), base::format_seconds(r.replayed_s), err,
      base::format_seconds(r.measured_gpu_end_s), base::format_seconds(r.replayed_gpu_end_s),
      gpu_err);
}

void print_graph_stats(const ReplayResult& r) {
  const auto& s = r.stats;
  fmt::print(
      "    {} GPU nodes ({} NCCL collectives at measured durations) on {} CUDA streams; "
      "{} host threads, {} launches, {} synchronize waits, {} inferred cross-stream waits, "
      "{} streams busy from the previous iteration, {} activities without a launch record\n",
      s.gpu_nodes, s.collectives, s.cuda_streams, s.host_threads, s.launches, s.sync_waits,
      s.inferred_waits, s.carried_streams, s.unlaunched);
  if (s.dropped_deps > 0) {
    fmt::print(
        "    {} timing-inferred dependencies dropped: the trace's timestamps contradict each "
        "other (they formed a cycle)\n",
        s.dropped_deps);
  }
}

void write_replay_reports(const ReplayArgs& a, ReplayResult& r, const std::string& suffix) {
  experiments::Outcome o;
  o.label.scenario = a.measured;
  o.label.model = "Kineto trace replay";
  o.label.hardware = r.hardware;
  o.label.topology = a.topology;
  o.label.parallelism = "1 rank (measured)";
  o.label.schedule = "as recorded";
  o.label.devices = 1;
  o.metrics = sim::report::compute_metrics(r.graph, r.run, 1);
  o.stats = std::move(r.run);
  o.graph = std::move(r.graph);
  experiments::write_reports(a.out, o, suffix);
}

}  // namespace

int replay(const ReplayArgs& a) {
  check_input_file("measured trace", a.measured);
  check_profile_arg("--hardware", a.hardware);
  check_profile_arg("--measured-on", a.measured_on);
  if (!a.out.empty()) {
    prepare_output_dir("--out", a.out);
  }
  kineto::KinetoTrace t = kineto::read_kineto(a.measured);
  kineto::IterationSet set = kineto::find_iterations(t);
  const std::vector<std::size_t> which = iterations_to_replay(a, set);
  fmt::print("{}: {} GPU activities, {}; rank {} of {}{}\n", a.measured, t.gpu.size(), set.note,
             t.dist.rank, t.dist.world_size,
             t.device_name.empty() ? "" : fmt::format(" ({})", t.device_name));
  for (std::size_t i : which) {
    // With --all an idle iteration (e.g. a profiler step around a checkpoint) is a line, not
    // the end of the replay; asked for by number, build_replay reports it as bad input.
    if (a.all && set.iterations[i].activities.empty()) {
      fmt::print("  iteration {} (ProfilerStep#{}): no GPU activity, nothing to replay\n", i,
                 set.iterations[i].step);
      continue;
    }
    ReplayResult r =
        experiments::replay_iteration(t, set, i, a.hardware, a.measured_on, a.topology);
    print_times(r, i, set.iterations.at(i).step);
    print_graph_stats(r);
    if (!a.out.empty()) {
      write_replay_reports(a, r, which.size() > 1 ? fmt::format("_{}", i) : "");
    }
  }
  if (t.dist.world_size > 1) {
    fmt::print(
        "  the other {} ranks are not in the file: NCCL kernels keep their measured durations, "
        "which include waiting for them\n",
        t.dist.world_size - 1);
  }
  return 0;
}

}  // namespace tessera::cli
