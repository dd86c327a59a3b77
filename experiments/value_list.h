// SPDX-License-Identifier: Apache-2.0
// "key=v1,v2,...", the argument of `compare --sweep` and `search --vary`: a key and its values,
// trimmed, each given once.
#pragma once

#include <string>
#include <vector>

namespace tessera::experiments {

struct KeyValues {
  std::string key;
  std::vector<std::string> values;
};

// base::InputError "<flag> <arg>: <why>; expected <form>" when there is no '=', no value, an
// empty value or one given twice; the key is the caller's to check.
KeyValues parse_key_values(const std::string& flag, const std::string& arg,
                           const std::string& form);

}  // namespace tessera::experiments
