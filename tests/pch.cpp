// SPDX-License-Identifier: Apache-2.0
// The translation unit that builds the test binaries' precompiled header (tests/CMakeLists.txt).
