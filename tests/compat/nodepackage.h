// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

// The npm project of a compatibility test: another product's published JavaScript SDK, pinned
// in a committed package-lock.json, installed with `npm ci` into the build tree (never the source
// tree), and a `node --test` script that drives it against a real replhost-server.
//
// Errors are returned as text for QVERIFY2. Threading: the test thread.
class NodePackage {
public:
    // `sourceDir` holds package.json, package-lock.json and the test scripts; they are copied to
    // `installDir`, where node_modules is made.
    NodePackage(QString sourceDir, QString installDir);

    // Why the SDK cannot run here (node or npm missing, node older than `minimumNodeMajor`), or
    // empty when it can.
    static QString unavailableReason(int minimumNodeMajor);

    // Copies package.json, package-lock.json and `scripts`, then runs `npm ci` unless the files
    // it installed from are unchanged and `installedMarker` (a path under node_modules) exists.
    // Empty on success, else what went wrong with npm's output.
    QString install(const QStringList &scripts, const QString &installedMarker) const;

    struct Run {
        bool finished = false;
        int exitCode = -1;
        QByteArray output;  // stdout and stderr, merged
        // node's test runner summary says something passed and nothing failed.
        bool passed() const;
    };
    // `node --test --test-reporter=spec <script>` in the install directory.
    Run runTests(const QString &script, const QProcessEnvironment &environment, int timeoutMs) const;

private:
    QString m_sourceDir;
    QString m_installDir;
};
