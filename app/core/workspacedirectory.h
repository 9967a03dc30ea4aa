// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QString>

namespace replhost::core {

// The directory of a workspace, and whether replhost may delete it: purging deletes only a
// directory replhost created for that workspace, never one a workspace was created on.
//
// Proof of creation is two things written when replhost creates the directory: a marker in it
// (kMarkerName, holding the workspace id; the file routes neither list nor reach it) and a
// record in the data directory (<records>/<workspace id>, holding the directory's device and
// inode). Code running in the workspace can write a marker, but never the record (the data
// directory is outside every sandbox), and the record's inode tells the created directory from
// another one put at the same path. A workspace without both (created on an existing directory,
// or by a replhost from before the records) is never purged.
//
// Threading: static functions, any thread; they block on the file system.
class WorkspaceDirectory {
public:
    static constexpr const char *kMarkerName = ".replhost-workspace";

    // Creates `directory` with its missing parents (the last one mode 0700). `created` is false
    // when it existed already (then nothing in it changes). Error "io".
    static Result<bool> create(const QString &directory);
    // Writes the marker and the record of a directory create() made for `workspaceId`.
    // `records`: the data directory's folder of records (created 0700 if missing). Error "io".
    static Result<void> claim(const QString &directory, const QString &workspaceId,
                              const QString &records);
    // Deletes the directory and everything in it, never following a symlink, if it is the one
    // claimed for `workspaceId`; then its record. Errors: "forbidden" (not created by replhost
    // for this workspace, with the reason), "io" (some files stayed). A directory that is gone
    // already is not an error.
    // What purge() checks first, without deleting anything.
    static Result<void> checkPurge(const QString &directory, const QString &workspaceId,
                                   const QString &records);
    static Result<void> purge(const QString &directory, const QString &workspaceId,
                              const QString &records);
};

} // namespace replhost::core
