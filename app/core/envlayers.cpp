// SPDX-License-Identifier: Apache-2.0
#include "envlayers.h"

#include <QProcessEnvironment>

namespace replhost::core {

Environment EnvLayers::base()
{
    Environment env;
    const auto system = QProcessEnvironment::systemEnvironment();
    for (const QString &key : system.keys()) {
        if (key.startsWith(QLatin1String("REPLHOST_")))
            continue;
        env.insert(key, system.value(key));
    }
    return env;
}

Environment EnvLayers::apply(Environment base, const QList<storage::EnvVarRecord> &layer)
{
    for (const auto &var : layer) {
        if (var.isUnset)
            base.remove(var.key);
        else
            base.insert(var.key, var.value);
    }
    return base;
}

Environment EnvLayers::apply(Environment base, const sdk::EnvChange &change)
{
    for (const auto &key : change.unset)
        base.remove(key);
    for (auto it = change.set.cbegin(); it != change.set.cend(); ++it)
        base.insert(it.key(), it.value());
    return base;
}

sdk::EnvChange EnvLayers::diff(const Environment &from, const Environment &to)
{
    sdk::EnvChange change;
    for (auto it = to.cbegin(); it != to.cend(); ++it) {
        const auto old = from.constFind(it.key());
        if (old == from.cend() || old.value() != it.value())
            change.set.insert(it.key(), it.value());
    }
    for (auto it = from.cbegin(); it != from.cend(); ++it) {
        if (!to.contains(it.key()))
            change.unset.append(it.key());
    }
    return change;
}

bool EnvLayers::isValidKey(const QString &key)
{
    return !key.isEmpty() && !key.contains(QLatin1Char('=')) && !key.contains(QChar(0));
}

} // namespace replhost::core
