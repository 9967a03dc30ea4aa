// SPDX-License-Identifier: Apache-2.0
// The env layering rules as pure functions: base → workspace → context → execution, each layer
// setting keys or explicitly unsetting them, and the delta the host sends to an interpreter.
#include "core/envlayers.h"

#include <QTest>

using replhost::core::EnvLayers;
using replhost::core::Environment;
using replhost::sdk::EnvChange;
using replhost::storage::EnvVarRecord;
using Layer = QList<EnvVarRecord>;

Q_DECLARE_METATYPE(EnvVarRecord)
Q_DECLARE_METATYPE(EnvChange)

namespace {

EnvVarRecord set(const QString &key, const QString &value) { return {key, value, false}; }
EnvVarRecord unset(const QString &key) { return {key, {}, true}; }

EnvChange change(QMap<QString, QString> set, QStringList unset)
{
    EnvChange c;
    c.set = std::move(set);
    c.unset = std::move(unset);
    return c;
}

const Environment kBase{{QStringLiteral("HOME"), QStringLiteral("/root")},
                        {QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin")},
                        {QStringLiteral("SECRET"), QStringLiteral("s3cr3t")}};

} // namespace

// Readable failure messages for environments (found by argument-dependent lookup).
char *toString(const Environment &env)
{
    QStringList entries;
    for (auto it = env.cbegin(); it != env.cend(); ++it)
        entries.append(it.key() + QLatin1Char('=') + it.value());
    return QTest::toString(QLatin1Char('{') + entries.join(QStringLiteral(", ")) + QLatin1Char('}'));
}

class EnvLayersTest : public QObject {
    Q_OBJECT

private slots:
    void applyingALayer_data()
    {
        QTest::addColumn<Environment>("base");
        QTest::addColumn<Layer>("layer");
        QTest::addColumn<Environment>("expected");

        Environment withA = kBase;
        withA.insert(QStringLiteral("A"), QStringLiteral("1"));
        Environment otherPath = kBase;
        otherPath.insert(QStringLiteral("PATH"), QStringLiteral("/opt/bin"));
        Environment noSecret = kBase;
        noSecret.remove(QStringLiteral("SECRET"));
        Environment emptyA = kBase;
        emptyA.insert(QStringLiteral("A"), QString());

        QTest::newRow("empty layer changes nothing") << kBase << Layer{} << kBase;
        QTest::newRow("set adds a key") << kBase << Layer{set("A", "1")} << withA;
        QTest::newRow("set overwrites a base key")
            << kBase << Layer{set("PATH", "/opt/bin")} << otherPath;
        QTest::newRow("unset hides a base key") << kBase << Layer{unset("SECRET")} << noSecret;
        QTest::newRow("unset of an absent key is harmless")
            << kBase << Layer{unset("NOT_THERE")} << kBase;
        QTest::newRow("empty value is set, not unset") << kBase << Layer{set("A", "")} << emptyA;
        QTest::newRow("several keys at once")
            << kBase << Layer{set("A", "1"), unset("HOME"), set("PATH", "/opt/bin")}
            << Environment{{QStringLiteral("A"), QStringLiteral("1")},
                           {QStringLiteral("PATH"), QStringLiteral("/opt/bin")},
                           {QStringLiteral("SECRET"), QStringLiteral("s3cr3t")}};
        QTest::newRow("values are data, never interpreted")
            << Environment{} << Layer{set("Q", "it's \"$HOME\" `x` $(y)\n")}
            << Environment{{QStringLiteral("Q"), QStringLiteral("it's \"$HOME\" `x` $(y)\n")}};
    }

    void applyingALayer()
    {
        QFETCH(Environment, base);
        QFETCH(Layer, layer);
        QFETCH(Environment, expected);
        QCOMPARE(EnvLayers::apply(base, layer), expected);
    }

    void layersApplyInOrderSoTheHigherOneWins()
    {
        const Layer workspace{set("WHO", "workspace"), set("W", "1"), unset("SECRET")};
        const Layer context{set("WHO", "context"), set("C", "1"), unset("W")};
        const EnvChange execution = change({{QStringLiteral("WHO"), QStringLiteral("execution")},
                                            {QStringLiteral("SECRET"), QStringLiteral("again")}},
                                           {QStringLiteral("C")});

        const Environment result =
            EnvLayers::apply(EnvLayers::apply(EnvLayers::apply(kBase, workspace), context),
                             execution);

        QCOMPARE(result.value(QStringLiteral("WHO")), QStringLiteral("execution"));
        QVERIFY(!result.contains(QStringLiteral("W")));   // unset by the context layer
        QVERIFY(!result.contains(QStringLiteral("C")));   // unset by the execution layer
        QCOMPARE(result.value(QStringLiteral("SECRET")), QStringLiteral("again"));
        QCOMPARE(result.value(QStringLiteral("HOME")), QStringLiteral("/root"));
    }

    void applyingAChange_data()
    {
        QTest::addColumn<Environment>("base");
        QTest::addColumn<EnvChange>("change");
        QTest::addColumn<Environment>("expected");

        Environment withA = kBase;
        withA.insert(QStringLiteral("A"), QStringLiteral("1"));
        Environment noHome = kBase;
        noHome.remove(QStringLiteral("HOME"));

        QTest::newRow("empty change") << kBase << EnvChange{} << kBase;
        QTest::newRow("set") << kBase << change({{QStringLiteral("A"), QStringLiteral("1")}}, {})
                             << withA;
        QTest::newRow("unset") << kBase << change({}, {QStringLiteral("HOME")}) << noHome;
        QTest::newRow("unset of an absent key")
            << kBase << change({}, {QStringLiteral("NOPE")}) << kBase;
    }

    void applyingAChange()
    {
        QFETCH(Environment, base);
        QFETCH(EnvChange, change);
        QFETCH(Environment, expected);
        QCOMPARE(EnvLayers::apply(base, change), expected);
    }

    void diffIsTheSmallestChange_data()
    {
        QTest::addColumn<Environment>("from");
        QTest::addColumn<Environment>("to");
        QTest::addColumn<Environment>("expectedSet");
        QTest::addColumn<QStringList>("expectedUnset");

        Environment added = kBase;
        added.insert(QStringLiteral("A"), QStringLiteral("1"));
        Environment changed = kBase;
        changed.insert(QStringLiteral("PATH"), QStringLiteral("/opt/bin"));
        Environment removed = kBase;
        removed.remove(QStringLiteral("SECRET"));
        Environment emptied = kBase;
        emptied.insert(QStringLiteral("HOME"), QString());
        Environment mixed = kBase;
        mixed.insert(QStringLiteral("A"), QStringLiteral("1"));
        mixed.remove(QStringLiteral("HOME"));
        mixed.remove(QStringLiteral("SECRET"));

        using Map = Environment;
        QTest::newRow("identical") << kBase << kBase << Map{} << QStringList{};
        QTest::newRow("key added") << kBase << added << Map{{"A", "1"}} << QStringList{};
        QTest::newRow("value changed") << kBase << changed << Map{{"PATH", "/opt/bin"}}
                                       << QStringList{};
        QTest::newRow("key removed") << kBase << removed << Map{} << QStringList{"SECRET"};
        QTest::newRow("value emptied is a set") << kBase << emptied << Map{{"HOME", ""}}
                                                << QStringList{};
        QTest::newRow("several") << kBase << mixed << Map{{"A", "1"}}
                                 << QStringList{"HOME", "SECRET"};
        QTest::newRow("from nothing") << Environment{} << kBase << Map(kBase) << QStringList{};
        QTest::newRow("to nothing") << kBase << Environment{} << Map{}
                                    << QStringList{"HOME", "PATH", "SECRET"};
    }

    void diffIsTheSmallestChange()
    {
        QFETCH(Environment, from);
        QFETCH(Environment, to);
        QFETCH(Environment, expectedSet);
        QFETCH(QStringList, expectedUnset);

        const EnvChange delta = EnvLayers::diff(from, to);
        QCOMPARE(delta.set, expectedSet);
        QStringList unset = delta.unset;
        unset.sort();
        QCOMPARE(unset, expectedUnset);
        QCOMPARE(delta.isEmpty(), expectedSet.isEmpty() && expectedUnset.isEmpty());
        // And applying it gets there.
        QCOMPARE(EnvLayers::apply(from, delta), to);
    }

    void validKeys_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<bool>("valid");

        QTest::newRow("upper case") << "PATH" << true;
        QTest::newRow("lower case and digits") << "my_var2" << true;
        QTest::newRow("single letter") << "A" << true;
        QTest::newRow("empty") << "" << false;
        QTest::newRow("contains =") << "A=B" << false;
        QTest::newRow("starts with =") << "=A" << false;
        QTest::newRow("contains NUL") << QStringLiteral("A") + QChar(0) + QStringLiteral("B") << false;
    }

    void validKeys()
    {
        QFETCH(QString, key);
        QFETCH(bool, valid);
        QCOMPARE(EnvLayers::isValidKey(key), valid);
    }
};

QTEST_GUILESS_MAIN(EnvLayersTest)
#include "tst_envlayers.moc"
