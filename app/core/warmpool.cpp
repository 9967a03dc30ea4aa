// SPDX-License-Identifier: Apache-2.0
#include "warmpool.h"

#include "pluginregistry.h"
#include "workerconfinement.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QJsonArray>
#include <QLoggingCategory>

#include <algorithm>

namespace replhost::core {

namespace {

Q_LOGGING_CATEGORY(lcPool, "replhost.warmpool")

constexpr qint64 kFirstBackOffMs = 250;
constexpr qint64 kMaxBackOffMs = 60 * 1000;
const QString kWarmUpId = QStringLiteral("warm-up");
// A hand-out's replacement is spawned this long after it, off the path of the context's creation
// and of its first run.
constexpr int kRefillDelayMs = 20;
// A pooled worker that lived this long before it died was healthy: its death starts the back-off
// afresh instead of doubling it.
constexpr qint64 kHealthyLifeMs = 60 * 1000;

qint64 monotonicMs() { return QDeadlineTimer::current().deadline(); }

qint64 backOffMs(int failures)
{
    if (failures <= 0)
        return 0;
    return std::min(kMaxBackOffMs, kFirstBackOffMs << std::min(failures - 1, 20));
}

} // namespace

QJsonObject WarmPool::LanguageState::toJson() const
{
    return QJsonObject{{QStringLiteral("size"), size},
                       {QStringLiteral("ready"), ready},
                       {QStringLiteral("starting"), starting},
                       {QStringLiteral("hits"), double(hits)},
                       {QStringLiteral("misses"), double(misses)},
                       {QStringLiteral("failures"), failures}};
}

WarmPool::WarmPool(PluginRegistry *plugins, SettingsSource settings, QObject *parent)
    : QObject(parent)
    , m_plugins(plugins)
    , m_settings(std::move(settings))
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &WarmPool::fill);
    m_refill.setSingleShot(true);
    connect(&m_refill, &QTimer::timeout, this, &WarmPool::fill);
}

WarmPool::~WarmPool()
{
    stop();
}

void WarmPool::setSizes(int defaultSize, const QMap<QString, int> &perLanguage)
{
    if (m_stopped)
        return;
    const QStringList available = m_plugins->availableLanguages();
    // Overrides may name a language by alias ("py"); an unknown or unavailable one has no pool.
    QMap<QString, int> sizes;
    for (auto it = perLanguage.cbegin(); it != perLanguage.cend(); ++it) {
        if (auto plugin = m_plugins->resolve(it.key()))
            sizes.insert((*plugin)->id, it.value());
        else
            qCWarning(lcPool) << "no warm pool for" << it.key() << plugin.error().message;
    }
    for (auto &[id, language] : m_languages) {
        if (!available.contains(id))
            language.size = 0;
    }
    for (const QString &id : available) {
        Language &language = m_languages[id];
        // A language that declares "warm_pool": false (a Jupyter kernel, which takes its
        // context's environment and directory only when it starts) is pooled only when asked.
        const auto plugin = m_plugins->resolve(id);
        const bool pooledByDefault =
            !plugin || (*plugin)->capabilities.value(QLatin1String("warm_pool")).toBool(true);
        language.size = std::max(0, sizes.value(id, pooledByDefault ? defaultSize : 0));
        if (language.workers.empty() && language.size > 0) {
            // Taken once: a worker that is pooled must match what a context would be given.
            language.settings = m_settings(id);
            language.comparable = comparableSettings(language.settings);
            language.environment = environmentFor(language.settings);
        }
        // Surplus workers go, the newest (likely still starting) first.
        while (qsizetype(language.workers.size()) > language.size) {
            if (language.workers.back().stage != Pooled::Stage::Ready)
                m_starting = false;
            language.workers.back().session->disconnect(this);
            language.workers.pop_back();
        }
    }
    emit changed();
    fill();
}

std::optional<WarmPool::Worker> WarmPool::take(const QString &language,
                                               const QJsonObject &settings,
                                               const Environment &environment)
{
    const auto found = m_languages.find(language);
    if (found == m_languages.end() || found->second.size == 0)
        return std::nullopt;
    Language &pool = found->second;
    // The first one ready, else the one starting.
    auto chosen = std::find_if(pool.workers.begin(), pool.workers.end(), [](const Pooled &p) {
        return p.stage == Pooled::Stage::Ready;
    });
    if (chosen == pool.workers.end())
        chosen = std::find_if(pool.workers.begin(), pool.workers.end(), [](const Pooled &p) {
            return p.stage == Pooled::Stage::Starting;
        });
    bool fits = chosen != pool.workers.end() && comparableSettings(settings) == pool.comparable;
    if (fits) {
        const sdk::EnvChange delta = EnvLayers::diff(pool.environment, environment);
        fits = std::none_of(delta.set.keyBegin(), delta.set.keyEnd(), isStartupVariable)
               && std::none_of(delta.unset.cbegin(), delta.unset.cend(), isStartupVariable);
    }
    if (!fits) {
        ++pool.misses;
        refreshSettings(language);
        emit changed();
        return std::nullopt;
    }
    ++pool.hits;
    pool.failures = 0;
    pool.retryAt = 0;
    if (chosen->stage != Pooled::Stage::Ready)
        m_starting = false;
    Worker worker;
    worker.session = std::move(chosen->session);
    worker.session->disconnect(this);
    worker.environment = pool.environment;
    pool.workers.erase(chosen);
    emit changed();
    // Not now: spawning is on the engine thread, and the context's first run is next.
    m_refill.start(kRefillDelayMs);
    return worker;
}

QMap<QString, WarmPool::LanguageState> WarmPool::state() const
{
    QMap<QString, LanguageState> states;
    for (const auto &[id, language] : m_languages) {
        LanguageState state;
        state.size = language.size;
        for (const Pooled &pooled : language.workers)
            ++(pooled.stage == Pooled::Stage::Ready ? state.ready : state.starting);
        state.hits = language.hits;
        state.misses = language.misses;
        state.failures = language.failures;
        states.insert(id, state);
    }
    return states;
}

void WarmPool::stop()
{
    m_stopped = true;
    m_retry.stop();
    m_refill.stop();
    for (auto &[id, language] : m_languages) {
        for (Pooled &pooled : language.workers)
            pooled.session->disconnect(this);
        language.workers.clear();  // deleting a session kills its process group
    }
    m_starting = false;
}

Environment WarmPool::environmentFor(const QJsonObject &settings)
{
    return WorkerConfinement::baseEnvironment(settings.value(QLatin1String("confinement")).toObject());
}

QJsonObject WarmPool::comparableSettings(QJsonObject settings)
{
    // Cgroups are made per worker: equal limits, different paths.
    QJsonObject confinement = settings.value(QLatin1String("confinement")).toObject();
    if (confinement.contains(QLatin1String("cgroups"))) {
        confinement.remove(QLatin1String("cgroups"));
        settings.insert(QStringLiteral("confinement"), confinement);
    }
    return settings;
}

bool WarmPool::isStartupVariable(const QString &key)
{
    // Read by the dynamic loader, the C library or a runtime's start-up code.
    static const QStringList names = {
        QStringLiteral("LANG"), QStringLiteral("LANGUAGE"), QStringLiteral("TZ"),
        QStringLiteral("TMPDIR"), QStringLiteral("GLIBC_TUNABLES"), QStringLiteral("CLASSPATH"),
        QStringLiteral("JAVA_TOOL_OPTIONS"), QStringLiteral("JDK_JAVA_OPTIONS"),
        QStringLiteral("_JAVA_OPTIONS"), QStringLiteral("JAVA_HOME"), QStringLiteral("PERL5LIB"),
        QStringLiteral("PERL5OPT"), QStringLiteral("PERLLIB"), QStringLiteral("GOPATH"),
        QStringLiteral("GOROOT"), QStringLiteral("GODEBUG"), QStringLiteral("GOGC"),
        QStringLiteral("GOMAXPROCS"), QStringLiteral("GOMEMLIMIT"), QStringLiteral("BASH_ENV"),
        QStringLiteral("ENV"), QStringLiteral("SHELLOPTS"), QStringLiteral("BASHOPTS"),
        QStringLiteral("INPUTRC"), QStringLiteral("HOME")};
    static const QStringList prefixes = {QStringLiteral("LC_"), QStringLiteral("LD_"),
                                         QStringLiteral("MALLOC_"), QStringLiteral("PYTHON"),
                                         QStringLiteral("NODE_"), QStringLiteral("UV_"),
                                         QStringLiteral("PERL_")};
    if (names.contains(key))
        return true;
    return std::any_of(prefixes.cbegin(), prefixes.cend(),
                       [&key](const QString &prefix) { return key.startsWith(prefix); });
}

void WarmPool::refreshSettings(const QString &id)
{
    Language &language = m_languages[id];
    QJsonObject settings = m_settings(id);
    if (settings == language.settings)
        return;
    // What a worker is given changed (the template workspace's settings did): the pooled ones
    // would never fit again.
    language.settings = std::move(settings);
    language.comparable = comparableSettings(language.settings);
    language.environment = environmentFor(language.settings);
    for (Pooled &pooled : language.workers) {
        if (pooled.stage != Pooled::Stage::Ready)
            m_starting = false;
        pooled.session->disconnect(this);
    }
    language.workers.clear();
    fill();
}

void WarmPool::fill()
{
    if (m_stopped || m_starting)
        return;
    const qint64 now = monotonicMs();
    qint64 nextRetry = -1;
    for (const auto &[id, language] : m_languages) {
        if (qsizetype(language.workers.size()) >= language.size)
            continue;
        if (language.retryAt > now) {
            nextRetry = nextRetry < 0 ? language.retryAt : std::min(nextRetry, language.retryAt);
            continue;
        }
        startWorker(id);
        return;
    }
    if (nextRetry >= 0)
        m_retry.start(int(nextRetry - now));
}

void WarmPool::startWorker(const QString &id)
{
    Language &language = m_languages[id];
    auto plugin = m_plugins->resolve(id);
    if (!plugin) {
        language.size = 0;  // the runtime went away since discovery: no pool for it
        qCWarning(lcPool) << "no warm pool for" << id << plugin.error().message;
        return;
    }
    sdk::SessionOptions options;
    options.workingDirectory = QDir::rootPath();
    options.environment = language.environment;
    options.settings = language.settings;
    // Only the worker is told: take() compares a context's settings with language.comparable,
    // which never carries this key.
    options.settings.insert(QStringLiteral("pooled"), true);
    Pooled pooled;
    pooled.session = WorkerConfinement::createSession(**plugin, options);
    pooled.age.start();
    sdk::Session *session = pooled.session.get();
    connect(session, &sdk::Session::ready, this, [this, session] { onReady(session); });
    connect(session, &sdk::Session::failed, this, [this, session] { onLost(session); });
    connect(session, &sdk::Session::terminated, this, [this, session] { onLost(session); });
    language.workers.push_back(std::move(pooled));
    m_starting = true;
    session->start();
}

WarmPool::Language *WarmPool::languageOf(const sdk::Session *session, qsizetype *index)
{
    for (auto &[id, language] : m_languages) {
        for (qsizetype i = 0; i < qsizetype(language.workers.size()); ++i) {
            if (language.workers[size_t(i)].session.get() == session) {
                *index = i;
                return &language;
            }
        }
    }
    return nullptr;
}

void WarmPool::onReady(sdk::Session *session)
{
    qsizetype index = 0;
    Language *language = languageOf(session, &index);
    if (!language)
        return;
    language->workers[size_t(index)].stage = Pooled::Stage::WarmingUp;
    connect(session, &sdk::Session::event, this, [this, session](const sdk::Event &event) {
        if (event.kind == sdk::Event::Kind::Done && event.executionId == kWarmUpId)
            onWarm(session);
    });
    // An empty run through the path a binding takes (a cwd and an env change), which some
    // drivers set up on first use; it leaves the worker as it was.
    sdk::ExecuteRequest request;
    request.id = kWarmUpId;
    request.cwd = QDir::rootPath();
    request.env.context.set.insert(QStringLiteral("REPLHOST_CONTEXT_ID"), QString());
    session->execute(request);
}

void WarmPool::onWarm(sdk::Session *session)
{
    qsizetype index = 0;
    Language *language = languageOf(session, &index);
    if (!language || language->workers[size_t(index)].stage != Pooled::Stage::WarmingUp)
        return;
    // Its output went nowhere: nothing is connected to the session but the pool.
    language->workers[size_t(index)].stage = Pooled::Stage::Ready;
    m_starting = false;
    emit changed();
    fill();
}

void WarmPool::onLost(sdk::Session *session)
{
    qsizetype index = 0;
    Language *language = languageOf(session, &index);
    if (!language)
        return;
    Pooled &pooled = language->workers[size_t(index)];
    if (pooled.stage != Pooled::Stage::Ready)
        m_starting = false;
    language->failures = pooled.age.elapsed() >= kHealthyLifeMs ? 1 : language->failures + 1;
    language->retryAt = monotonicMs() + backOffMs(language->failures);
    qCInfo(lcPool) << "a pooled worker ended; the next one starts in"
                   << backOffMs(language->failures) << "ms";
    session->disconnect(this);
    // Deleted later: this runs inside one of the session's own signal emissions.
    pooled.session.release()->deleteLater();
    language->workers.erase(language->workers.begin() + index);
    emit changed();
    fill();
}

} // namespace replhost::core
