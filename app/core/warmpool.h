// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "envlayers.h"

#include <replhost/sdk/session.h>

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QMap>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace replhost::core {

class PluginRegistry;

// Pre-started idle workers per language, so that creating (or restarting, or restoring) a
// context does not wait for an interpreter to start: a JVM with JShell takes most of a second.
//
// A pooled worker is an ordinary session created through the language's handler and started,
// with the base environment only (no workspace or context layer: environmentFor(), which in a
// sandbox is the clean allow-list, never the server's environment), no context id and a neutral
// cwd ("/"), and settings["pooled"] = true, which tells the handler that the worker starts ahead
// of demand, so it may spend start-up time on making the first run fast (the Java handler warms
// javac up). The context that takes it binds it with its first request: the env layers travel as
// a context env delta against the base environment (REPLHOST_CONTEXT_ID with it), the cwd as the
// request's cwd. So variables, the process environment and the cwd a context sees are the ones a
// cold-started worker would have had. Two things cannot be sent later, and a context that needs
// either gets a cold start instead (a miss):
//   - settings that differ from the pooled worker's (language settings and the confinement in
//     settings["confinement"]: limits, cgroups, sandbox); see comparableSettings();
//   - an env layer that changes a variable runtimes read only while starting (PYTHONPATH,
//     NODE_OPTIONS, JAVA_TOOL_OPTIONS, LANG, LD_PRELOAD, …); see isStartupVariable().
// Until the first run, completion and variables are answered from the neutral cwd.
//
// Warming up: once started, a pooled worker runs one empty request through the path a context's
// first run takes (a cwd and an env change, which drivers set up on first use), and only then is
// it ready: a pooled Node worker's first run is ten times faster for it. The request leaves
// nothing a user could see; its events go nowhere. A worker still starting may be handed out
// (the context waits for its ready()); one warming up is not.
//
// Filling: one pooled worker starts at a time, across languages, so the pool never competes with
// a context's own start for more than one CPU. A hand-out starts a replacement 20 ms later, off
// the path of the context's creation and first run. A pooled worker that fails to start or dies
// while pooled is replaced after a back-off that doubles with each consecutive failure (250 ms
// to 60 s), so a broken runtime does not spin; a hand-out resets it. Languages whose runtime is
// unavailable get no pool.
//
// Pooled workers are not counted by the ResidencyLimiter (they are bounded by the pool's own
// size); a handed-out worker is the context's and is counted from then on. They are workers like
// any other for the worker guard: they die with the host.
//
// Threading: engine thread only. The registry outlives the pool.
class WarmPool : public QObject {
    Q_OBJECT
public:
    // The settings a pooled worker of `language` starts with (SessionOptions::settings).
    using SettingsSource = std::function<QJsonObject(const QString &language)>;

    WarmPool(PluginRegistry *plugins, SettingsSource settings, QObject *parent = nullptr);
    ~WarmPool() override;

    // `defaultSize` pooled workers for each available language (none for a language whose
    // capabilities say "warm_pool": false), `perLanguage` overriding it by
    // language id; 0 disables, negative sizes count as 0. Starts or stops workers to match.
    void setSizes(int defaultSize, const QMap<QString, int> &perLanguage);

    // A worker handed out: started (ready, or still starting: the context waits for ready()),
    // owned by the taker, no longer connected to the pool.
    struct Worker {
        std::unique_ptr<sdk::Session> session;
        Environment environment;  // what it was spawned with, for the first env delta
    };

    // A pooled worker of `language` (a handler id) for a context whose worker would be started
    // with `settings` and `environment`; nullopt when none fits (a miss when the language has a
    // pool). Prefers a ready worker over a starting one. Schedules a replacement.
    std::optional<Worker> take(const QString &language, const QJsonObject &settings,
                               const Environment &environment);

    struct LanguageState {
        int size = 0;          // the target
        int ready = 0;         // idle pooled workers ready to take
        int starting = 0;      // pooled workers starting or warming up
        quint64 hits = 0;      // contexts that got a pooled worker
        quint64 misses = 0;    // worker starts that found none that fit
        int failures = 0;      // consecutive failed or dead pooled workers (the back-off)
        QJsonObject toJson() const;
    };
    // Every language that has or had a pool, by id.
    QMap<QString, LanguageState> state() const;

    // Stops every pooled worker and starts no more (the engine is going down).
    void stop();

    // `settings` without what differs per context and is set at hand-out anyway, so two workers
    // that compare equal run under the same limits and isolation.
    static QJsonObject comparableSettings(QJsonObject settings);
    // The environment a worker started with `settings` starts from, below the env layers
    // (WorkerConfinement::baseEnvironment of its confinement): two workers whose settings
    // compare equal start from the same one.
    static Environment environmentFor(const QJsonObject &settings);
    // A variable a runtime reads only while it starts, so a delta sent later would not act
    // like the same variable at spawn.
    static bool isStartupVariable(const QString &key);

signals:
    // The pool changed (a worker became ready, was taken, died): for observers and tests.
    void changed();

private:
    struct Pooled {
        enum class Stage { Starting, WarmingUp, Ready };
        std::unique_ptr<sdk::Session> session;
        Stage stage = Stage::Starting;
        QElapsedTimer age;
    };
    struct Language {
        int size = 0;
        std::vector<Pooled> workers;
        QJsonObject settings;         // what they were started with
        QJsonObject comparable;       // comparableSettings(settings)
        Environment environment;      // environmentFor(settings)
        quint64 hits = 0;
        quint64 misses = 0;
        int failures = 0;
        qint64 retryAt = 0;           // monotonic ms before which none starts (back-off)
    };

    // Starts the next missing worker when none is starting.
    void fill();
    // Replaces the pooled workers of `id` when the settings they would now be given changed.
    void refreshSettings(const QString &id);
    void startWorker(const QString &language);
    void onReady(sdk::Session *session);
    void onWarm(sdk::Session *session);
    // A pooled worker failed to start or ended: drop it and back off.
    void onLost(sdk::Session *session);
    Language *languageOf(const sdk::Session *session, qsizetype *index);

    PluginRegistry *m_plugins;
    SettingsSource m_settings;
    // Ordered, so fill() goes through them in id order; std::map, as a Language cannot be copied.
    std::map<QString, Language> m_languages;
    bool m_stopped = false;
    bool m_starting = false;              // a pooled worker is starting now
    QTimer m_retry;   // the end of the earliest back-off
    QTimer m_refill;  // shortly after a hand-out
};

} // namespace replhost::core
