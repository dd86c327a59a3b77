// SPDX-License-Identifier: Apache-2.0
#include "synth/parallel/encoder_programs.h"

#include "base/error.h"
#include "synth/models/vision_encoder.h"

namespace tessera::synth::parallel {

namespace {

EncoderProgram lower_group(const Scenario& s, const models::ImageGroup& g, bool backward) {
  models::EncoderBlocks b = models::build_encoder_blocks(s, g.images, g.patches, backward);
  return {lower(b.patch, Recompute::kNone), lower(b.layer, Recompute::kNone),
          lower(b.projector, Recompute::kNone)};
}

double flops_of(const EncoderProgram& p, std::int64_t layers, bool forward_only) {
  auto f = [&](const BlockProgram& b) {
    if (!forward_only) {
      return b.model_flops;
    }
    double sum = 0.0;
    for (std::int32_t i = 0; i < b.n_fwd; ++i) {
      sum += b.ops[static_cast<std::size_t>(i)].model_flops;
    }
    return sum;
  };
  return f(p.patch) + static_cast<double>(layers) * f(p.layer) + f(p.projector);
}

}  // namespace

EncoderPrograms::EncoderPrograms(const Scenario& s, const Scenario* lowering)
    : mix_(models::sample_images(s)), layers_(s.encoder.layers), merge_(s.encoder.merge) {
  const Scenario& low = lowering != nullptr ? *lowering : s;
  for (const auto& mb : mix_) {
    for (const auto& g : mb.groups) {
      auto key = std::pair{g.images, g.patches};
      if (!forward_.contains(key)) {
        forward_.emplace(key, lower_group(low, g, false));
        if (s.encoder.trainable) {
          trained_.emplace(key, lower_group(low, g, true));
        }
      }
    }
  }
  params_ = models::encoder_parameters(low);
  double sp = low.parallel.sp ? static_cast<double>(low.parallel.tp) : 1.0;
  double dtype = base::dtype_bytes(s.training.precision);
  pixel_bytes_ = static_cast<double>(s.encoder.patch_pixels) * dtype / sp;
  feature_bytes_ = static_cast<double>(s.model.hidden) * dtype / sp;
  if (forward_.empty()) {  // a mix without images: no encoder work, but names to intern
    models::ImageGroup g{1, s.encoder.merge * (s.parallel.sp ? s.parallel.tp : 1)};
    forward_.emplace(std::pair{g.images, g.patches}, lower_group(low, g, false));
    if (s.encoder.trainable) {
      trained_.emplace(std::pair{g.images, g.patches}, lower_group(low, g, true));
    }
  }
}

const EncoderProgram& EncoderPrograms::get(const models::ImageGroup& g, bool backward) const {
  const auto& table = backward ? trained_ : forward_;
  auto it = table.find({g.images, g.patches});
  if (it == table.end()) {
    throw base::InternalError("no encoder program for this image group");
  }
  return it->second;
}

const EncoderProgram& EncoderPrograms::representative() const {
  return trained_.empty() ? forward_.begin()->second : trained_.begin()->second;
}

std::int64_t EncoderPrograms::input_bytes(std::int32_t mb) const {
  return static_cast<std::int64_t>(
      pixel_bytes_ * static_cast<double>(mix_[static_cast<std::size_t>(mb)].patches()));
}

std::int64_t EncoderPrograms::feature_bytes(std::int32_t mb) const {
  return static_cast<std::int64_t>(
      feature_bytes_ * static_cast<double>(mix_[static_cast<std::size_t>(mb)].patches() / merge_));
}

std::int64_t EncoderPrograms::boundary_bytes(std::int32_t mb, std::size_t k) const {
  auto layers = static_cast<std::size_t>(layers_);
  if (k >= layers + 2) {
    return feature_bytes(mb);
  }
  std::int64_t sum = 0;
  for (const auto& g : mix_[static_cast<std::size_t>(mb)].groups) {
    sum += get(g, false).block(k - 1, layers).out_bytes;
  }
  return sum;
}

double EncoderPrograms::model_flops(std::int32_t mb) const {
  double sum = 0.0;
  for (const auto& g : mix_[static_cast<std::size_t>(mb)].groups) {
    sum += trained_.empty() ? flops_of(get(g, false), layers_, false)
                            : flops_of(get(g, true), layers_, false);
  }
  return sum;
}

double EncoderPrograms::forward_flops(std::int32_t mb) const {
  double sum = 0.0;
  for (const auto& g : mix_[static_cast<std::size_t>(mb)].groups) {
    sum += flops_of(get(g, false), layers_, true);
  }
  return sum;
}

}  // namespace tessera::synth::parallel
