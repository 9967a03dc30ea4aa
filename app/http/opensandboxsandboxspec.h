// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QJsonObject>
#include <QString>

#include <optional>

namespace replhost::core { class SandboxSupport; }

namespace replhost::http {

// What an OpenSandbox create request asks of the sandbox itself — its isolation, its resource
// limits, its network — as the settings of the replhost workspace that is the sandbox
// (core::WorkspaceSettings JSON). An SDK user believes they have a container: what replhost can
// honour is set on the workspace and enforced there, and what it cannot is refused before
// anything is made, never recorded and ignored.
//
//   request                          workspace
//   (always)                         isolation "sandbox": bubblewrap, the workspace as the only
//                                    writable host path (refused with "unavailable" while this
//                                    machine cannot make one, with the reason; extensions
//                                    {"replhost.isolation": "none"} asks for a plain directory
//                                    knowingly); view_path "/workspace": the code sees its
//                                    workspace there (HOME and cwd), and its /tmp is kept in it
//   resourceLimits.memory            limits.memory_bytes (Kubernetes quantities: 512Mi, 2G, 1e9)
//   resourceLimits.cpu               limits.cpu_millicores (a cgroup's CPU quota) when below the
//                                    CPUs the server's workers may use, nothing at or above
//                                    them (it holds by itself); refused (400) when the workspace
//                                    is made, where no cpu cgroup can be made
//   networkPolicy absent, null, {}   network true (OpenSandbox's default: egress allowed)
//   networkPolicy defaultAction      "deny" → network false, "allow" → true, without rules;
//                                    per-domain egress rules are refused
//   volumes (host)                   volumes: bound read-write, or read-only when asked, at
//                                    mountPath; the host path (with subPath) must be under a
//                                    directory the server allows (--allow-volume), else 400;
//                                    pvc and ossfs volumes are refused
//   platform                         accepted when it is this machine's (linux and its arch)
//   resourceRequests, other limits,  refused when present and not empty (or true)
//   other extensions, secureAccess,
//   credentialProxy
//
// Errors: "bad_request" for a malformed field (400 INVALID_REQUEST_BODY), "unsupported" for
// what replhost cannot honour (400 NOT_SUPPORTED), "unavailable" when the machine cannot make
// the sandbox (503). Threading: any; no state.
class OpenSandboxSandboxSpec {
public:
    // `workerCpus`: the CPUs a worker of this server may run on.
    static Result<QJsonObject> workspaceSettings(const QJsonObject &createRequest,
                                                 const core::SandboxSupport &sandbox,
                                                 int workerCpus);

    // A Kubernetes quantity ("256Mi", "2Gi", "1G", "500M", "1e9", "1024") in bytes; nullopt when
    // it is not one or is not a whole positive number of bytes.
    static std::optional<qint64> bytes(const QString &quantity);
    // A CPU quantity ("1", "0.5", "500m") in millicores; nullopt when it is not one.
    static std::optional<qint64> millicores(const QString &quantity);
    // The CPUs this process may run on (its affinity), which the workers it starts inherit.
    static int cpusOfThisProcess();
};

} // namespace replhost::http
