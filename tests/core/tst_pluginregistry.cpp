// SPDX-License-Identifier: Apache-2.0
// The plugin registry against fixture plugins: every file in a plugin directory is listed with
// its state and the reason it cannot be used; metadata is checked before any code is loaded (the
// refused fixtures abort the process if their code is ever loaded); nothing is fatal.
#include "core/pluginregistry.h"

#include <replhost/sdk/version.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using replhost::core::PluginEntry;
using replhost::core::PluginSearchDir;
using replhost::core::PluginRegistry;
using State = PluginEntry::State;

Q_DECLARE_METATYPE(PluginEntry::State)

namespace {

QString fixtureDir(const QString &name)
{
    return QDir(QStringLiteral(REPLHOST_TEST_FIXTURE_DIR)).filePath(name);
}

const QStringList kAllFixtureDirs = {
    QStringLiteral("fixture_ghost"),
    QStringLiteral("fixture_future_sdk"),
    QStringLiteral("fixture_other_iid"),
    QStringLiteral("fixture_no_id"),
    QStringLiteral("not_a_library"),
};

QStringList allFixtureDirs()
{
    QStringList dirs;
    for (const QString &name : kAllFixtureDirs)
        dirs.append(fixtureDir(name));
    return dirs;
}

// Sets environment variables for its lifetime (an empty value unsets one), then restores them.
class EnvironmentOverride {
public:
    explicit EnvironmentOverride(const QList<QPair<const char *, QByteArray>> &variables)
    {
        for (const auto &[name, value] : variables) {
            m_saved.append({name, qEnvironmentVariableIsSet(name), qgetenv(name)});
            if (value.isEmpty())
                qunsetenv(name);
            else
                qputenv(name, value);
        }
    }
    ~EnvironmentOverride()
    {
        for (const Saved &saved : m_saved) {
            if (saved.wasSet)
                qputenv(saved.name, saved.value);
            else
                qunsetenv(saved.name);
        }
    }
    EnvironmentOverride(const EnvironmentOverride &) = delete;
    EnvironmentOverride &operator=(const EnvironmentOverride &) = delete;

private:
    struct Saved {
        const char *name;
        bool wasSet;
        QByteArray value;
    };
    QList<Saved> m_saved;
};

const QJsonObject kGhostInstalled{
    {QStringLiteral("ghost"), QJsonObject{{QStringLiteral("installed"), true}}}};

} // namespace

class PluginRegistryTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        for (const QString &dir : allFixtureDirs())
            QVERIFY2(!QDir(dir).entryList(QDir::Files).isEmpty(),
                     qPrintable(QStringLiteral("fixture directory %1 is empty").arg(dir)));
    }

    void eachPluginFileIsListedWithItsStateAndReason_data()
    {
        QTest::addColumn<QString>("directory");
        QTest::addColumn<State>("state");
        QTest::addColumn<QString>("id");
        QTest::addColumn<QStringList>("reasonMentions");

        QTest::newRow("built for another SDK major")
            << "fixture_future_sdk" << State::Incompatible << "future"
            << QStringList{QStringLiteral("2.0"),
                           QStringLiteral("%1.%2").arg(replhost::sdk::kSdkVersionMajor).arg(replhost::sdk::kSdkVersionMinor)};
        QTest::newRow("implements another interface")
            << "fixture_other_iid" << State::Broken << ""
            << QStringList{QStringLiteral("org.example.ImageFormat/1")};
        QTest::newRow("metadata without an id")
            << "fixture_no_id" << State::Broken << ""
            << QStringList{QStringLiteral("\"id\"")};
        QTest::newRow("not a library at all")
            << "not_a_library" << State::Broken << "" << QStringList{};
        QTest::newRow("loaded, runtime missing")
            << "fixture_ghost" << State::Loaded << "ghost" << QStringList{};
    }

    void eachPluginFileIsListedWithItsStateAndReason()
    {
        QFETCH(QString, directory);
        QFETCH(State, state);
        QFETCH(QString, id);
        QFETCH(QStringList, reasonMentions);

        PluginRegistry registry;
        registry.discover({fixtureDir(directory)}, {});

        QCOMPARE(registry.entries().size(), 1);
        const PluginEntry &entry = registry.entries().first();
        QCOMPARE(QFileInfo(entry.fileName).absolutePath(),
                 QFileInfo(fixtureDir(directory)).canonicalFilePath());
        QCOMPARE(PluginEntry::stateName(entry.state), PluginEntry::stateName(state));
        if (!id.isEmpty())
            QCOMPARE(entry.id, id);
        if (state == State::Loaded) {
            QVERIFY2(entry.error.isEmpty(), qPrintable(entry.error));
            QVERIFY(entry.handler);
        } else {
            QVERIFY(!entry.error.isEmpty());
            QVERIFY(!entry.handler);
        }
        for (const QString &mention : reasonMentions)
            QVERIFY2(entry.error.contains(mention),
                     qPrintable(QStringLiteral("\"%1\" does not mention %2")
                                    .arg(entry.error, mention)));
    }

    // Each fixture has one defect; its code aborts the process if it is ever loaded.
    void brokenMetadataIsRefusedBeforeAnyCodeRuns_data()
    {
        QTest::addColumn<QString>("defect");
        QTest::addColumn<State>("state");
        QTest::addColumn<QString>("reasonMentions");

        QTest::newRow("no sdkVersion") << "no_sdk_version" << State::Broken << "\"sdkVersion\"";
        QTest::newRow("sdkVersion is a word") << "sdk_version_not_major_minor" << State::Broken
                                              << "(\"latest\") is not MAJOR.MINOR";
        QTest::newRow("sdkVersion without a minor") << "sdk_version_without_minor" << State::Broken
                                                    << "(\"1\") is not MAJOR.MINOR";
        QTest::newRow("built for an older SDK major") << "older_sdk_major" << State::Incompatible
                                                      << "rebuild the plugin against SDK 1.x";
        QTest::newRow("id not lowercase") << "id_not_lowercase" << State::Broken
                                          << "\"Lua Script\") must be lowercase";
        QTest::newRow("name missing") << "name_missing" << State::Broken << "\"name\" is missing";
        QTest::newRow("version not a string") << "version_not_a_string" << State::Broken
                                              << "\"version\" is missing or not a string";
        QTest::newRow("aliases not an array") << "aliases_not_an_array" << State::Broken
                                              << "\"aliases\" must be an array of strings";
        QTest::newRow("capabilities not an object") << "capabilities_not_an_object" << State::Broken
                                                    << "\"capabilities\" must be an object";
        QTest::newRow("empty metadata") << "metadata_empty" << State::Broken
                                        << "metadata JSON is missing";
    }

    void brokenMetadataIsRefusedBeforeAnyCodeRuns()
    {
        QFETCH(QString, defect);
        QFETCH(State, state);
        QFETCH(QString, reasonMentions);

        PluginRegistry registry;
        registry.discover({fixtureDir(QStringLiteral("fixture_broken_") + defect)}, {});

        QCOMPARE(registry.entries().size(), 1);
        const PluginEntry &entry = registry.entries().first();
        QCOMPARE(PluginEntry::stateName(entry.state), PluginEntry::stateName(state));
        QVERIFY(!entry.handler);
        QVERIFY2(entry.error.contains(reasonMentions),
                 qPrintable(QStringLiteral("\"%1\" does not mention %2").arg(entry.error, reasonMentions)));
        QCOMPARE(entry.toJson().value(QLatin1String("reason")).toString(), entry.error);
        QCOMPARE(registry.availableLanguages(), QStringList{});
    }

    void allFixturesTogetherAreListedAndNoneIsFatal()
    {
        PluginRegistry registry;
        registry.discover(allFixtureDirs(), {});

        QCOMPARE(registry.entries().size(), kAllFixtureDirs.size());
        int loaded = 0;
        for (const PluginEntry &entry : registry.entries()) {
            if (entry.state == State::Loaded)
                ++loaded;
            else
                QVERIFY2(!entry.error.isEmpty(), qPrintable(entry.fileName));
        }
        QCOMPARE(loaded, 1);
        QCOMPARE(registry.availableLanguages(), QStringList{});
    }

    void loadedPluginReportsWhyItsRuntimeIsUnavailable()
    {
        PluginRegistry registry;
        registry.discover({fixtureDir(QStringLiteral("fixture_ghost"))}, {});

        QCOMPARE(registry.entries().size(), 1);
        const PluginEntry &entry = registry.entries().first();
        QCOMPARE(entry.state, State::Loaded);
        QVERIFY(!entry.runtime.available);
        QVERIFY(entry.runtime.reason.contains(QLatin1String("ghost-runtime")));

        const QJsonObject json = entry.toJson();
        QCOMPARE(json.value(QLatin1String("state")).toString(), QStringLiteral("loaded"));
        QCOMPARE(json.value(QLatin1String("available")).toBool(true), false);
        QCOMPARE(json.value(QLatin1String("reason")).toString(), entry.runtime.reason);
    }

    void resolvingAnUnavailableLanguageSaysWhy()
    {
        PluginRegistry registry;
        registry.discover(allFixtureDirs(), {});

        const auto resolved = registry.resolve(QStringLiteral("ghost"));
        QVERIFY(!resolved.ok());
        QCOMPARE(resolved.error().code, QStringLiteral("unavailable"));
        QVERIFY2(resolved.error().message.contains(QLatin1String("install the ghost-runtime package")),
                 qPrintable(resolved.error().message));
    }

    void languageSettingsReachTheProbe()
    {
        PluginRegistry registry;
        registry.discover(allFixtureDirs(), kGhostInstalled);

        const auto resolved = registry.resolve(QStringLiteral("ghost"));
        QVERIFY2(resolved.ok(), qPrintable(resolved.ok() ? QString() : resolved.error().message));
        QCOMPARE((*resolved)->runtime.version, QStringLiteral("0.1"));
        QCOMPARE(registry.availableLanguages(), QStringList{QStringLiteral("ghost")});
    }

    void idsAndAliasesResolveCaseInsensitively_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("id") << "ghost";
        QTest::newRow("id in capitals") << "GHOST";
        QTest::newRow("alias as declared") << "GhostLang";
        QTest::newRow("alias in lower case") << "ghostlang";
        QTest::newRow("short alias in capitals") << "GH";
    }

    void idsAndAliasesResolveCaseInsensitively()
    {
        QFETCH(QString, name);

        PluginRegistry available;
        available.discover(allFixtureDirs(), kGhostInstalled);
        const auto resolved = available.resolve(name);
        QVERIFY2(resolved.ok(), qPrintable(resolved.ok() ? QString() : resolved.error().message));
        QCOMPARE((*resolved)->id, QStringLiteral("ghost"));

        // Without its runtime the same name still finds the plugin, and says it is unavailable.
        PluginRegistry unavailable;
        unavailable.discover(allFixtureDirs(), {});
        const auto missing = unavailable.resolve(name);
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, QStringLiteral("unavailable"));
    }

    void refusedPluginsProvideNoLanguage_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("id of the future-SDK plugin") << "future";
        QTest::newRow("alias of the future-SDK plugin") << "fut";
        QTest::newRow("id in the metadata of another interface") << "imageformat";
        QTest::newRow("never declared anywhere") << "cobol";
    }

    void refusedPluginsProvideNoLanguage()
    {
        QFETCH(QString, name);

        PluginRegistry registry;
        registry.discover(allFixtureDirs(), kGhostInstalled);

        const auto resolved = registry.resolve(name);
        QVERIFY(!resolved.ok());
        QCOMPARE(resolved.error().code, QStringLiteral("unknown_language"));
        QVERIFY2(resolved.error().message.contains(name), qPrintable(resolved.error().message));
        // The message lists what can be used instead.
        QVERIFY2(resolved.error().message.contains(QLatin1String("ghost")),
                 qPrintable(resolved.error().message));
    }

    void laterPluginWithTheSameIdIsShadowed()
    {
        QTemporaryDir copyDir;
        QVERIFY(copyDir.isValid());
        const QString original =
            QDir(fixtureDir(QStringLiteral("fixture_ghost"))).filePath(QStringLiteral("libfixture_ghost.so"));
        QVERIFY(QFile::copy(original, copyDir.filePath(QStringLiteral("libghost_copy.so"))));

        PluginRegistry registry;
        registry.discover({fixtureDir(QStringLiteral("fixture_ghost")), copyDir.path()}, {});

        QCOMPARE(registry.entries().size(), 2);
        QCOMPARE(registry.entries().at(0).state, State::Loaded);
        QCOMPARE(QFileInfo(registry.entries().at(0).fileName).fileName(),
                 QStringLiteral("libfixture_ghost.so"));
        const PluginEntry &shadowed = registry.entries().at(1);
        QCOMPARE(shadowed.state, State::Shadowed);
        QVERIFY(!shadowed.handler);
        QVERIFY2(shadowed.error.contains(registry.entries().at(0).fileName),
                 qPrintable(shadowed.error));
    }

    void providedLanguagesAreEntriesOfTheirOwn()
    {
        PluginRegistry registry;
        registry.discover({fixtureDir(QStringLiteral("fixture_provider"))},
                          {{QStringLiteral("multi-two"), QJsonObject{{QStringLiteral("version"), QStringLiteral("2.0")}}}});

        QCOMPARE(registry.entries().size(), 2);
        QCOMPARE(registry.availableLanguages(), (QStringList{QStringLiteral("multi-one"),
                                                             QStringLiteral("multi-two")}));
        for (const PluginEntry &entry : registry.entries()) {
            QCOMPARE(entry.state, State::Loaded);
            QCOMPARE(entry.provider, QStringLiteral("multi"));
            QVERIFY(entry.handler);
            QCOMPARE(entry.toJson().value(QLatin1String("provider")).toString(), QStringLiteral("multi"));
        }
        QCOMPARE(registry.entries().at(0).handler == registry.entries().at(1).handler, false);
        const auto byAlias = registry.resolve(QStringLiteral("MO"));
        QVERIFY(byAlias);
        QCOMPARE((*byAlias)->id, QStringLiteral("multi-one"));
        QCOMPARE((*byAlias)->name, QStringLiteral("MULTI-ONE"));
        // Each language is probed with the settings of its own id.
        const auto two = registry.resolve(QStringLiteral("multi-two"));
        QVERIFY(two);
        QCOMPARE((*two)->runtime.version, QStringLiteral("2.0"));
    }

    void providedAliasThatAnotherPluginHasIsDropped()
    {
        // The ghost plugin, a plugin of one language, is found after the provider and still
        // keeps its alias "gh".
        PluginRegistry registry;
        registry.discover({fixtureDir(QStringLiteral("fixture_provider")),
                           fixtureDir(QStringLiteral("fixture_ghost"))},
                          {{QStringLiteral("ghost"), QJsonObject{{QStringLiteral("installed"), true}}},
                           {QStringLiteral("multi"), QJsonObject{{QStringLiteral("alias"), QStringLiteral("gh")}}}});
        const auto ghost = registry.resolve(QStringLiteral("gh"));
        QVERIFY2(ghost, qPrintable(ghost ? QString() : ghost.error().message));
        QCOMPARE((*ghost)->id, QStringLiteral("ghost"));
        const auto one = registry.resolve(QStringLiteral("multi-one"));
        QVERIFY(one);
        QCOMPARE((*one)->aliases, QStringList{});
    }

    void providerThatFindsNothingIsOneUnavailableEntryThatSaysWhy()
    {
        PluginRegistry registry;
        registry.discover({fixtureDir(QStringLiteral("fixture_provider"))},
                          {{QStringLiteral("multi"), QJsonObject{{QStringLiteral("none"), true}}}});

        QCOMPARE(registry.entries().size(), 1);
        const PluginEntry &entry = registry.entries().first();
        QCOMPARE(entry.state, State::Loaded);
        QCOMPARE(entry.id, QStringLiteral("multi"));
        QVERIFY(!entry.handler);
        QVERIFY(!entry.runtime.available);
        QVERIFY(entry.runtime.reason.contains(QLatin1String("install multi-runtimes")));
        const auto resolved = registry.resolve(QStringLiteral("multi"));
        QVERIFY(!resolved);
        QCOMPARE(resolved.error().code, QStringLiteral("unavailable"));
        QCOMPARE(registry.availableLanguages(), QStringList{});
    }

    void secondCopyOfAProviderIsShadowed()
    {
        QTemporaryDir copyDir;
        QVERIFY(copyDir.isValid());
        const QString original = QDir(fixtureDir(QStringLiteral("fixture_provider")))
                                     .filePath(QStringLiteral("libfixture_provider.so"));
        QVERIFY(QFile::copy(original, copyDir.filePath(QStringLiteral("libprovider_copy.so"))));

        PluginRegistry registry;
        registry.discover({fixtureDir(QStringLiteral("fixture_provider")), copyDir.path()}, {});
        QCOMPARE(registry.entries().size(), 3);
        QCOMPARE(registry.entries().at(2).state, State::Shadowed);
        QVERIFY(!registry.entries().at(2).handler);
    }

    void discoveringAgainReplacesTheList()
    {
        PluginRegistry registry;
        registry.discover(allFixtureDirs(), {});
        registry.discover({fixtureDir(QStringLiteral("fixture_ghost"))}, kGhostInstalled);

        QCOMPARE(registry.entries().size(), 1);
        QCOMPARE(registry.availableLanguages(), QStringList{QStringLiteral("ghost")});
    }

    // A plugin's sdkVersion tells the host which members of the SDK's structs its own objects
    // have (ExecuteRequest::allowInput since 1.3): the plugins built with this tree declare it.
    void firstPartyPluginsDeclareTheSdkTheyAreBuiltWith()
    {
        PluginRegistry registry;
        registry.discover({QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)}, {});
        QStringList ids;
        for (const PluginEntry &entry : registry.entries()) {
            QVERIFY2(entry.sdkVersion == QLatin1String(REPLHOST_SDK_VERSION_STRING),
                     qPrintable(entry.fileName + QStringLiteral(" declares ") + entry.sdkVersion));
            ids << entry.id;
        }
        for (const char *id : {"python", "javascript", "typescript", "bash", "perl", "go", "java"})
            QVERIFY2(ids.contains(QLatin1String(id)), id);
    }

    void missingSearchDirectoriesAreSkipped()
    {
        QTemporaryDir empty;
        QVERIFY(empty.isValid());
        PluginRegistry registry;
        registry.discover({empty.filePath(QStringLiteral("does-not-exist")), empty.path(),
                           fixtureDir(QStringLiteral("fixture_ghost"))},
                          {});
        QCOMPARE(registry.entries().size(), 1);
        QCOMPARE(registry.searchDirs().size(), 3);
    }

    void eachPluginSaysWhichSearchedDirectoryHoldsIt()
    {
        PluginRegistry registry;
        registry.discover(allFixtureDirs(), {});
        QCOMPARE(registry.entries().size(), kAllFixtureDirs.size());
        for (const PluginEntry &entry : registry.entries()) {
            QVERIFY2(entry.fileName.startsWith(QFileInfo(entry.foundIn.path).canonicalFilePath() + QLatin1Char('/')),
                     qPrintable(entry.fileName + QStringLiteral(" in ") + entry.foundIn.path));
            QCOMPARE(entry.foundIn.origin, QStringLiteral("configured"));
            const QJsonObject json = entry.toJson();
            QCOMPARE(json.value(QLatin1String("directory")).toString(), entry.foundIn.path);
            QCOMPARE(json.value(QLatin1String("origin")).toString(), QStringLiteral("configured"));
        }
    }

    void standardSearchPathsFollowTheDocumentedOrder()
    {
        QTemporaryDir home;
        QVERIFY(home.isValid());
        const EnvironmentOverride environment({{"REPLHOST_PLUGIN_PATH", "/opt/first:/opt/second"},
                                               {"HOME", home.path().toUtf8()},
                                               {"XDG_DATA_HOME", {}}});
        const QList<PluginSearchDir> dirs = PluginRegistry::standardSearchPaths({QStringLiteral("/opt/third/")});
        QStringList described;
        for (const PluginSearchDir &dir : dirs)
            described.append(dir.origin + QLatin1Char(' ') + dir.path);
        const QString installTree = QDir::cleanPath(QCoreApplication::applicationDirPath() + QStringLiteral("/.."));
        QVERIFY2(dirs.size() >= 10, qPrintable(described.join(QLatin1Char('\n'))));
        QCOMPARE(described.mid(0, 8),
                 (QStringList{QStringLiteral("environment /opt/first"), QStringLiteral("environment /opt/second"),
                              QStringLiteral("configured /opt/third"),
                              QStringLiteral("user ") + home.path() + QStringLiteral("/.local/lib/replhost/plugins"),
                              QStringLiteral("user ") + home.path()
                                      + QStringLiteral("/.local/lib/" REPLHOST_TEST_MULTIARCH_LIBDIR "replhost/plugins"),
                              QStringLiteral("user ") + home.path() + QStringLiteral("/.local/share/replhost/plugins"),
                              QStringLiteral("local /usr/local/lib/replhost/plugins"),
                              QStringLiteral("local /usr/local/lib/" REPLHOST_TEST_MULTIARCH_LIBDIR "replhost/plugins")}));
        // Debian's multiarch directory (the triplet is the compiler's), then the install tree.
        QCOMPARE(dirs.at(8).origin, QStringLiteral("system"));
        QCOMPARE(dirs.at(8).path, QStringLiteral("/usr/lib/" REPLHOST_TEST_MULTIARCH_LIBDIR "replhost/plugins"));
        for (qsizetype i = 9; i < dirs.size(); ++i) {
            QCOMPARE(dirs.at(i).origin, QStringLiteral("install"));
            QVERIFY2(dirs.at(i).path.startsWith(installTree + QLatin1Char('/')), qPrintable(dirs.at(i).path));
            QVERIFY(dirs.at(i).path.endsWith(QLatin1String("/replhost/plugins")));
        }
    }

    void aDirectoryNamedTwiceIsSearchedOnceInItsFirstPlace()
    {
        QTemporaryDir home;
        QVERIFY(home.isValid());
        const EnvironmentOverride environment({{"REPLHOST_PLUGIN_PATH", "/usr/local/lib/replhost/plugins/"},
                                               {"HOME", home.path().toUtf8()}});
        const QList<PluginSearchDir> dirs = PluginRegistry::standardSearchPaths({});
        qsizetype seen = 0;
        for (const PluginSearchDir &dir : dirs) {
            if (dir.path == QLatin1String("/usr/local/lib/replhost/plugins")) {
                ++seen;
                QCOMPARE(dir.origin, QStringLiteral("environment"));
            }
        }
        QCOMPARE(seen, 1);
        QCOMPARE(dirs.first().path, QStringLiteral("/usr/local/lib/replhost/plugins"));
    }
};

QTEST_GUILESS_MAIN(PluginRegistryTest)
#include "tst_pluginregistry.moc"
