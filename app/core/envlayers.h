// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "storage/records.h"

#include <replhost/sdk/session.h>

#include <QList>
#include <QMap>
#include <QString>

namespace replhost::core {

using Environment = QMap<QString, QString>;

// The env layering rules, as pure functions: base environment → workspace layer → context layer
// → execution layer, each layer setting keys or explicitly unsetting them.
class EnvLayers {
public:
    // The environment every layer builds on: the host's own, without its REPLHOST_* variables
    // (the host's secrets and settings are not a worker's business).
    static Environment base();

    // `base` with `layer` applied: set keys overwrite, unset keys are removed.
    static Environment apply(Environment base, const QList<storage::EnvVarRecord> &layer);
    static Environment apply(Environment base, const sdk::EnvChange &change);

    // The change that turns `from` into `to` (keys to set, keys to remove).
    static sdk::EnvChange diff(const Environment &from, const Environment &to);

    // An execution layer as a change; fails for keys that are not valid environment names
    // (empty, containing '=' or NUL).
    static bool isValidKey(const QString &key);
};

} // namespace replhost::core
