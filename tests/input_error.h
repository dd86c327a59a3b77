// SPDX-License-Identifier: Apache-2.0
// Test helper: the message of the base::InputError a call throws.
#pragma once

#include <functional>
#include <string>

#include "base/error.h"

namespace tessera::testing {

// e.what() of the base::InputError `f` throws, or "<no error>" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const base::InputError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace tessera::testing
