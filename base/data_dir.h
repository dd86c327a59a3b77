// SPDX-License-Identifier: Apache-2.0
// Where the shipped data (hardware profiles, topology presets) lives, so that the binary
// finds it in the build tree, when installed (`cmake --install`), and when moved:
//   1. $TESSERA_DATA_DIR/<sub>, when the variable is set (an error if that is no folder);
//   2. <folder of the executable>/../share/tessera/<sub> (the installed layout);
//   3. `build_tree_dir`, the source folder compiled in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera::base {

std::string data_dir(std::string_view sub, const std::string& build_tree_dir);

// The stems of the regular `.yaml` files in `dir`, sorted; base::InputError naming the
// folder and `what` it should hold when it cannot be read.
std::vector<std::string> yaml_stems(const std::string& dir, std::string_view what);

}  // namespace tessera::base
