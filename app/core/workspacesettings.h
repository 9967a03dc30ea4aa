// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace replhost::core {

// What a workspace allows its contexts and workers: the limits of issue "Limits", the isolation
// of its workers and whether they reach the network. The JSON form (docs/http-api.md):
//
//   {"limits": {"max_contexts": 64, "timeout_ms": 0, "output_bytes": 16777216,
//               "memory_bytes": 0, "cpu_seconds": 0, "processes": 0, "file_size_bytes": 0,
//               "cpu_millicores": 0},
//    "restore": {"max_replay_cells": 1000, "max_replay_seconds": 300},
//    "history": {"max_executions": 100000, "max_bytes": 1073741824, "max_age": 0},
//    "isolation": "none" | "sandbox", "network": true | false,   (network: false for a sandbox
//                                                                  unless set)
//    "volumes": [{"host_path": "/srv/logs", "mount_path": "/logs", "read_only": true}],
//    "view_path": "/home/user"}                                   (only when set)
//
// A limit of 0 means "no limit". A workspace stores only the fields it sets (its overrides);
// the others take the server-wide defaults (EngineConfig::workspaceDefaults), so an
// administrator who tightens a default tightens every workspace that did not choose otherwise.
//
// Where each is enforced: max_contexts, timeout_ms and output_bytes by the engine
// (ContextManager, Context); the rest by the worker's launcher, through the confinement the host
// hands to WorkerProcess (WorkerConfinement). A change applies to what starts after it: contexts
// created, executions started and workers spawned later; running workers keep theirs.
//
// A plain value: copy freely, any thread.
struct WorkspaceSettings {
    enum class Isolation { None, Sandbox };

    struct Limits {
        int maxContexts = 64;                  // contexts in the workspace
        int timeoutMs = 0;                     // default and longest time of one execution
        qint64 outputBytes = 16 * 1024 * 1024; // output kept per execution; the rest is dropped
        qint64 memoryBytes = 0;                // address space of a worker (RLIMIT_AS)
        qint64 cpuSeconds = 0;                 // CPU time of a worker (RLIMIT_CPU)
        qint64 processes = 0;                  // processes of a worker (RLIMIT_NPROC / pids)
        qint64 fileSizeBytes = 0;              // largest file a worker writes (RLIMIT_FSIZE)
        qint64 cpuMillicores = 0;              // CPU rate of a worker and its children
                                               // (cgroup cpu.max), in thousandths of a CPU

        bool operator==(const Limits &) const = default;
    };

    // How far a restore may replay a dormant context's history (Context::beginRestore). Past
    // either bound the context starts afresh and its next run says why (state_lost).
    struct Restore {
        int maxReplayCells = 1000;       // executions replayed
        qint64 maxReplaySeconds = 300;   // their recorded run time, summed

        bool operator==(const Restore &) const = default;
    };

    // How much execution history the workspace keeps (storage::HistoryPruner, run in the
    // background by HistoryRetention). Beyond any of them the oldest executions lose their
    // output, and their rows unless a restore needs their code. Large enough by default that a
    // desktop user never meets them.
    struct History {
        int maxExecutions = 100000;                  // executions, in all its contexts
        qint64 maxBytes = qint64(1024) * 1024 * 1024; // their code and output
        qint64 maxAge = 0;                           // seconds since an execution started

        bool operator==(const History &) const = default;
    };

    // A host directory bound into the workspace's sandbox, where its code sees it. Only for
    // isolation "sandbox" (a process outside one shares the host's mounts), and only from under
    // one of the server's allowed roots (allowedVolumeRoots).
    struct Volume {
        QString hostPath;   // absolute, symlinks resolved when the settings were read
        QString mountPath;  // absolute, inside the sandbox
        bool readOnly = true;

        bool operator==(const Volume &) const = default;
    };

    // The directory inside the workspace that a sandbox with a view keeps as its /tmp.
    static constexpr const char *kKeptTmpDirectory = ".tmp";

    Limits limits;
    Restore restore;
    History history;
    QList<Volume> volumes;
    // The host directories volumes may come from (`--allow-volume`, none by default). Not a
    // setting of a workspace's: the server's, carried by the defaults fromJson() is given, and
    // never written to JSON. Settings whose volumes leave these (the server was started with
    // fewer) no longer validate.
    QStringList allowedVolumeRoots;
    Isolation isolation = Isolation::None;
    // Whether workers share the host's network. Unless chosen (here or in the server's
    // defaults), fromJson() makes it follow the isolation: off for "sandbox" (a network
    // namespace with only a loopback of its own), on for "none", which cannot take it away.
    bool network = true;
    bool networkChosen = false;  // network was set explicitly, not derived from isolation
    // Where a sandbox's code sees its workspace, as a container's code sees its home: HOME and
    // the cwd are there, and /tmp is kept in the workspace (kKeptTmpDirectory) so that it
    // outlives each process and the file routes reach it. Empty: the workspace is seen at its
    // host path and /tmp is private to each process. Only for isolation "sandbox"; absolute,
    // never "/", a system directory, /tmp, /proc or /dev, nor where a volume is mounted.
    QString viewPath;

    // `defaults` with the fields of `json` applied over them (a JSON null keeps the default).
    // Every field is checked; unknown fields are refused, so a misspelt limit is not silently
    // ignored. Error "bad_request" whose message names the field ("limits.timeout_ms") and
    // what it accepts.
    static Result<WorkspaceSettings> fromJson(const QJsonObject &json,
                                              const WorkspaceSettings &defaults);
    // Every field, effective values included.
    QJsonObject toJson() const;
    // volumes as JSON, the form toJson() writes them in.
    QJsonArray volumesJson() const;

    // A workspace's overrides after a change, by JSON Merge Patch (RFC 7396): fields of `patch`
    // replace those of `overrides`, objects merge field by field, and null removes a field (so
    // it takes the server default again). The result is not validated: pass it to fromJson().
    static QJsonObject mergePatch(const QJsonObject &overrides, const QJsonObject &patch);

    // The timeout of an execution that asked for `requestedMs` (0: none asked). A request may
    // ask for less than limits.timeoutMs, never more: no request or a longer one gets the limit.
    int effectiveTimeoutMs(int requestedMs) const;

    static QString isolationName(Isolation isolation);

    // The effective values: how network came to be what it is does not make two differ.
    bool operator==(const WorkspaceSettings &other) const
    {
        return limits == other.limits && restore == other.restore && history == other.history
               && isolation == other.isolation && network == other.network
               && volumes == other.volumes && viewPath == other.viewPath;
    }
};

} // namespace replhost::core
