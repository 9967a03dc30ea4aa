// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/result.h"
#include "replhost/sdk/sdk_export.h"

#include <QString>

namespace replhost::sdk {

// Drivers are embedded in their plugin as Qt resources, so one plugin file is one deployable.
// Runtimes need a real file to run, so this writes the resource once to a per-user cache
// directory under a name that includes a hash of its content (atomically: a concurrent writer
// or an older copy is never half-read) and returns its absolute path.
//
// Thread-safe. Fails with a message when the resource does not exist or the cache directory is
// not writable.
REPLHOST_SDK_EXPORT Result<QString> materializeDriver(const QString &resourcePath);

} // namespace replhost::sdk
