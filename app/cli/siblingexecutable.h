// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace replhost::cli {

// Where another replhost program is: beside this executable (a build tree's bin/ or an install's),
// else the first executable of that name on PATH; empty when nowhere. The programs of one build or
// install find each other first, so a build tree never runs an installed server or kernel.
// Threading: any; reads /proc/self/exe and the environment.
std::string siblingExecutable(const std::string &name);

} // namespace replhost::cli
