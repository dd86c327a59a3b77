// SPDX-License-Identifier: Apache-2.0
#include "sim/report/config_fields.h"

namespace tessera::sim::report {

std::vector<ConfigField> config_fields(const RunLabel& label, const graph::StepConfig& c) {
  return {
      {"tp", c.tp},
      {"pp", c.pp},
      {"dp", c.dp},
      {"sp", c.sp},
      {"micro_batch", c.micro_batch},
      {"global_batch", c.global_batch},
      {"seq_len", c.seq_len},
      {"recompute", c.recompute},
      {"attention", c.attention},
      {"schedule", label.schedule},
      {"devices", label.devices},
      {"hardware", label.hardware},
      {"topology", label.topology},
  };
}

std::string csv_cell(const nlohmann::json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_boolean()) {
    return value.get<bool>() ? "1" : "0";
  }
  return value.dump();
}

}  // namespace tessera::sim::report
