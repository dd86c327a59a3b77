// SPDX-License-Identifier: Apache-2.0
#include "base/error.h"

namespace tessera::base {

std::string SourceLoc::str() const {
  if (line <= 0) {
    return file;
  }
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

namespace {
std::string compose(const SourceLoc& loc, const std::string& message, const std::string& hint) {
  std::string out = loc.file.empty() ? std::string("error: ") : loc.str() + ": error: ";
  out += message;
  if (!hint.empty()) {
    out += "; " + hint;
  }
  return out;
}
}  // namespace

InputError::InputError(SourceLoc loc, const std::string& message, const std::string& hint)
    : Error(compose(loc, message, hint)), loc_(std::move(loc)), message_(message), hint_(hint) {}

InputError::InputError(const std::string& message)
    : Error("error: " + message), message_(message) {}

}  // namespace tessera::base
