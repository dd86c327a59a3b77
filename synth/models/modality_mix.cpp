// SPDX-License-Identifier: Apache-2.0
#include "synth/models/modality_mix.h"

#include <map>

namespace tessera::synth::models {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a fixed generator, so a seed means the same mix
// everywhere (the standard library's distributions are implementation-defined).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [r.lo, r.hi], without modulo bias.
  std::int64_t uniform(const IntRange& r) {
    auto span = static_cast<std::uint64_t>(r.hi - r.lo) + 1;
    std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    std::uint64_t x = next();
    while (x >= limit) {
      x = next();
    }
    return r.lo + static_cast<std::int64_t>(x % span);
  }

 private:
  std::uint64_t state_;
};

}  // namespace

std::int64_t MicrobatchImages::images() const {
  std::int64_t n = 0;
  for (const auto& g : groups) {
    n += g.images;
  }
  return n;
}

std::int64_t MicrobatchImages::patches() const {
  std::int64_t n = 0;
  for (const auto& g : groups) {
    n += g.images * g.patches;
  }
  return n;
}

std::vector<MicrobatchImages> sample_images(const Scenario& s) {
  const DataConfig& d = s.data;
  const std::int64_t quantum = s.encoder.merge * (s.parallel.sp ? s.parallel.tp : 1);
  auto round_up = [&](std::int64_t p) { return (p + quantum - 1) / quantum * quantum; };
  Rng rng(d.seed);
  std::size_t next_sample = 0;
  std::vector<MicrobatchImages> out;
  for (std::int64_t mb = 0; mb < s.microbatches(); ++mb) {
    std::map<std::int64_t, std::int64_t> by_size;  // patches -> images
    for (std::int64_t i = 0; i < s.training.micro_batch; ++i) {
      if (!d.samples.empty()) {
        const auto& [images, patches] = d.samples[next_sample++ % d.samples.size()];
        if (images > 0) {
          by_size[round_up(patches)] += images;
        }
        continue;
      }
      std::int64_t images = rng.uniform(d.images_per_sample);
      for (std::int64_t k = 0; k < images; ++k) {
        ++by_size[round_up(rng.uniform(d.tokens_per_image))];
      }
    }
    MicrobatchImages m;
    for (const auto& [patches, images] : by_size) {
      m.groups.push_back({images, patches});
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace tessera::synth::models
