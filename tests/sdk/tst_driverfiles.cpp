// SPDX-License-Identifier: Apache-2.0
#include "replhost/sdk/driverfiles.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <thread>
#include <vector>

using replhost::sdk::materializeDriver;

namespace {
const QString kResource = QStringLiteral(":/replhost/fixture/echo_driver.py");

QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
} // namespace

class tst_DriverFiles : public QObject {
    Q_OBJECT

private slots:
    void init()
    {
        QVERIFY(m_cache.isValid());
        qputenv("REPLHOST_CACHE_DIR", m_cache.path().toUtf8());
    }

    void writesResourceUnderContentName()
    {
        const auto path = materializeDriver(kResource);
        QVERIFY2(path.ok(), path.ok() ? "" : qPrintable(path.error().message));
        const QFileInfo info(*path);
        QCOMPARE(info.absolutePath(), m_cache.path() + "/drivers");
        const QRegularExpression name("^echo_driver-[0-9a-f]{16}\\.py$");
        QVERIFY2(name.match(info.fileName()).hasMatch(), qPrintable(info.fileName()));
        QCOMPARE(read(*path), read(kResource));
        QVERIFY(info.isExecutable());
    }

    void secondCallReusesFile()
    {
        const auto first = materializeDriver(kResource);
        QVERIFY(first.ok());
        const QDateTime written = QFileInfo(*first).lastModified();
        const auto second = materializeDriver(kResource);
        QVERIFY(second.ok());
        QCOMPARE(*second, *first);
        QCOMPARE(QFileInfo(*second).lastModified(), written);
    }

    void damagedFileIsReplaced()
    {
        const auto path = materializeDriver(kResource);
        QVERIFY(path.ok());
        {
            QFile f(*path);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write("broken");
        }
        const auto again = materializeDriver(kResource);
        QVERIFY(again.ok());
        QCOMPARE(read(*again), read(kResource));
    }

    void missingResourceFails()
    {
        const auto path = materializeDriver(":/replhost/fixture/nothing.py");
        QVERIFY(!path.ok());
        QCOMPARE(path.error().code, QStringLiteral("not_found"));
        QVERIFY(path.error().message.contains("nothing.py"));
    }

    void concurrentCallsAgree()
    {
        std::vector<QString> results(8);
        std::vector<std::thread> threads;
        for (size_t i = 0; i < results.size(); ++i)
            threads.emplace_back([&results, i] {
                const auto r = materializeDriver(kResource);
                results[i] = r.ok() ? *r : QString();
            });
        for (auto &t : threads)
            t.join();
        for (const QString &r : results) {
            QVERIFY(!r.isEmpty());
            QCOMPARE(r, results.front());
        }
        QCOMPARE(read(results.front()), read(kResource));
    }

private:
    QTemporaryDir m_cache;
};

QTEST_GUILESS_MAIN(tst_DriverFiles)
#include "tst_driverfiles.moc"
