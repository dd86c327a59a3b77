// SPDX-License-Identifier: Apache-2.0
// Helpers shared by validate.cpp and validate_encoder.cpp. Internal to synth/scenario.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "synth/scenario/validate.h"

namespace tessera::synth::detail {

using Violations = std::vector<Violation>;

// "dname=d does not divide nname=n" at `key` unless d divides n.
void check_divides(Violations& out, std::string_view key, std::int64_t d, std::string_view dname,
                   std::int64_t n, std::string_view nname);

// Context parallelism against the sequence, the heads and the attention (validate_cp.cpp).
void check_context_parallel(const Scenario& s, Violations& out);

// ZeRO stages and HSDP against the data-parallel size (validate_zero.cpp).
void check_sharded_data_parallel(const Scenario& s, Violations& out);

// FP8 training against the hardware profile (validate_fp8.cpp).
void check_fp8(const Scenario& s, Violations& out);

// Mixture-of-experts layers against the model and the parallelism (validate_moe.cpp).
void check_moe(const Scenario& s, Violations& out);
// DeepSeek's latent attention against the model and the attention kernel (validate_moe.cpp).
void check_mla(const Scenario& s, Violations& out);

// parallelism.pipeline_layout against the pipeline and the model (validate_layout.cpp).
void check_layout(const Scenario& s, Violations& out);

// The encoder region and the data mix against the model, the parallelism and the schedule.
void check_encoder(const Scenario& s, Violations& out);

}  // namespace tessera::synth::detail
