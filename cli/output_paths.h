// SPDX-License-Identifier: Apache-2.0
// Output and input paths checked before any work starts: a run that ends by failing to write
// its reports wastes the simulation, and a scenario path that is a folder or a FIFO must not
// be read. Each check throws base::InputError naming the path and the flag.
#pragma once

#include <string>

namespace tessera::cli {

// Makes `dir` (and its parents) and proves a file can be written in it. `flag` ("--out")
// names the option in the message.
void prepare_output_dir(const std::string& flag, const std::string& dir);

// For an output prefix DIR/NAME (files DIR/NAME.<suffix>): prepares DIR ("." when absent).
void prepare_output_prefix(const std::string& flag, const std::string& prefix);

// An input file that must be a regular file: a folder or a device is an input error; a
// missing file is left to the reader, which names it.
void check_input_file(const std::string& what, const std::string& path);

// A --hardware argument: a profile name, or a path (it has a '/' or ends in .yaml) that is
// checked as check_input_file does.
void check_profile_arg(const std::string& flag, const std::string& name_or_path);

}  // namespace tessera::cli
