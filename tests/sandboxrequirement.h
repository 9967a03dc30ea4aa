// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether the tests of workspace isolation can run here, and what happens when they cannot:
// they skip, saying why (a chroot, where user namespaces do not work; no bubblewrap), unless
// REPLHOST_REQUIRE_SANDBOX=1 is set, as CI sets it on a machine that can make sandboxes: then
// the same reason is a failure, so a sandbox that silently stopped working cannot pass for a
// machine without one.

#include <QByteArray>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QTest>

namespace replhost::testing {

// Why bwrap cannot make the sandbox replhost makes (a user namespace with the system mounted
// read-only), found without the code under test; empty when it can. Runs bwrap once.
inline QString sandboxUnavailableReason()
{
    const QString bwrap = QStandardPaths::findExecutable(QStringLiteral("bwrap"));
    if (bwrap.isEmpty())
        return QStringLiteral("bwrap is not installed (Debian package bubblewrap)");
    QProcess probe;
    probe.start(bwrap, {"--unshare-user", "--ro-bind", "/", "/", "true"});
    if (!probe.waitForFinished(30000) || probe.exitCode() != 0)
        return QStringLiteral("bwrap cannot make a sandbox on this machine: ")
               + QString::fromLocal8Bit(probe.readAllStandardError()).trimmed();
    return {};
}

inline bool sandboxRequired()
{
    return qEnvironmentVariable("REPLHOST_REQUIRE_SANDBOX") == QLatin1String("1");
}

} // namespace replhost::testing

// In a test function: skip (or, with REPLHOST_REQUIRE_SANDBOX=1, fail) when `reason` is not
// empty.
#define REPLHOST_REQUIRE_SANDBOX_OR_SKIP(reason)                                                   \
    do {                                                                                           \
        const QString why_ = (reason);                                                             \
        if (!why_.isEmpty()) {                                                                     \
            if (replhost::testing::sandboxRequired())                                              \
                QFAIL(qPrintable(QStringLiteral("REPLHOST_REQUIRE_SANDBOX=1, and ") + why_));      \
            QSKIP(qPrintable(why_));                                                               \
        }                                                                                          \
    } while (false)
