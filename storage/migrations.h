// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

namespace replhost::storage {

class Database;

// The database schema's version, as recorded in the meta table. `version` is the schema the file
// has; `compatibleVersion` is the oldest schema whose code can still use it (a newer replhost
// that only adds things keeps it low, so an older replhost may go on using the file). A new,
// empty database is {0, 0}.
struct SchemaVersion {
    int version = 0;
    int compatibleVersion = 0;
};

// The numbered, step-by-step schema migrations. Step N turns a schema N-1 database into a schema
// N one. A step that has been released is never renumbered or changed: databases on disk record
// which steps they have had, so a fix is a new step.
namespace migrations {

// The schema this build of replhost writes.
int currentVersion();

// Reads the version from the meta table. Fails for a file that has tables but no meta table
// (not a replhost database) or whose meta table lacks the version.
Result<SchemaVersion> readVersion(Database &db);

// Upgrades `db` to `targetVersion` (the current one unless a test asks for an older schema), one
// transaction per step, re-reading the version inside each so that connections opening the same
// new file at once upgrade it only once. Refuses, touching nothing, a database whose compatible
// version is newer than currentVersion(). A database newer than ours but still compatible is left
// as it is. Returns the version the database has afterwards.
Result<SchemaVersion> migrate(Database &db, int targetVersion = currentVersion());

} // namespace migrations
} // namespace replhost::storage
