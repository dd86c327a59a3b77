// SPDX-License-Identifier: Apache-2.0
// Typed errors. Library code throws these; only main() turns them into exit codes
// (InputError -> 2, SimulationError -> 3, anything else -> 1).
#pragma once

#include <stdexcept>
#include <string>

namespace tessera::base {

// A position in an input file, 1-based; line 0 means "the whole file" or "not from a file".
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  [[nodiscard]] std::string str() const;  // "file:line:col" (or "file" when line is 0)
};

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input from the user: a scenario, profile, topology or trace file, or a flag.
// what() reads "file:line:col: error: <message>" followed by "; <hint>" when there is one.
class InputError : public Error {
 public:
  InputError(SourceLoc loc, const std::string& message, const std::string& hint = "");
  explicit InputError(const std::string& message);  // not tied to a file position
  [[nodiscard]] const SourceLoc& loc() const { return loc_; }
  [[nodiscard]] const std::string& message() const { return message_; }
  [[nodiscard]] const std::string& hint() const { return hint_; }

 private:
  SourceLoc loc_;
  std::string message_;
  std::string hint_;
};

// A simulation that cannot finish (deadlock, out of memory with abort, inconsistent graph).
class SimulationError : public Error {
 public:
  using Error::Error;
};

// A broken invariant inside Tessera: a bug, never the user's fault.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera::base
