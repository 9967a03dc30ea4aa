// SPDX-License-Identifier: Apache-2.0
#include "sandboxsupport.h"

#include <replhost/sdk/runtimeprobe.h>

#include <QFileInfo>
#include <QStandardPaths>

namespace replhost::core {

namespace {

constexpr int kTrialTimeoutMs = 10000;

} // namespace

SandboxSupport SandboxSupport::probe(const QString &configuredBwrap, const QStringList &hidden)
{
    SandboxSupport support;
    support.m_hidden = hidden;
    if (!configuredBwrap.isEmpty()) {
        const QFileInfo file(configuredBwrap);
        support.m_bwrap = configuredBwrap;
        if (!file.isAbsolute() || !file.isFile() || !file.isExecutable()) {
            support.m_reason = QStringLiteral("the configured bwrap %1 is not an executable file; "
                                              "install bubblewrap or configure its path")
                                   .arg(configuredBwrap);
            return support;
        }
        support.m_bwrap = file.absoluteFilePath();
    } else {
        support.m_bwrap = QStandardPaths::findExecutable(QStringLiteral("bwrap"));
        if (support.m_bwrap.isEmpty()) {
            support.m_reason = QStringLiteral("bwrap not found on PATH; install bubblewrap "
                                              "(Debian package bubblewrap)");
            return support;
        }
    }
    const auto trial = sdk::runProbeCommand(
        support.m_bwrap,
        {QStringLiteral("--ro-bind"), QStringLiteral("/"), QStringLiteral("/"),
         QStringLiteral("true")},
        kTrialTimeoutMs);
    if (!trial) {
        support.m_reason = QStringLiteral("%1 is installed but cannot create a sandbox here (%2); "
                                          "as a user it needs user namespaces (kernel setting "
                                          "kernel.unprivileged_userns_clone=1) or a setuid "
                                          "bwrap, and as root a / that is a mount point (a "
                                          "plain chroot has none)")
                               .arg(support.m_bwrap, trial.error().message);
        return support;
    }
    support.m_available = true;
    return support;
}

QJsonObject SandboxSupport::toJson() const
{
    return {{QStringLiteral("available"), m_available},
            {QStringLiteral("bwrap"), m_bwrap.isEmpty() ? QJsonValue() : QJsonValue(m_bwrap)},
            {QStringLiteral("reason"), m_reason.isEmpty() ? QJsonValue() : QJsonValue(m_reason)}};
}

} // namespace replhost::core
