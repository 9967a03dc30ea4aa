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
    // Where root is seen inside the sandbox (its HOME and, by default, its cwd); empty: at
    // root's own path. Never "/", a system directory or /tmp (parseSandboxPolicy checks).
    QString view;
    // A directory inside root, relative to it ("" for none): when set, /tmp inside the sandbox
    // is a symbolic link to it (view/tmp), so what code writes to /tmp is kept in the workspace;
    // else /tmp is a private tmpfs that goes with the sandbox.
    QString tmp;
};

// Reads a `confinement.sandbox` object. Errors ("bad_request") name the bad field:
// bwrap or root missing, not a string or not absolute, network not a boolean, read_only or
// hidden not an array of absolute paths, volumes not an array of {host_path, mount_path,
// read_only} with absolute paths, view not an absolute path or "/", a system directory or
// inside /tmp, tmp not a plain relative path inside root (no "..").
Result<SandboxPolicy> parseSandboxPolicy(const QJsonObject &sandbox);

// Where the host path `hostPath` is seen inside the sandbox: under root, the same place under
// view; any other path unchanged (the system is at its own path). Clean absolute paths only.
QString sandboxPathOf(const SandboxPolicy &policy, const QString &hostPath);
// The host path of the sandbox path `sandboxPath`: under view, the same place under root; /tmp
// and what is in it, when tmp is kept, the same place under root/tmp; any other path unchanged.
QString hostPathOf(const SandboxPolicy &policy, const QString &sandboxPath);
// Whether the sandbox sees its files elsewhere than on the host (view differs from root, or
// /tmp is kept in root): only then do paths crossing the boundary need sandboxPathOf/hostPathOf.
bool hasOwnView(const SandboxPolicy &policy);

// What the sandbox changes in the environment its program inherits, in order: HOME is the view,
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
// - writable: root only, seen at view. /tmp a private tmpfs, or with policy.tmp a symbolic
//   link to view/tmp (made in root when nothing is there; a read-only path under
//   /tmp is then refused, since its mount point would be made inside the workspace, where the
//   sandbox's code could have put a link in its way). /proc (of the new PID namespace), /dev.
// - the working directory if it lies inside root (seen at its place under view), else view;
//   HOME is view, TMPDIR /tmp.
// - a user namespace (sandboxIdentity(); no capabilities, no further user namespaces); new PID,
//   IPC, UTS and (where the kernel has them) cgroup namespaces, and a network namespace with
//   only its own loopback unless policy.network; killed when bwrap's monitor dies
//   (--die-with-parent); a session of its own (--new-session), so no terminal of the host's can
//   be reached, and interrupts go to the program's group (sandboxedProgramGroup).
// - `seccompFd` >= 0: bwrap installs the seccomp filter it reads from that descriptor (the
//   launcher's --seccomp-fd writes it there); -1: none.
//
// Reads the file system (lstat, readlink, realpath) to lay out the mounts. Fails
// ("unavailable") when bwrap is not an executable file, root is not a directory, a readOnly
// path does not exist, or a read-only path lies under a kept /tmp. Thread-safe.
Result<QStringList> bwrapCommand(const SandboxPolicy &policy, const QStringList &command,
                                 const QString &workingDirectory, int seccompFd = -1);

// sandboxedProgramGroup(): replhost/sdk/confinedcommand.h.

} // namespace replhost::sdk
