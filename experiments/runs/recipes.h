// SPDX-License-Identifier: Apache-2.0
// A recipes file: what the recipes that a runs file's runs cite set, where a run itself does
// not say (docs/runs.md §6). YAML: `recipes:`, a list of entries, each with the `runs` it
// applies to (ids of the runs file's cases), the recipe's `config` name and `source`, and the
// `training:` and `parallelism:` keys it sets, in the corpus schema; `inferred`, `row_differs`,
// `unknown` and `evidence` document it. A run's own value stands; a key the run leaves out, or
// whose value says it is unknown ("[U] not in table"), is taken from its recipe.
#pragma once

#include <map>
#include <string>

#include "base/yaml_reader.h"

namespace tessera::experiments::runs {

// Merges the recipes of `path` into `cases` (the runs file's cases, as read) and returns, for
// each case a recipe names, the note that says which keys came from which recipe. Throws
// base::InputError at file:line:col for a malformed recipes file, an id that no case has, a
// run that two recipes name, or a run given as a scenario file.
std::map<std::string, std::string> apply_recipes(const std::string& path,
                                                 const base::YamlNode& cases);

}  // namespace tessera::experiments::runs
