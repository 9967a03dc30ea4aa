// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/confinedcommand.h"
#include "replhost/sdk/result.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>
#include <utility>

#include <sys/types.h>

namespace replhost::sdk {

// The `sandbox` member of SessionOptions::settings["confinement"] (docs/plugin-sdk.md), checked.
// Set by the host; every path is absolute.
struct SandboxPolicy {
    QString bwrap;          // the bwrap executable
    QString root;           // the workspace directory: the only writable place, and the HOME
    bool network = false;   // false: a network namespace with only a loopback of its own
    QStringList readOnly;   // further paths mounted read-only at the same place
    QStringList hidden;     // never visible, even inside a directory the command needs
    // Host directories bound elsewhere in the sandbox (a workspace's volumes), after the rest.
    struct Volume {
        QString hostPath;
        QString mountPath;
        bool readOnly = true;
    };
    QList<Volume> volumes;
};

// Reads a `confinement.sandbox` object. Errors ("bad_request") name the bad field:
// bwrap or root missing, not a string or not absolute, network not a boolean, read_only or
// hidden not an array of absolute paths, volumes not an array of {host_path, mount_path,
// read_only} with absolute paths.
Result<SandboxPolicy> parseSandboxPolicy(const QJsonObject &sandbox);

// What the sandbox changes in the environment its program inherits, in order: HOME is the root,
// TMPDIR /tmp, and the host's XDG_RUNTIME_DIR is gone (no value: unset). bwrapCommand gives these
// to bwrap; WorkerProcess::workerEnvironment shows them.
QList<std::pair<QString, std::optional<QString>>> sandboxEnvironment(const SandboxPolicy &policy);

// Who the sandbox's processes are inside their user namespace. A server run as root maps to
// nobody (65534:65534), so that nothing inside is root even by name; any other user stays who it
// is. Outside, on the host, they are the server's user either way: a user namespace made without
// privileges maps one id, the creator's, so files written into the workspace belong to the
// server's user. Inside, files of the server's user show as this uid, every other as the
// overflow id 65534.
struct SandboxIdentity {
    uid_t uid;
    gid_t gid;
};
SandboxIdentity sandboxIdentity();

// bwrap and its options (the program first), to be followed by "--" and `command`:
//
//   bwrap <mounts and namespaces> -- command...
//
// `command` is what bwrap runs (in a confinement: `launcher --default-signals -- program args`,
// since bwrap's monitor is started with INT and QUIT ignored and its child would inherit that);
// its absolute paths decide what besides the system is mounted. The view from inside:
// - read-only: the system directories (/usr, /etc, /opt, and /bin, /sbin, /lib* recreated as
//   the links they are on a merged-/usr system); the installation prefix of every executable in
//   `command` (the parent of its bin/ when a lib/ is beside it, symlinks followed and not, so a
//   virtual environment and its base interpreter are both there), else the file; every other
//   existing absolute path in `command` (drivers, jars, `-Dx=/path` values, class path entries);
//   policy.readOnly. Never "/", the home directory, a parent of root or of a policy.hidden path
//   (an installation prefix that holds one is narrowed to the executable itself).
// - writable: root only. Private /tmp (tmpfs), /proc (of the new PID namespace) and /dev.
// - the working directory if it lies inside root, else root; HOME is root, TMPDIR /tmp.
// - a user namespace (sandboxIdentity(); no capabilities, no further user namespaces); new PID,
//   IPC, UTS and (where the kernel has them) cgroup namespaces, and a network namespace with
//   only its own loopback unless policy.network; killed when bwrap's monitor dies
//   (--die-with-parent); a session of its own (--new-session), so no terminal of the host's can
//   be reached, and interrupts go to the program's group (sandboxedProgramGroup).
// - `seccompFd` >= 0: bwrap installs the seccomp filter it reads from that descriptor (the
//   launcher's --seccomp-fd writes it there); -1: none.
//
// Reads the file system (lstat, readlink, realpath) to lay out the mounts. Fails
// ("unavailable") when bwrap is not an executable file, root is not a directory, or a readOnly
// path does not exist. Thread-safe.
Result<QStringList> bwrapCommand(const SandboxPolicy &policy, const QStringList &command,
                                 const QString &workingDirectory, int seccompFd = -1);

// sandboxedProgramGroup(): replhost/sdk/confinedcommand.h.

} // namespace replhost::sdk
