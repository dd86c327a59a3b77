// SPDX-License-Identifier: Apache-2.0
// The search axes and their default values: what Megatron-LM, NeMo and TorchTitan users choose
// from for a model on a number of devices (docs/search.md §2).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "base/error.h"
#include "experiments/search/space.h"
#include "synth/schedule/schedule_spec.h"
#include "topology/cluster.h"

namespace tessera::experiments::search {

namespace {

using synth::Scenario;

std::int64_t read_int(const std::string& v, std::int64_t lo, std::int64_t hi) {
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc{} || end != v.data() + v.size() || x < lo || x > hi) {
    throw base::InputError(hi == INT64_MAX ? fmt::format("expected an integer >= {}", lo)
                                           : fmt::format("expected an integer {}..{}", lo, hi));
  }
  return x;
}

template <std::size_t N>
std::size_t read_choice(const std::string& v, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == v) {
      return i;
    }
  }
  std::string list;
  for (std::string_view n : names) {
    list += (list.empty() ? "" : ", ") + std::string(n);
  }
  throw base::InputError(fmt::format("expected one of {}", list));
}

std::vector<std::string> as_strings(const std::vector<std::int64_t>& xs) {
  std::vector<std::string> out;
  for (std::int64_t x : xs) {
    out.push_back(std::to_string(x));
  }
  return out;
}

bool power_of_two(std::int64_t x) {
  return x > 0 && (x & (x - 1)) == 0;
}

std::int64_t node_size(const Scenario& s) {
  if (s.cluster.profile) {
    return topology::node_devices(s.cluster.topology, *s.cluster.profile);
  }
  const int per_node = s.cluster.topology.devices_per_node;
  return per_node > 0 ? per_node : 8;
}

// Tensor parallelism stays inside a node: powers of two up to the node's devices. With
// experts, expert parallelism scales the model and TP only splits the layers a token always
// runs: up to 4, as in every MoE recipe of NVIDIA's Megatron Bridge guide (DeepSeek-V3 TP2,
// Qwen3-235B-A22B TP4; docs/search.md §2).
std::vector<std::string> tp_defaults(const Scenario& s, std::int64_t devices) {
  std::vector<std::int64_t> out;
  const std::int64_t most =
      s.model.moe.on() ? std::min<std::int64_t>(node_size(s), 4) : node_size(s);
  for (std::int64_t t = 1; t <= std::min<std::int64_t>(most, devices); t *= 2) {
    out.push_back(t);
  }
  return as_strings(out);
}

// Pipeline depths that divide the devices and either the layers (an even split) or are powers
// of two (an uneven split), with at least 3 layers a stage (Llama 3 405B: 126 layers over 16
// stages; DeepSeek-V3: 61 over 16).
std::vector<std::string> pp_defaults(const Scenario& s, std::int64_t devices) {
  std::vector<std::int64_t> out;
  const std::int64_t layers = s.model.layers;
  for (std::int64_t p = 1; p <= std::max<std::int64_t>(layers / 3, 1); ++p) {
    if (devices % p == 0 && (layers % p == 0 || power_of_two(p))) {
      out.push_back(p);
    }
  }
  return as_strings(out);
}

// Context parallelism while each rank keeps at least 2048 tokens of a sequence, up to 16.
std::vector<std::string> cp_defaults(const Scenario& s, std::int64_t /*devices*/) {
  std::vector<std::int64_t> out;
  for (std::int64_t c = 1; c <= 16 && s.training.seq_len / c >= 2048; c *= 2) {
    out.push_back(c);
  }
  return as_strings(out.empty() ? std::vector<std::int64_t>{1} : out);
}

// Expert parallelism over powers of two dividing the experts, up to 64, with at most 32 routed
// experts a rank (DeepSeek-V3: 256 experts over EP64; Qwen3-30B-A3B: 128 over EP8 to 32;
// Mixtral: 8 over EP1 to 8); dense models: 1.
std::vector<std::string> ep_defaults(const Scenario& s, std::int64_t devices) {
  const std::int64_t experts = s.model.moe.experts;
  std::vector<std::int64_t> out;
  for (std::int64_t e = 1;
       e <= std::min<std::int64_t>({std::max<std::int64_t>(experts, 1), 64, devices}); e *= 2) {
    if (experts == 0 ? e == 1 : experts % e == 0 && experts / e <= 32) {
      out.push_back(e);
    }
  }
  return as_strings(out.empty() ? std::vector<std::int64_t>{1} : out);
}

std::vector<std::string> schedule_defaults(const Scenario& s, std::int64_t /*devices*/) {
  if (s.encoder.present) {
    return {"scenario"};  // where the encoder runs is the scenario's choice
  }
  std::vector<std::string> out{"1f1b", "interleaved:2", "interleaved:4", "zb-h1"};
  if (s.model.moe.on()) {
    out.emplace_back("dualpipev");
  }
  return out;
}

// Selective recompute reruns the attention core, whose large intermediates flash attention
// never keeps: under flash it is the same run as none.
std::vector<std::string> recompute_defaults(const Scenario& s, std::int64_t /*devices*/) {
  if (synth::fused(s.training.attention)) {
    return {"none", "full"};
  }
  return {"none", "selective", "full"};
}

constexpr std::array<std::string_view, 2> kBool = {"false", "true"};
constexpr std::array<std::string_view, 3> kCpComm = {"p2p", "allgather", "a2a"};

void set_schedule(Scenario& s, const std::string& v) {
  if (v != "scenario") {
    s.schedule = synth::schedule::parse_schedule_spec(v);
  }
}

void set_order(Scenario& s, const std::string& v) {
  const auto orders = synth::mesh_orders();
  if (std::find(orders.begin(), orders.end(), v) == orders.end()) {
    throw base::InputError("expected a mesh order, innermost first, such as tp-cp-dp-pp");
  }
  s.parallel.order = synth::mesh_order(v);
}

auto fixed(std::vector<std::string> values) {
  return [values](const Scenario&, std::int64_t) { return values; };
}

std::vector<Axis> make_axes() {
  std::vector<Axis> a;
  auto int_axis = [&a](std::string name, std::string help, std::int64_t lo, std::int64_t hi,
                       std::int64_t& (*field)(Scenario&), auto defaults) {
    a.push_back(
        {std::move(name), std::move(help),
         [lo, hi, field](Scenario& s, const std::string& v) { field(s) = read_int(v, lo, hi); },
         defaults});
  };
  int_axis(
      "tp", "tensor-parallel size", 1, INT64_MAX,
      [](Scenario& s) -> std::int64_t& { return s.parallel.tp; }, tp_defaults);
  int_axis(
      "pp", "pipeline stages (an uneven split where they do not divide the layers)", 1, INT64_MAX,
      [](Scenario& s) -> std::int64_t& { return s.parallel.pp; }, pp_defaults);
  int_axis(
      "cp", "context-parallel size", 1, INT64_MAX,
      [](Scenario& s) -> std::int64_t& { return s.parallel.cp; }, cp_defaults);
  a.push_back({"cp_comm", "context-parallel attention: p2p, allgather or a2a",
               [](Scenario& s, const std::string& v) {
                 s.parallel.cp_comm = static_cast<synth::CpComm>(read_choice(v, kCpComm));
               },
               [](const Scenario& s, std::int64_t) {
                 return std::vector{
                     std::string(kCpComm[static_cast<std::size_t>(s.parallel.cp_comm_type())])};
               }});
  int_axis(
      "ep", "expert-parallel size (MoE)", 1, INT64_MAX,
      [](Scenario& s) -> std::int64_t& { return s.parallel.ep; }, ep_defaults);
  int_axis(
      "etp", "expert-tensor-parallel size (MoE)", 1, INT64_MAX,
      [](Scenario& s) -> std::int64_t& { return s.parallel.etp; }, fixed({"1"}));
  a.push_back({"zero", "ZeRO stage 0..3 (1: the distributed optimizer, 3: FSDP)",
               [](Scenario& s, const std::string& v) { s.parallel.zero = read_int(v, 0, 3); },
               fixed({"1", "3"})});
  int_axis(
      "micro_batch", "sequences per microbatch", 1, INT64_MAX,
      [](Scenario& s) -> std::int64_t& { return s.training.micro_batch; }, fixed({"1", "2", "4"}));
  a.push_back({"recompute", "activation recompute: none, selective, full or selective_op",
               [](Scenario& s, const std::string& v) {
                 s.training.recompute =
                     static_cast<synth::Recompute>(read_choice(v, synth::kRecomputeNames));
               },
               recompute_defaults});
  a.push_back(
      {"sp", "sequence parallelism, true or false (off where tp is 1, as in Megatron)",
       [](Scenario& s, const std::string& v) { s.parallel.sp = read_choice(v, kBool) == 1; },
       fixed({"true"})});
  a.push_back({"schedule",
               "a pipeline schedule spec (" + synth::schedule::schedule_spec_forms() +
                   "), or 'scenario' for the scenario's own",
               set_schedule, schedule_defaults});
  a.push_back({"order", "the mesh order, innermost first (tp-cp-dp-pp, tp-cp-pp-dp, ...)",
               set_order, [](const Scenario& s, std::int64_t) {
                 return std::vector{synth::mesh_order_name(s.parallel.order)};
               }});
  return a;
}

}  // namespace

const std::vector<Axis>& axes() {
  static const std::vector<Axis> kAxes = make_axes();
  return kAxes;
}

}  // namespace tessera::experiments::search
