// SPDX-License-Identifier: Apache-2.0
// An input iterator over a ByteSource's chunks, so that nlohmann::json's SAX parser reads a
// trace of any size through a fixed buffer (its iterator input adapter needs only *, ++ and
// !=). Copies share one position, as an input iterator's do.
#pragma once

#include <cstddef>
#include <iterator>

#include "synth/graph/kineto/byte_source.h"

namespace tessera::graph::kineto {

class ChunkIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  struct State {
    ByteSource* source = nullptr;
    const char* pos = nullptr;
    const char* end = nullptr;
    bool eof = false;
    void refill() {
      auto [data, size] = source->next();
      pos = data;
      end = data + size;
      eof = size == 0;
    }
  };

  ChunkIterator() = default;  // the end sentinel
  explicit ChunkIterator(State* state) : state_(state) {
    if (state_->pos == state_->end && !state_->eof) {
      state_->refill();
    }
  }

  reference operator*() const { return *state_->pos; }
  ChunkIterator& operator++() {
    if (++state_->pos == state_->end) {
      state_->refill();
    }
    return *this;
  }
  // Only comparisons with the end sentinel are meaningful.
  friend bool operator==(const ChunkIterator& a, const ChunkIterator& b) {
    return a.at_end() == b.at_end();
  }
  friend bool operator!=(const ChunkIterator& a, const ChunkIterator& b) { return !(a == b); }

 private:
  [[nodiscard]] bool at_end() const { return state_ == nullptr || state_->eof; }
  State* state_ = nullptr;
};

}  // namespace tessera::graph::kineto
