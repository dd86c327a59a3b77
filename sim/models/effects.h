// SPDX-License-Identifier: Apache-2.0
// Modelled effects that can be switched off one by one, to see what each contributes to a
// prediction (the README's per-effect validation table; `tessera run --without NAME`). Each
// effect is owned by one model, which asks Effects::on() for its name; the names and what
// they model are listed once, in effects.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::models {

struct EffectInfo {
  std::string_view name;  // as spelled on the command line
  std::string_view what;  // one line: what the model does while the effect is on
};

// Every effect a model consults, in a fixed order.
std::span<const EffectInfo> known_effects();

// The set of disabled effects (all on by default).
class Effects {
 public:
  // Turns `name` off; base::InputError with the nearest known name when it is not one.
  void disable(std::string_view name);
  // Whether `name` is on; base::InternalError when no model registered that name (a typo in
  // the model's code, not in user input).
  [[nodiscard]] bool on(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& disabled() const { return off_; }

 private:
  std::vector<std::string> off_;  // sorted, unique
};

}  // namespace tessera::models
