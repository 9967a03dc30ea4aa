// SPDX-License-Identifier: Apache-2.0
#include "helptext.h"

namespace replhost::cli {

std::string HelpText::overview()
{
    return R"(Usage: replhost-cli [options] COMMAND [ACTION] [arguments]

A terminal client for replhost-server's HTTP API.

Commands:
  run                               run code in a context, streaming its output
  contexts ls|new|rm|restart|output the workspace's contexts
  env show|set|unset|clear          env layers of the workspace or of a context
  files ls|get|put                  files of the workspace directory
  history                           the runs of a context, newest first
  kernelspec install|list|remove    Jupyter kernelspecs that run code in replhost
  languages                         the languages the server can run, or why not
  mcp                               serve MCP (Model Context Protocol) on stdin/stdout
  plugins                           where the server looked for plugins, what it found
  workspaces ls|new|rm|export|import|where  the server's workspaces, and moving one

Options (anywhere on the line):
  --url URL            the server (default: $REPLHOST_URL, else <data dir>/server.json)
  --token TOKEN        its token (default: $REPLHOST_TOKEN, else <data dir>/token)
  --data-dir DIR       the server's data directory (default: $REPLHOST_DATA_DIR,
                       else $XDG_DATA_HOME/replhost, else ~/.local/share/replhost)
  -w, --workspace NAME work in this workspace (default: "default")
  --json               machine-readable output: one JSON document on stdout
  -h, --help           this help; with a command, that command's help
  --version            the client's version

Exit status: 0 ok, 1 the run failed (error, aborted) or a local file could not be
read or written, 2 usage error, 3 server not found or not reachable, 4 no token or
token refused, 5 request refused by the server, 124 run timed out, 130 run
interrupted.

'replhost-cli COMMAND --help' shows the options of a command.
)";
}

std::string HelpText::forCommand(const std::string &command)
{
    if (command == "run") {
        return R"(Usage: replhost-cli run [-l LANGUAGE | --context ID] [CODE | -f FILE] [options]

Runs CODE (or FILE's content, or standard input when neither is given) and writes
its stdout and stderr to this terminal as they arrive; results and text displays
go to stdout, errors to stderr.

  -l, --language LANGUAGE  run in the language's default context (created on first use)
  --context ID             run in this context
  -f, --file FILE          read the code from FILE ("-": standard input); without -l or
                           --context, FILE's extension picks the language
  -t, --timeout SECONDS    interrupt the run after this long (exit status 124)
  -e, --env KEY=VALUE      set a variable for this run only (repeatable)

When standard input is a terminal, a run that reads input (input(), <STDIN>, read)
asks here: the line typed is the answer (a password without echo; Ctrl-D ends input).
Ctrl-C interrupts the run (the context keeps its state; exit status 130); a second
Ctrl-C stops waiting at once. Exit status: the run's (0 ok, 1 error or aborted,
124 timeout, 130 interrupted). --json prints the finished execution document.
)";
    }
    if (command == "mcp") {
        return R"(Usage: replhost-cli mcp [--url URL] [--token TOKEN] [--data-dir DIR]

Speaks the Model Context Protocol on standard input and output (one JSON-RPC
message per line) and relays it to the server's /mcp endpoint, for an agent that
starts its tools as commands: {"command": "replhost-cli", "args": ["mcp"]}.
Only protocol messages are written to stdout; diagnostics go to stderr.

When no server runs for the data directory (and no --url or $REPLHOST_URL is
given), replhost-server is started in the background for it, on a free port; it
keeps running after the client leaves, with its log in <data dir>/server.log.
)";
    }
    if (command == "contexts") {
        return R"(Usage: replhost-cli contexts ls [-l LANGUAGE]
       replhost-cli contexts new LANGUAGE|-l LANGUAGE [--name NAME] [--cwd DIR] [-e KEY=VALUE]...
       replhost-cli contexts rm ID...
       replhost-cli contexts restart ID
       replhost-cli contexts output ID [--after SEQ] [-F|--follow]

ls lists the workspace's contexts, oldest first. new starts one and prints its id.
rm deletes contexts (their interpreters are killed). restart gives a context a fresh
interpreter with the same id, directory and env layer. output prints what the context's
interpreter wrote while none of its runs was going on (a timer, a thread, a background
job): stdout to stdout, stderr to stderr. --after SEQ prints what came after entry SEQ
(numbered in --json's "seq"), each stream from the start of its line; --follow keeps
printing what comes until Ctrl-C.
)";
    }
    if (command == "env") {
        return R"(Usage: replhost-cli env show [--context ID] [--effective]
       replhost-cli env set [--context ID] KEY=VALUE...
       replhost-cli env unset [--context ID] KEY...
       replhost-cli env clear [--context ID] KEY...

The workspace's env layer, or a context's with --context. set sets keys; unset
hides keys (also from the layers below); clear drops keys from the layer so the
layers below show through. Changes reach each context's next run. show --effective
prints the environment a context's next run starts from.
)";
    }
    if (command == "files") {
        return R"(Usage: replhost-cli files ls [PATH]
       replhost-cli files get PATH [LOCAL]
       replhost-cli files put LOCAL PATH

Files of the workspace directory; PATH is relative to it. get writes to LOCAL (a
file, or a directory to put it in), or to stdout when LOCAL is missing or "-".
put reads LOCAL ("-": standard input) and creates missing directories.
)";
    }
    if (command == "history") {
        return R"(Usage: replhost-cli history (--context ID | -l LANGUAGE) [-n N] [--before CURSOR] [--all]

The runs of a context, newest first. -l LANGUAGE means that language's default
context.

  -n, --limit N      runs per page (default 50, at most 500)
  --before CURSOR    the page of runs older than CURSOR (printed under a page when
                     there are more)
  --all              every page
)";
    }
    if (command == "kernelspec") {
        return R"(Usage: replhost-cli kernelspec install [--user | --prefix DIR] [-l LANGUAGE]... [--context ID]
                                      [--kernel PATH]
       replhost-cli kernelspec list [--user | --prefix DIR]
       replhost-cli kernelspec remove NAME... [--user | --prefix DIR]

Jupyter kernelspecs that run cells in replhost contexts (replhost-kernel), for
Notebook, JupyterLab, VS Code and jupyter console. install writes replhost-LANGUAGE,
shown as Python (replhost) and so on, for each -l LANGUAGE, else for every language
the server has a runtime for; each kernel creates a context and deletes it at
shutdown.

  --user          in the user's Jupyter dir ($JUPYTER_DATA_DIR, else
                  ~/.local/share/jupyter); default: /usr/local/share/jupyter
  --prefix DIR    in DIR/share/jupyter (a virtualenv, a conda env, a test)
  -l, --language  a language to write a kernelspec for (repeatable)
  --context ID    one kernelspec bound to this context: its kernels run in it and
                  leave it at shutdown, so a notebook reopens the same state
  --kernel PATH   the replhost-kernel to run (default: beside replhost-cli, else
                  on PATH)

--data-dir, --workspace and --url are written into the kernelspecs; a token never
is. list and remove see only replhost's kernelspecs.
)";
    }
    if (command == "plugins" || command == "languages") {
        return R"(Usage: replhost-cli plugins
       replhost-cli languages

plugins prints the directories the server searched for language plugins, in order
(the first plugin of a language wins), with the number of plugin files each holds
or "missing"; then every plugin file it found: its id, state (loaded, incompatible,
broken, shadowed), the origin of its directory, the file and why it was refused.
languages prints the languages of the loaded plugins: whether each can run here,
its runtime's version and aliases, and what to install when it cannot.
Plugins are found when the server starts: restart it after installing one.
)";
    }
    if (command == "workspaces") {
        return R"(Usage: replhost-cli workspaces ls
       replhost-cli workspaces new NAME [--directory DIR]
       replhost-cli workspaces rm NAME [--purge]
       replhost-cli workspaces export NAME > NAME.tar
       replhost-cli workspaces import FILE [--name NAME]
       replhost-cli workspaces where NAME

Workspaces hold contexts, an env layer and a directory of files; --workspace NAME
makes the other commands work in one. rm deletes a workspace with its contexts and
history; --purge also deletes its directory.

export writes a workspace as a tar archive (its directory, contexts, env layers,
history and snapshots) to stdout; import makes a new workspace of one (FILE, or -
for stdin), named as it was or NAME, on the server it reaches: that is how a
workspace moves to another server. Its contexts come back dormant and restore on
first use. where prints the server (X-Replhost-Instance) a request for NAME
reaches: behind a router, the one that owns it.
)";
    }
    return overview();
}

} // namespace replhost::cli
