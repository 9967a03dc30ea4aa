// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "result.h"

#include <string>
#include <vector>

namespace replhost::cli {

// Jupyter kernelspecs of replhost-kernel on disk: where Jupyter looks for them, writing one, and
// finding and removing them. Jupyter's rules (jupyter_core.paths): a kernelspec is a directory
// <data dir>/kernels/<name>/ with a kernel.json; the data dirs searched are $JUPYTER_PATH's
// entries, the user's ($JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter, else
// ~/.local/share/jupyter), then /usr/local/share/jupyter and /usr/share/jupyter; an install
// without --user or --prefix goes to /usr/local/share/jupyter, with --prefix to
// PREFIX/share/jupyter.
//
// A replhost kernelspec says so in its metadata ({"metadata": {"replhost": {...}}}); only those
// are listed or removed, so another kernel of the same name is never touched.
//
// Failures: Failed (a file or directory could not be written or removed; the message names it).
// Threading: any; reads the environment.
class Kernelspecs {
public:
    struct Spec {
        std::string name;          // "replhost-python"
        std::string directory;     // where it is
        std::string language;      // the replhost language it runs
        std::string contextId;     // the context it is bound to, empty for a new context each time
        std::string displayName;   // "Python (replhost)"
        std::vector<std::string> argv;
    };

    // The kernels directory an install goes to: --prefix DIR, --user, or Jupyter's system one.
    static std::string kernelsDir(const std::string &prefix, bool user);
    // Jupyter's search path of kernels directories, in order.
    static std::vector<std::string> searchPath();

    // Writes <kernelsDir>/<spec.name>/kernel.json (and the logo), replacing an earlier one.
    static Result<std::string> write(const std::string &kernelsDir, const Spec &spec);
    // Every replhost kernelspec in `directories` (the first of each name: the one Jupyter uses).
    static std::vector<Spec> find(const std::vector<std::string> &directories);
    static Result<void> remove(const Spec &spec);
};

} // namespace replhost::cli
