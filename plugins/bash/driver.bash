# SPDX-License-Identifier: Apache-2.0
#
# replhost worker driver for GNU bash 5.x (worker protocol version 1, docs/worker-protocol.md).
#
# Why it looks like this:
#
# - A cell must run at the top level of one long-lived shell, never inside a function, or
#   `declare`, `local` and friends change meaning. So the driver is not a loop: it is an
#   interactive bash whose standard input is a private pipe carrying one fixed "doorbell" line per
#   cell. The line calls __rh_next, which reads requests from the protocol fd, answers everything
#   that is not an execute, queues the next doorbell and returns when a cell is ready; the same
#   line then sources the cell at top level. PROMPT_COMMAND (__rh_post) runs after every command
#   line, including one aborted by SIGINT, so it is where `done` is reported.
#
# - Only an interactive bash survives SIGINT with its state: it abandons the current command line
#   (killing a `sleep`, breaking a `while :; do :; done`) and goes back to its prompt. A
#   non-interactive shell would run a trap and carry on, or die. While idle the driver ignores
#   SIGINT (trap '' INT) so a late signal cannot cut a frame in half; the user's own INT trap, if
#   any, is put back for the next cell.
#
# - `exit` in a cell is a function here: in the shell itself (not in a subshell) it ends the
#   cell with that status instead of ending the worker, the way a notebook treats a script's exit.
#   It unwinds by sending SIGINT to the shell, the only way to abandon a whole command line from
#   inside it. `builtin exit`, `exec`, `set -e` failures and signals still end the worker; the host
#   reports that, with a line from the driver's EXIT trap saying why.
#
# - The driver's fds live high, out of the way of ordinary user redirections and of bash's own
#   {var} allocation (which starts at 10): 60/61 carry the protocol, 62/63 are the original fd 1/2
#   for sync marks, 59 is a pipe for capturing builtin output, 58 the cell file, 56 the display
#   spool. 59..63 are closed
#   around every cell (bash restores them afterwards from close-on-exec copies), so user processes
#   do not inherit the protocol and `exec 3>file` or `exec >file` in a cell breaks nothing.
#
# - `display MIME-TYPE [FILE]` is the shell's rich output: it runs with the protocol fds closed,
#   often in a pipeline's subshell, so it appends its bundle to a spool file and the driver sends
#   the spooled displays just before `done`, after everything the cell printed.
#
# - JSON is parsed in pure bash: the host sends ASCII-only JSON, so after escaped backslashes and
#   quotes are swapped for control characters (which JSON never carries raw), splitting on `"`
#   separates strings from structure in one step. Events are emitted as ASCII-only JSON, so frame
#   lengths can be counted in characters whatever the locale.
#
# - Bash builtins only on the path of an execute: no subshell, no command substitution, no
#   external program. Completion and variables, sent only while idle, may fork.

if [[ $- != *i* ]]; then
    # First phase: started as a script. Arrange the fds, then become the interactive shell.
    if ! { : <&3 >&4; } 2>/dev/null; then
        echo "replhost bash driver: fd 3 and fd 4 must carry the worker protocol" >&2
        exit 2
    fi
    exec 60<&3 61>&4 62>&1 63>&2 3<&- 4<&-
    # Pipes the shell holds both ends of, so it can queue its own input (fd 0) and capture
    # builtin output without a fork (fd 59): a pipe reopened read-write through /proc (bash
    # would dup a /dev/fd path instead of opening it), or a FIFO where /proc is missing.
    if [[ -e /proc/self/fd/0 ]]; then
        exec 3< <(:)
        exec 59<>/proc/self/fd/3 3<&-
        exec 3< <(:)
        exec 0<>/proc/self/fd/3 3<&-
    else
        __rh_dir=$(mktemp -d) && mkfifo "$__rh_dir/a" "$__rh_dir/b" || exit 2
        exec 59<>"$__rh_dir/a" 0<>"$__rh_dir/b"
        rm -rf "$__rh_dir"
    fi
    # The cell file: sourcing rather than eval'ing keeps the shell's job-control chatter about
    # terminals ("tcsetattr: Inappropriate ioctl") out of the output and gives error messages a
    # line number. With /proc it is unlinked at once and reached through its fd.
    # It is rewritten for every cell: on a disk file system truncating costs milliseconds, on
    # tmpfs microseconds.
    for __rh_dir in /dev/shm "${XDG_RUNTIME_DIR-}" "${TMPDIR:-/tmp}"; do
        [[ -d $__rh_dir && -w $__rh_dir ]] || continue
        __rh_cell=$(mktemp "$__rh_dir/replhost-bash.XXXXXXXXXX") && break
    done
    [[ $__rh_cell ]] && exec 58<>"$__rh_cell" || exit 2
    if [[ -e /proc/self/fd/58 ]]; then
        rm -f "$__rh_cell"
        __rh_cell=/proc/self/fd/58
    fi
    # The display spool: display() runs with the protocol fds closed, often in a pipeline's
    # subshell, so it appends its bundle here and the driver sends it before `done`. Subshells
    # reach it through the shell's pid, which stays this one after the exec below.
    __rh_spool=$(mktemp "$__rh_dir/replhost-bash-display.XXXXXXXXXX") && exec 56<>"$__rh_spool" || exit 2
    if [[ -e /proc/self/fd/56 ]]; then
        rm -f "$__rh_spool"
        __rh_spool=/proc/$$/fd/56
    fi
    printf '%s\n' '. "$__RH_SELF"' >&0
    # Job control warnings ("no job control in this shell") are printed before the driver runs;
    # stderr comes back from fd 63 in the second phase.
    __RH_SELF=${BASH_SOURCE[0]} __RH_CELL=$__rh_cell __RH_SPOOL=$__rh_spool HISTFILE= exec -a bash "$BASH" --norc --noprofile --noediting -i +m 2>/dev/null
    echo "replhost bash driver: cannot start $BASH" >&63
    exit 2
fi

# Second phase: sourced by the interactive shell as its first input line.

exec 2>&63
__rh_cell=$__RH_CELL __rh_spool=$__RH_SPOOL
builtin unset __RH_SELF __RH_CELL __RH_SPOOL HISTFILE MAILCHECK TMOUT
builtin set +o history +H +m
PS1= PS2= PS0=

declare -gA __rh_J=() __rh_T=() __rh_xv=() __rh_xa=() __rh_envk=() __rh_basev=() __rh_basef=()
declare -ga __rh_q=()
__rh_nonce= __rh_seq=0 __rh_busy= __rh_count=0 __rh_t0=0 __rh_intr= __rh_exit= __rh_ut=
__rh_prev=0 __rh_code= __rh_uo= __rh_f= __rh_e= __rh_d= __rh_m=
__rh_rev=0 __rh_input= __rh_answer=
__rh_bell='\__rh_next && :; \builtin . "$__rh_cell" </dev/null 59<&- 60<&- 61>&- 62>&- 63>&-'

# A UTF-8 locale for decoding \u escapes and counting code points, whatever the user's locale is.
__rh_isu8() {
    local LC_ALL=$1 s=$'\xc3\xa9'
    (( ${#s} == 1 ))
} 2>/dev/null
__rh_u8=
for __rh_d in C.UTF-8 C.utf8 en_US.UTF-8 en_US.utf8; do
    if __rh_isu8 "$__rh_d"; then
        __rh_u8=$__rh_d
        break
    fi
done
builtin unset -f __rh_isu8

# --- JSON out ------------------------------------------------------------------------------------

# Sets __rh_e to $1 as a JSON string literal, ASCII only.
__rh_js() {
    local s=$1
    if [[ $s == *[\"\\[:cntrl:]]* ]]; then
        local LC_ALL=C
        s=${s//\\/\\\\}
        s=${s//\"/\\\"}
        if [[ $s == *[[:cntrl:]]* ]]; then
            s=${s//$'\n'/\\n}
            s=${s//$'\t'/\\t}
            s=${s//$'\r'/\\r}
            if [[ $s == *[[:cntrl:]]* ]]; then
                local i h c
                for (( i = 1; i < 32; i++ )); do
                    builtin printf -v h '%02x' "$i"
                    builtin printf -v c '%b' "\\x$h"
                    s=${s//"$c"/\\u00$h}
                done
                s=${s//$'\x7f'/\\u007f}
            fi
        fi
    fi
    if [[ $s == *[![:ascii:]]* ]]; then
        __rh_jsu "$s"
        s=$__rh_e
    fi
    __rh_e="\"$s\""
}

# Sets __rh_e to $1 with every non-ASCII character as a \u escape (surrogate pairs above the BMP)
# and every byte that is not part of valid UTF-8 as U+FFFD. Decodes bytes by hand so the result
# does not depend on the user's locale.
__rh_jsu() {
    local LC_ALL=C
    local s=$1 out= run b c n cp i ok
    while [[ $s ]]; do
        run=${s%%[![:ascii:]]*}
        out+=$run
        s=${s:${#run}}
        [[ $s ]] || break
        builtin printf -v b '%d' "'${s:0:1}"
        if (( b >= 0xC2 && b <= 0xDF )); then n=2 cp=$(( b & 0x1F ))
        elif (( b >= 0xE0 && b <= 0xEF )); then n=3 cp=$(( b & 0x0F ))
        elif (( b >= 0xF0 && b <= 0xF4 )); then n=4 cp=$(( b & 0x07 ))
        else n=0 cp=0
        fi
        ok=$n
        for (( i = 1; i < n; i++ )); do
            c=${s:i:1}
            [[ $c ]] || { ok=0; break; }
            builtin printf -v c '%d' "'$c"
            if (( c < 0x80 || c > 0xBF )); then ok=0; break; fi
            cp=$(( (cp << 6) | (c & 0x3F) ))
        done
        if (( ok && ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))
                     || (cp >= 0xD800 && cp <= 0xDFFF)) )); then
            ok=0
        fi
        if (( ok )); then
            if (( cp >= 0x10000 )); then
                cp=$(( cp - 0x10000 ))
                builtin printf -v c '\\u%04x\\u%04x' $(( 0xD800 + (cp >> 10) )) $(( 0xDC00 + (cp & 0x3FF) ))
            else
                builtin printf -v c '\\u%04x' "$cp"
            fi
            out+=$c
            s=${s:n}
        else
            out+='\ufffd'
            s=${s:1}
        fi
    done
    __rh_e=$out
}

# Writes one frame on the event fd. $1 is ASCII-only JSON, so its length in characters is its
# length in bytes.
__rh_send() {
    builtin printf '%d\n%s' "${#1}" "$1" >&61
}

__rh_log() {
    __rh_js "$2"
    __rh_send "{\"type\":\"log\",\"level\":\"$1\",\"message\":$__rh_e}"
}

# Writes the next sync mark on the saved fd 1 and fd 2, one write() each.
__rh_mark() {
    (( __rh_seq += 1 ))
    builtin printf -v __rh_m '\e]5253;rh;%s;%d\a' "$__rh_nonce" "$__rh_seq"
    builtin printf '%s' "$__rh_m" >&62
    builtin printf '%s' "$__rh_m" >&63
}

# --- JSON in -------------------------------------------------------------------------------------

# Reads one frame from the request fd into __rh_f, waiting at most $1 seconds for it to begin
# when given. Returns 1 at end of input or when the wait ran out, 2 on a broken frame.
__rh_read() {
    local TMOUT= len
    if (( $# )); then
        IFS= builtin read -r -t "$1" len <&60 || return 1
    else
        IFS= builtin read -r len <&60 || return 1
    fi
    [[ $len && $len != *[!0-9]* ]] || return 2
    __rh_f=
    (( len == 0 )) && return 0
    LC_ALL=C IFS= builtin read -r -N "$len" __rh_f <&60
    (( ${#__rh_f} == len )) || return 1
}

# Sets __rh_d to the JSON string body $1 decoded, where \\ has already become \x01 and \" \x02.
__rh_unesc() {
    local s=$1
    if [[ $s != *[\\$'\x01\x02']* ]]; then
        __rh_d=$s
        return
    fi
    s=${s//$'\x02'/\"}
    if [[ $s == *\\* ]]; then
        s=${s//\\\//\/}
        s=${s//\\n/$'\n'}
        s=${s//\\t/$'\t'}
        s=${s//\\r/$'\r'}
        s=${s//\\b/$'\b'}
        s=${s//\\f/$'\f'}
    fi
    if [[ $s == *\\u* ]]; then
        # Every backslash left starts a \u escape. printf %b decodes them (and \\ back to \) once
        # surrogate pairs are joined, lone surrogates replaced and NUL, which no shell string can
        # hold, dropped.
        local re='\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})' rep
        while [[ $s =~ $re ]]; do
            builtin printf -v rep '\\U%08X' $(( 0x10000 + ((16#${BASH_REMATCH[1]} - 0xD800) << 10)
                                                + (16#${BASH_REMATCH[2]} - 0xDC00) ))
            s=${s//"${BASH_REMATCH[0]}"/"$rep"}
        done
        re='\\u[dD][89a-fA-F][0-9a-fA-F]{2}'
        while [[ $s =~ $re ]]; do
            s=${s//"${BASH_REMATCH[0]}"/'\uFFFD'}
        done
        s=${s//'\u0000'/}
        s=${s//$'\x01'/'\\'}
        LC_ALL=$__rh_u8 builtin printf -v s '%b' "$s"
    else
        s=${s//$'\x01'/\\}
    fi
    __rh_d=$s
}

# Parses the JSON object in $1 into __rh_J (path -> value) and __rh_T (path -> type of what is
# not a string: n number, b boolean, z null, o object, a array). A path is the chain of keys and
# array indices, each after a dot: .type, .env.exec.set.TOKEN, .env.context.unset.0.
# Fails on malformed input.
__rh_parse() {
    local IFS='"' s=$1 p tok t key= want=v cur= ck= str=
    local -a cpath=() ckind=() ccount=()
    local -i d=0 n=0
    __rh_J=() __rh_T=()
    if [[ $s == *\\* ]]; then
        # Byte semantics: pattern substitution in a multibyte locale costs a scan per match.
        local LC_ALL=C
        [[ $s == *[$'\x01\x02']* ]] && return 1
        s=${s//\\\\/$'\x01'}
        s=${s//\\\"/$'\x02'}
    fi
    # Most executes carry empty env layers; dropping them here saves a third of the work.
    s=${s/'"env":{"context":{"set":{},"unset":[]},"exec":{"set":{},"unset":[]}},'/}
    # Word splitting on '"' alternates structure and string bodies; noglob is on while the driver
    # runs, so nothing else happens to the words.
    [[ $s == *\" ]] && return 1
    for p in $s; do
        if [[ $str ]]; then
            str=
            if [[ $p == *[\\$'\x01\x02']* ]]; then
                __rh_unesc "$p"
                p=$__rh_d
            fi
            case $want in
            k) key=$p want=: ;;
            v)
                [[ $ck ]] || return 1
                [[ $ck == a ]] && key=$n
                __rh_J[$cur.$key]=$p
                n+=1 want=c
                ;;
            *) return 1 ;;
            esac
            continue
        fi
        str=1
        case $p in
        :)
            [[ $want == : ]] || return 1
            want=v
            continue
            ;;
        ,)
            [[ $want == c ]] || return 1
            [[ $ck == o ]] && want=k || want=v
            continue
            ;;
        *[$' \t\r\n']*) p=${p//[$' \t\r\n']/} ;;
        esac
        while [[ $p ]]; do
            case $p in
            :*)
                [[ $want == : ]] || return 1
                want=v p=${p:1}
                ;;
            ,*)
                [[ $want == c ]] || return 1
                [[ $ck == o ]] && want=k || want=v
                p=${p:1}
                ;;
            ['{[']*)
                [[ $want == v ]] || return 1
                [[ $p == '{'* ]] && t=o || t=a
                if [[ $ck ]]; then
                    [[ $ck == a ]] && key=$n
                    ccount[d]=$((n + 1)) cpath[d]=$cur ckind[d]=$ck
                    cur+=.$key
                    __rh_J[$cur]= __rh_T[$cur]=$t
                elif (( d )) || [[ $t != o ]]; then
                    return 1
                fi
                d+=1 ck=$t n=0
                [[ $t == o ]] && want=k
                p=${p:1}
                ;;
            [\]\}]*)
                [[ $p == '}'* ]] && t=o || t=a
                [[ $ck == "$t" ]] || return 1
                if [[ $want != c ]]; then
                    # Only an empty container may close right after opening.
                    (( n == 0 )) && [[ ($t == o && $want == k) || ($t == a && $want == v) ]] || return 1
                fi
                d=$((d - 1))
                if (( d )); then
                    cur=${cpath[d]} ck=${ckind[d]} n=${ccount[d]} want=c
                else
                    ck= want=e
                fi
                p=${p:1}
                ;;
            *)
                [[ $want == v && $ck ]] || return 1
                tok=${p%%[!0-9a-zA-Z.+-]*}
                case $tok in
                true | false) t=b ;;
                null) t=z ;;
                -[0-9]* | [0-9]*)
                    [[ $tok == *[!0-9eE.+-]* ]] && return 1
                    t=n
                    ;;
                *) return 1 ;;
                esac
                [[ $ck == a ]] && key=$n
                __rh_J[$cur.$key]=$tok __rh_T[$cur.$key]=$t
                n+=1 want=c
                p=${p:${#tok}}
                ;;
            esac
        done
    done
    [[ $want == e ]]
}

# --- requests ------------------------------------------------------------------------------------

__rh_idjs() {
    __rh_js "${__rh_J[.id]-}"
}

__rh_hello() {
    __rh_nonce=${__rh_J[.mark_nonce]-}
    # The protocol revision the host takes; 2 (input requests) is the newest this driver uses.
    __rh_rev=${__rh_J[.revision]-0}
    [[ $__rh_rev && $__rh_rev != *[!0-9]* ]] || __rh_rev=0
    (( __rh_rev > 2 )) && __rh_rev=2
    local max=${__rh_J[.options.snapshot_max_bytes]-} snap=',"snapshot":"after_run"'
    [[ $max && $max != *[!0-9]* ]] && __rh_snapmax=$max
    # A bound of 0 turns snapshots off: no capture, and the host replays.
    (( __rh_snapmax == 0 )) && snap=
    [[ $__rh_nonce == *[!0-9a-fA-F]* ]] && __rh_nonce=
    local id v
    __rh_idjs
    id=$__rh_e
    __rh_js "$BASH_VERSION"
    v=$__rh_e
    __rh_send "{\"type\":\"hello\",\"id\":$id,\"protocol\":1,\"language\":\"bash\",\"language_version\":$v,\"implementation\":\"GNU bash\",\"pid\":$$,\"capabilities\":{\"interrupt\":[\"signal\"],\"complete\":true,\"variables\":true$snap,\"display\":[\"text/plain\",\"text/html\",\"text/markdown\",\"text/latex\",\"image/svg+xml\",\"image/png\",\"image/jpeg\"]}}"
}

__rh_reply_error() {
    local id
    __rh_idjs
    id=$__rh_e
    __rh_js "$1"
    __rh_send "{\"type\":\"error_reply\",\"id\":$id,\"reason\":$__rh_e}"
}

__rh_validname() {
    [[ $1 && $1 != [0-9]* && $1 != *[!A-Za-z0-9_]* && $1 != __rh_* ]]
}

# Applies the env layers of the execute request in __rh_J: the context layer persists, the values
# the exec layer replaces are remembered in __rh_xv/__rh_xa for __rh_restore.
__rh_env() {
    local p k
    local -a cset=() cunset=() xset=() xunset=()
    for p in "${!__rh_J[@]}"; do
        case $p in
        .env.context.set.?*) [[ -v __rh_T[$p] ]] || cset+=("$p") ;;
        .env.context.unset.?*) [[ -v __rh_T[$p] ]] || cunset+=("${__rh_J[$p]}") ;;
        .env.exec.set.?*) [[ -v __rh_T[$p] ]] || xset+=("$p") ;;
        .env.exec.unset.?*) [[ -v __rh_T[$p] ]] || xunset+=("${__rh_J[$p]}") ;;
        esac
    done
    for p in "${cset[@]}"; do
        k=${p#.env.context.set.}
        if ! __rh_validname "$k"; then
            __rh_log warning "context env: $k is not a valid shell variable name; skipped"
            continue
        fi
        builtin export -- "$k=${__rh_J[$p]}" 2>/dev/null ||
            __rh_log warning "context env: cannot set $k (readonly)"
        __rh_envk[$k]=1
    done
    for k in "${cunset[@]}"; do
        __rh_validname "$k" || continue
        builtin unset -v -- "$k" 2>/dev/null || __rh_log warning "context env: cannot unset $k (readonly)"
    done
    for p in "${xset[@]}" "${xunset[@]}"; do
        [[ $p == .env.* ]] && k=${p#.env.exec.set.} || k=$p
        __rh_validname "$k" || continue
        [[ -v __rh_xa[$k] ]] && continue
        if [[ ${!k+set} ]]; then
            __rh_xv[$k]=${!k}
            [[ ${!k@a} == *x* ]] && __rh_xa[$k]=x || __rh_xa[$k]=s
        else
            __rh_xa[$k]=-
        fi
    done
    for p in "${xset[@]}"; do
        k=${p#.env.exec.set.}
        if ! __rh_validname "$k"; then
            __rh_log warning "exec env: $k is not a valid shell variable name; skipped"
            continue
        fi
        builtin export -- "$k=${__rh_J[$p]}" 2>/dev/null || __rh_log warning "exec env: cannot set $k (readonly)"
    done
    for k in "${xunset[@]}"; do
        __rh_validname "$k" || continue
        builtin unset -v -- "$k" 2>/dev/null || __rh_log warning "exec env: cannot unset $k (readonly)"
    done
}

# Puts back what the exec env layer replaced.
__rh_restore() {
    local k
    for k in "${!__rh_xa[@]}"; do
        case ${__rh_xa[$k]} in
        -) builtin unset -v -- "$k" 2>/dev/null ;;
        x) builtin export -- "$k=${__rh_xv[$k]}" 2>/dev/null ;;
        *) builtin printf -v "$k" '%s' "${__rh_xv[$k]}" 2>/dev/null && builtin export -n -- "$k" 2>/dev/null ;;
        esac
    done
    __rh_xa=() __rh_xv=()
}

# Starts the execute request in __rh_J. Fails when the run already ended without user code.
__rh_begin() {
    __rh_busy=${__rh_J[.id]-}
    __rh_count=${__rh_J[.execution_count]-0}
    [[ $__rh_count && $__rh_count != *[!0-9]* ]] || __rh_count=0
    __rh_code=${__rh_J[.code]-}
    __rh_intr= __rh_exit= __rh_input=
    (( __rh_rev >= 2 )) && [[ ${__rh_J[.input]-} == true ]] && __rh_input=1
    : >"$__rh_spool"
    __rh_t0=${EPOCHREALTIME//[!0-9]/}
    [[ ${!__rh_J[*]} == *.env.* ]] && __rh_env
    local __rh_cwd=${__rh_J[.cwd]-}
    if [[ ! -v __rh_T[.cwd] && $__rh_cwd && $__rh_cwd != "$PWD" ]] && ! builtin cd -- "$__rh_cwd" 2>/dev/null; then
        __rh_started
        __rh_finish 1 CwdError "cannot change directory to $__rh_cwd"
        return 1
    fi
}

__rh_started() {
    __rh_js "$__rh_busy"
    __rh_send "{\"type\":\"started\",\"id\":$__rh_e,\"execution_count\":$__rh_count}"
}

# Ends the running execution with exit status $1, or with error $2 (value $3) when given.
# Locals here and in its callers carry the prefix: the snapshot taken here must see the user's
# globals, not a driver local that shadows one.
__rh_finish() {
    local __rh_st=$1 __rh_en=${2-} __rh_ev=${3-} __rh_status __rh_id __rh_now __rh_dur
    if [[ $__rh_input ]]; then
        command exec 52>&- 53>&- 54<&- 55>&-
        __rh_input=
    fi
    __rh_restore
    __rh_shown
    if [[ $__rh_en ]]; then
        __rh_status=error
    elif [[ $__rh_intr ]]; then
        __rh_status=interrupted __rh_en=Interrupted __rh_ev="interrupted by SIGINT (exit status $__rh_st)"
    elif (( __rh_st == 0 )); then
        __rh_status=ok
    else
        __rh_status=error __rh_en=CommandFailed __rh_ev="exit status $__rh_st"
    fi
    __rh_mark
    __rh_js "$__rh_busy"
    __rh_id=$__rh_e
    if [[ $__rh_en ]]; then
        __rh_js "$__rh_ev"
        __rh_send "{\"type\":\"error\",\"id\":$__rh_id,\"ename\":\"$__rh_en\",\"evalue\":$__rh_e,\"traceback\":[],\"mark\":$__rh_seq}"
    fi
    __rh_snap "$__rh_id"
    __rh_now=${EPOCHREALTIME//[!0-9]/}
    __rh_dur=$(( __rh_now - __rh_t0 ))
    (( __rh_dur < 0 )) && __rh_dur=0
    builtin printf -v __rh_dur '%d.%03d' $(( __rh_dur / 1000 )) $(( __rh_dur % 1000 ))
    __rh_js "$PWD"
    __rh_send "{\"type\":\"done\",\"id\":$__rh_id,\"status\":\"$__rh_status\",\"execution_count\":$__rh_count,\"mark\":$__rh_seq,\"cwd\":$__rh_e,\"duration_ms\":$__rh_dur,\"exit_code\":$__rh_st}"
    __rh_prev=$__rh_st __rh_busy=
}

# What a snapshot leaves out: the shell's own variables (read-only, or remade by every command:
# $_, $RANDOM, $SECONDS, ...), the driver's (__rh_*), the prompt the driver owns, $PWD (the cd
# at the top of the snapshot sets it) and what the host sets (REPLHOST_CONTEXT_ID, SHLVL).
__rh_snapx='@(__rh_*|_|BASH|BASHOPTS|BASHPID|BASH_*|COLUMNS|COMP_*|DIRSTACK|EPOCHREALTIME|EPOCHSECONDS|EUID|FUNCNAME|GROUPS|HISTCMD|HISTFILE|HOSTNAME|HOSTTYPE|LINENO|LINES|MACHTYPE|MAILCHECK|OSTYPE|PIPESTATUS|PPID|PROMPT_COMMAND|PS0|PS1|PS2|PWD|RANDOM|REPLHOST_CONTEXT_ID|SECONDS|SHELLOPTS|SHLVL|SRANDOM|UID)'
__rh_snapl=  # the last snapshot taken: sent again only when the state differs from it
__rh_snapmax=16777216  # the bound on a snapshot's size (init option snapshot_max_bytes; 0: none)

# Called by a snapshot as it starts: turns on the `set -o` options in $1 and the shopt options
# in $2 (colon-separated, as $SHELLOPTS and $BASHOPTS had them) and every other one off, but for
# those the driver owns (line editing, history, job control) and the set -e/-u/... flags, which
# the snapshot's last lines give back. Taking the two variables costs a capture nothing, where
# `set +o` and `shopt -p` cost a write per option; the loop here runs once per restore.
__rh_setopts() {
    local __rh_o __rh_s IFS=:
    local -A __rh_on=()
    for __rh_o in $1 $2; do __rh_on[$__rh_o]=1; done
    IFS=$' \t\n'
    builtin set -o >|"$__rh_cell"
    while builtin read -r __rh_o __rh_s; do
        case $__rh_o in
        emacs | vi | history | monitor | allexport | errexit | errtrace | nounset | verbose | \
            xtrace | functrace | noglob) continue ;;
        esac
        if [[ -v __rh_on[$__rh_o] ]]; then builtin set -o "$__rh_o"; else builtin set +o "$__rh_o"; fi
    done <"$__rh_cell"
    builtin shopt >|"$__rh_cell"
    while builtin read -r __rh_o __rh_s; do
        case $__rh_o in login_shell | restricted_shell) continue ;; esac
        if [[ -v __rh_on[$__rh_o] ]]; then builtin shopt -s "$__rh_o"; else builtin shopt -u "$__rh_o"; fi
    done <"$__rh_cell"
} 2>/dev/null

# Sets __rh_d to the length in bytes of the caller's __rh_s (the locale is local to here).
__rh_blen() {
    __rh_d=${#__rh_s}
    # Characters are bytes in ASCII; switching the locale costs more than this test.
    [[ $__rh_s == *[![:ascii:]]* ]] || return 0
    local LC_ALL=C
    __rh_d=${#__rh_s}
}

# Captures the shell's state as a script that rebuilds it in a fresh driver, and sends it as a
# "snapshot" event of execution $1 when it differs from the last one sent (the host takes a run
# without one as a run that changed nothing). Builtins only, into the cell file (tmpfs): no
# fork. Sourced at top level like a cell, the script's declare lines make globals again.
# Options come first (extglob and friends change how function bodies parse) and the user's
# set -e/-u/... flags last, so the script itself runs under the driver's.
__rh_snap() {
    (( __rh_snapmax )) || return 0
    local __rh_x= __rh_s __rh_jobs __rh_lost= __rh_n __rh_fl __rh_xt= __rh_end='# end of snapshot'
    local -a __rh_v=() __rh_fn=() __rh_a=()
    # Under a file size limit (RLIMIT_FSIZE) a capture past it would end the shell with
    # SIGXFSZ: the signal is ignored while capturing (the user's disposition is put back, in
    # the shell and in the snapshot), and a capture cut short lacks its last line.
    builtin ulimit -f >|"$__rh_cell"
    IFS= builtin read -r __rh_fl <"$__rh_cell"
    if [[ $__rh_fl != unlimited ]]; then
        builtin trap -p XFSZ >|"$__rh_cell"
        IFS= builtin read -r -d '' __rh_xt <"$__rh_cell"
        __rh_xt=${__rh_xt:-builtin trap - XFSZ}
        builtin trap '' XFSZ
    fi
    builtin shopt -q extglob || { __rh_x=1; builtin shopt -s extglob; }
    builtin compgen -v -X "$__rh_snapx" >|"$__rh_cell"
    builtin mapfile -t __rh_v <"$__rh_cell"
    builtin compgen -A function -X '@(__rh_*|exit|display)' >|"$__rh_cell"
    builtin mapfile -t __rh_fn <"$__rh_cell"
    [[ $__rh_x ]] && builtin shopt -u extglob
    {
        builtin printf '\\__rh_setopts %q %q\nbuiltin cd -- %q\n' "$SHELLOPTS" "$BASHOPTS" "$PWD"
        (( ${#__rh_v[@]} )) && builtin declare -p -- "${__rh_v[@]}"
        if (( ${#__rh_fn[@]} )); then
            builtin declare -f -- "${__rh_fn[@]}"
            # Export and read-only attributes of functions are not in their definitions
            # (a plain `declare -f NAME` prints the function, hence the redirection).
            builtin printf '{\n'
            builtin declare -pF -- "${__rh_fn[@]}"
            builtin printf '} >/dev/null\n'
        fi
        builtin alias -p
        builtin umask -p
        builtin trap -p
        [[ $__rh_xt ]] && builtin printf '%s\n' "$__rh_xt"
        builtin printf '%s\n' "${__rh_ut:-builtin trap - INT}" "builtin set +aeEuvxTf"
        [[ ${__rh_uo//[!aeEuvxTf]/} ]] && builtin printf 'builtin set -%s\n' "${__rh_uo//[!aeEuvxTf]/}"
        builtin jobs -p
        builtin printf '%s\n' "$__rh_end"
    } >|"$__rh_cell" 2>/dev/null
    [[ $__rh_xt ]] && builtin eval "$__rh_xt"
    builtin mapfile -d '' __rh_a <"$__rh_cell"
    __rh_s=${__rh_a[0]-}
    if [[ $__rh_s != *"$__rh_end"$'\n' ]]; then
        [[ $__rh_snapl == "$__rh_end" ]] && return 0
        __rh_snapl=$__rh_end
        __rh_send "{\"type\":\"snapshot\",\"id\":$1,\"format\":\"bash-source\",\"error\":\"the shell's state does not fit the worker's file size limit ($__rh_fl KiB)\",\"lost\":[]}"
        return 0
    fi
    __rh_s=${__rh_s%"$__rh_end"$'\n'}
    # Background jobs are processes, not state: the pids at the end say how many are lost.
    __rh_jobs=${__rh_s##*builtin set +aeEuvxTf$'\n'}
    __rh_jobs=${__rh_jobs#builtin set -*$'\n'}
    [[ $__rh_s == "$__rh_snapl" ]] && return 0
    __rh_snapl=$__rh_s
    __rh_s=${__rh_s:0:${#__rh_s}-${#__rh_jobs}}
    if [[ $__rh_jobs ]]; then
        __rh_n=${__rh_jobs//[!$'\n']/}
        __rh_lost="\"${#__rh_n} background job(s): processes are not kept\""
    fi
    __rh_blen
    if (( __rh_d > __rh_snapmax )); then
        __rh_send "{\"type\":\"snapshot\",\"id\":$1,\"format\":\"bash-source\",\"error\":\"the shell's state is larger than the snapshot bound of $__rh_snapmax bytes\",\"lost\":[$__rh_lost]}"
        return 0
    fi
    __rh_js "$__rh_s"
    __rh_send "{\"type\":\"snapshot\",\"id\":$1,\"format\":\"bash-source\",\"data\":$__rh_e,\"lost\":[$__rh_lost]}"
}

# Sends what display() spooled during the cell, after everything the cell printed so far. A line
# cut short (display killed mid-write) is not a whole bundle and is dropped.
__rh_shown() {
    [[ -s $__rh_spool ]] || return 0
    local -a shown=()
    local bundle id
    builtin mapfile -t shown <"$__rh_spool"
    : >"$__rh_spool"
    __rh_mark
    __rh_js "$__rh_busy"
    id=$__rh_e
    for bundle in "${shown[@]}"; do
        [[ $bundle == '{"'[a-z]*/*'":"'*'"}' ]] || continue
        __rh_send "{\"type\":\"display\",\"id\":$id,\"data\":$bundle,\"metadata\":{},\"mark\":$__rh_seq}"
    done
}

# display MIME-TYPE [FILE] shows FILE (default: standard input) as rich output: text for the
# text types and SVG, bytes for PNG and JPEG. The displays of a cell follow all of its output.
display() {
    local mime=${1-} file=${2--} data
    if (( $# < 1 || $# > 2 )); then
        builtin printf 'display: usage: display MIME-TYPE [FILE]\n' >&2
        return 2
    fi
    case $mime in
    image/png | image/jpeg)
        data=$(command base64 -w 0 -- "$file") || return 1
        data=\"$data\" ;;
    text/plain | text/html | text/markdown | text/latex | image/svg+xml)
        data=$(command cat -- "$file") || return 1
        __rh_js "$data"
        data=$__rh_e ;;
    *)
        builtin printf 'display: cannot show %s: the types are text/plain, text/html, text/markdown, text/latex, image/svg+xml, image/png and image/jpeg\n' "$mime" >&2
        return 2 ;;
    esac
    [[ $__rh_busy ]] || return 0
    builtin printf '{"%s":%s}\n' "$mime" "$data" >>"$__rh_spool"
}

# Reads the requests that arrived while a cell ran (only interrupts can, the host waits for done
# before sending anything else), waiting up to $1 seconds for the first one.
__rh_drain() {
    local wait=$1
    while :; do
        if [[ $wait == 0 ]]; then
            builtin read -t 0 <&60 && __rh_read || return
        else
            __rh_read "$wait" || return
        fi
        if __rh_parse "$__rh_f" && [[ ${__rh_J[.type]-} == interrupt ]]; then
            [[ ${__rh_J[.target]-} == "$__rh_busy" ]] && __rh_intr=1
        else
            __rh_q+=("$__rh_f")
        fi
        wait=0
    done
}

# Completes the word before the cursor: $variables, command names in command position, file
# names elsewhere. Locals carry the __rh_ prefix so compgen does not offer them.
__rh_complete() {
    local LC_ALL=$__rh_u8
    local __rh_code=${__rh_J[.code]-} __rh_cur=${__rh_J[.cursor]-}
    local __rh_delims=$' \t\n;|&()<>=`"\''
    [[ $__rh_cur && $__rh_cur != *[!0-9]* ]] || __rh_cur=${#__rh_code}
    (( __rh_cur > ${#__rh_code} )) && __rh_cur=${#__rh_code}
    local __rh_before=${__rh_code:0:__rh_cur}
    local __rh_word=${__rh_before##*[$__rh_delims]}
    local __rh_pre=${__rh_before:0:${#__rh_before}-${#__rh_word}}
    local -a __rh_found=()
    local __rh_m __rh_c __rh_out='' __rh_sep='' __rh_p __rh_head __rh_quoted=''
    [[ $__rh_pre == *[\"\'] ]] && __rh_quoted=1
    if [[ $__rh_word == '$'* ]]; then
        if [[ $__rh_word == '${'* ]]; then
            __rh_head='${' __rh_p=${__rh_word:2}
        else
            __rh_head='$' __rh_p=${__rh_word:1}
        fi
        if [[ $__rh_p != *[!A-Za-z0-9_]* ]]; then
            builtin mapfile -t __rh_found < <(builtin compgen -v -- "$__rh_p" 2>/dev/null | LC_ALL=C sort -u)
        fi
        for __rh_m in "${__rh_found[@]}"; do
            [[ $__rh_m == __rh_* ]] && continue
            [[ $__rh_head == '${' ]] && __rh_m+='}'
            __rh_js "$__rh_head$__rh_m"
            __rh_out+=$__rh_sep$__rh_e __rh_sep=,
        done
    else
        local __rh_trimmed=${__rh_pre%"${__rh_pre##*[![:space:]]}"} __rh_last __rh_command=''
        __rh_last=${__rh_trimmed##*[[:space:]\;\|\&\(\`\{]}
        if [[ -z $__rh_trimmed || $__rh_trimmed == *[\;\|\&\(\`\{$'\n'] ]]; then
            __rh_command=1
        else
            case $__rh_last in
            then | do | else | elif | if | while | until | time | ! | exec | command | builtin | \
                sudo | nohup | env | xargs | nice | timeout | watch | which | type) __rh_command=1 ;;
            esac
        fi
        if [[ $__rh_command && $__rh_word != */* ]]; then
            builtin mapfile -t __rh_found < <(builtin compgen -c -- "$__rh_word" 2>/dev/null | LC_ALL=C sort -u | head -n 1000)
            for __rh_m in "${__rh_found[@]}"; do
                [[ $__rh_m == __rh_* ]] && continue
                __rh_js "$__rh_m"
                __rh_out+=$__rh_sep$__rh_e __rh_sep=,
            done
        else
            builtin mapfile -t __rh_found < <(builtin compgen -f -- "$__rh_word" 2>/dev/null | LC_ALL=C sort -u | head -n 1000)
            for __rh_m in "${__rh_found[@]}"; do
                [[ -d $__rh_m && $__rh_m != */ ]] && __rh_m+=/
                # Outside quotes a name with shell syntax in it is inserted escaped.
                if [[ ! $__rh_quoted && $__rh_m == *[[:space:]\"\'\\\$\`\!\&\;\|\(\)\<\>\*\?\[\]\{\}]* ]]; then
                    __rh_m=${__rh_m//\\/\\\\}
                    for __rh_c in ' ' $'\t' '"' "'" '$' '`' '!' '&' ';' '|' '(' ')' '<' '>' '*' '?' '[' ']' '{' '}'; do
                        __rh_m=${__rh_m//"$__rh_c"/"\\$__rh_c"}
                    done
                fi
                __rh_js "$__rh_m"
                __rh_out+=$__rh_sep$__rh_e __rh_sep=,
            done
        fi
    fi
    __rh_idjs
    __rh_send "{\"type\":\"complete_reply\",\"id\":$__rh_e,\"matches\":[$__rh_out],\"cursor_start\":$(( __rh_cur - ${#__rh_word} )),\"cursor_end\":$__rh_cur}"
}

# Shortens $1 to at most $2 characters into __rh_d.
__rh_clip() {
    if (( ${#1} > $2 )); then
        __rh_d=${1:0:$2-1}…
    else
        __rh_d=$1
    fi
}

# Lists what the user defined: variables and functions that did not exist when the driver
# started. Locals here carry the __rh_ prefix so compgen does not report them.
__rh_variables() {
    local __rh_max=${__rh_J[.max_repr]-}
    [[ $__rh_max && $__rh_max != *[!0-9]* ]] && (( __rh_max >= 8 )) || __rh_max=120
    local -a __rh_names=() __rh_funcs=()
    builtin mapfile -t __rh_names < <(builtin compgen -v)
    builtin mapfile -t __rh_funcs < <(builtin compgen -A function)
    local __rh_n __rh_t __rh_r __rh_k __rh_out= __rh_sep= __rh_count=0
    for __rh_n in "${__rh_names[@]}"; do
        [[ $__rh_n == __rh_* || -v __rh_basev[$__rh_n] || -v __rh_envk[$__rh_n] ]] && continue
        case $__rh_n in BASH_* | COMP_* | FUNCNAME | OLDPWD | COLUMNS | LINES | _) continue ;; esac
        if [[ -R $__rh_n ]]; then
            __rh_t=nameref __rh_r=${!__rh_n-}
        else
            case ${!__rh_n@a} in
            *A*) __rh_t=assoc ;;
            *a*) __rh_t=array ;;
            *i*) __rh_t=integer ;;
            *) __rh_t=string ;;
            esac
            if [[ $__rh_t == array || $__rh_t == assoc ]]; then
                local -n __rh_ref=$__rh_n
                __rh_r='('
                for __rh_k in "${!__rh_ref[@]}"; do
                    if [[ $__rh_t == assoc ]]; then
                        __rh_r+="[${__rh_k@Q}]=${__rh_ref[$__rh_k]@Q} "
                    else
                        __rh_r+="[$__rh_k]=${__rh_ref[$__rh_k]@Q} "
                    fi
                    (( ${#__rh_r} > __rh_max )) && break
                done
                __rh_r="${__rh_r% })"
                builtin unset -n __rh_ref
            else
                [[ -v $__rh_n ]] || continue
                __rh_r=${!__rh_n}
            fi
        fi
        __rh_clip "$__rh_r" "$__rh_max"
        __rh_js "$__rh_d"
        __rh_r=$__rh_e
        __rh_js "$__rh_n"
        __rh_out+="$__rh_sep{\"name\":$__rh_e,\"type\":\"$__rh_t\",\"repr\":$__rh_r}" __rh_sep=,
        (( ++__rh_count >= 1000 )) && break
    done
    for __rh_n in "${__rh_funcs[@]}"; do
        [[ $__rh_n == __rh_* || -v __rh_basef[$__rh_n] ]] && continue
        (( ++__rh_count >= 1000 )) && break
        __rh_r=$(builtin declare -f -- "$__rh_n")
        __rh_clip "$__rh_r" "$__rh_max"
        __rh_js "$__rh_d"
        __rh_r=$__rh_e
        __rh_js "$__rh_n"
        __rh_out+="$__rh_sep{\"name\":$__rh_e,\"type\":\"function\",\"repr\":$__rh_r}" __rh_sep=,
    done
    __rh_idjs
    __rh_send "{\"type\":\"variables_reply\",\"id\":$__rh_e,\"variables\":[$__rh_out]}"
}

# --- the cell cycle ------------------------------------------------------------------------------

# Exits with status $1. `exit` prints "exit" on stderr in an interactive shell; not here.
__rh_quit() {
    [[ $__rh_cell == /proc/* ]] || command rm -f -- "$__rh_cell"
    builtin trap - EXIT
    builtin exit "$1" 2>/dev/null
}

# EXIT trap: the shell is ending on its own (set -e, builtin exit, a fatal error). The host
# reports the lost worker; this line, which it shows with that report, says why. During a cell
# fd 63 is closed and fd 2 is the best guess.
__rh_exited() {
    local st=$? msg
    builtin printf -v msg 'bash: the shell exited with status %d (set -e, builtin exit or a fatal error); its variables and functions are lost\n' "$st"
    { builtin printf '%s' "$msg" >&63; } 2>/dev/null || builtin printf '%s' "$msg" >&2
}

# Called by the doorbell line: serves requests until an execute is ready, then arms SIGINT,
# announces the run, gives the user their shell options back and returns the previous cell's
# status, which the cell sees as $?.
__rh_next() {
    # PROMPT_COMMAND does not run once a cell turned on line editing (set -o emacs): finish the
    # previous run here instead. $? is still that run's status.
    # Locals here are visible to compgen in the requests served below, hence the prefix.
    local __rh_st=$?
    [[ $__rh_busy ]] && __rh_post "$__rh_st"
    if [[ $__rh_exit ]]; then
        command exec 2>&57 57>&-
        __rh_exit=
    fi
    while :; do
        if (( ${#__rh_q[@]} )); then
            __rh_f=${__rh_q[0]}
            __rh_q=("${__rh_q[@]:1}")
        else
            __rh_read
            case $? in
            1) __rh_quit 0 ;;
            2)
                builtin printf 'bash: replhost driver: broken request frame; giving up\n' >&2
                __rh_quit 2
                ;;
            esac
        fi
        if ! __rh_parse "$__rh_f"; then
            __rh_log error "malformed request frame ignored"
            continue
        fi
        case ${__rh_J[.type]-} in
        execute) __rh_begin && break ;;
        init) __rh_hello ;;
        interrupt | input_reply) ;;
        complete) __rh_complete ;;
        variables) __rh_variables ;;
        shutdown)
            __rh_idjs
            __rh_send "{\"type\":\"shutdown_reply\",\"id\":$__rh_e}"
            __rh_quit 0
            ;;
        *) __rh_reply_error "unknown request type" ;;
        esac
    done
    # The next doorbell is queued before the cell runs, so the shell finds it even when the cell
    # is cut short or PROMPT_COMMAND is skipped.
    builtin printf '%s\n' "$__rh_bell" >&0
    if [[ $__rh_ut ]]; then
        builtin eval "builtin $__rh_ut"
    else
        builtin trap - INT
    fi
    # xtrace comes back inside the cell, or every cell would start with a trace of the driver.
    if [[ $__rh_uo == *x* ]]; then
        builtin printf 'builtin set -x;%s' "$__rh_code" >|"$__rh_cell"
    else
        builtin printf '%s' "$__rh_code" >|"$__rh_cell"
    fi
    __rh_code=
    # A cell that may ask for input keeps copies of the protocol and mark fds that the doorbell
    # line does not close (see `read` below); children of that cell inherit them.
    [[ $__rh_input ]] && command exec 52>&62 53>&63 54<&60 55>&61
    __rh_started
    [[ $__rh_uo == *f* ]] || builtin set +f
    local __rh_on=${__rh_uo//[!aeEuvT]/}
    [[ $__rh_on ]] && builtin set "-$__rh_on"
    return "$__rh_prev"
}

# PROMPT_COMMAND: runs after every command line, so also after a cell abandoned on SIGINT. $1
# is the run's status when not called from PROMPT_COMMAND.
__rh_post() {
    local __rh_st=${1-$?} __rh_ut1='' __rh_opts
    { builtin trap -p INT; builtin printf '\0'; } >&59
    IFS= builtin read -r -d '' __rh_ut1 <&59
    builtin trap '' INT
    __rh_opts=$-
    builtin set +aeEuvxT -f
    # A SIGINT between the lines above and the trap may have left an earlier answer behind.
    while builtin read -t 0 <&59; do
        IFS= builtin read -r -d '' __rh_ut1 <&59
    done
    [[ $__rh_exit ]] || __rh_ut=$__rh_ut1
    __rh_uo=$__rh_opts
    # Job control would move children out of the process group the host signals; line editing
    # and history would echo and record the doorbell line.
    [[ $__rh_opts == *m* ]] && builtin set +m
    if [[ :$SHELLOPTS: == *:@(emacs|vi|history):* ]]; then
        builtin set +o emacs +o vi +o history
    fi
    if [[ $__rh_busy ]]; then
        __rh_drain 0
        if [[ $__rh_exit ]]; then
            __rh_st=$__rh_exit
        elif (( __rh_st == 130 )) && [[ ! $__rh_intr ]]; then
            # SIGINT normally comes with an interrupt request; give it a moment to arrive.
            __rh_drain 0.25
        fi
        __rh_finish "$__rh_st"
    fi
    PS1='' PS2=''
}

# Asks the host for a line (an input_request with prompt $1, password $2) and waits on the copy
# of the request fd for its input_reply: the line in __rh_answer, or status 1 at the end of input.
# SIGINT is ignored while it reads, so that it never abandons the line between a frame's length
# and its body (the rest of the frame would then be read as the next request); the interrupt
# frame, which the host sends before its signal, is the interrupt instead: the cell's own INT
# disposition comes back and the shell signals itself, abandoning the line as a SIGINT does.
__rh_ask() {
    local - TMOUT= __rh_len __rh_f __rh_id __rh_t
    builtin set -f +u
    __rh_t=$(builtin trap -p INT)
    builtin trap '' INT
    __rh_js "$__rh_busy"
    __rh_id=$__rh_e
    __rh_js "$1"
    (( __rh_seq += 1 ))
    builtin printf -v __rh_m '\e]5253;rh;%s;%d\a' "$__rh_nonce" "$__rh_seq"
    builtin printf '%s' "$__rh_m" >&52
    builtin printf '%s' "$__rh_m" >&53
    __rh_f="{\"type\":\"input_request\",\"id\":$__rh_id,\"prompt\":$__rh_e,\"password\":$2,\"mark\":$__rh_seq}"
    builtin printf '%d\n%s' "${#__rh_f}" "$__rh_f" >&55
    while :; do
        IFS= builtin read -r -u 54 __rh_len || break
        [[ $__rh_len && $__rh_len != *[!0-9]* ]] || break
        __rh_f=
        (( __rh_len )) && LC_ALL=C IFS= builtin read -r -u 54 -N "$__rh_len" __rh_f
        __rh_parse "$__rh_f" || continue
        case ${__rh_J[.type]-} in
        input_reply)
            [[ ${__rh_J[.target]-} == "$__rh_busy" ]] || continue
            if [[ $__rh_t ]]; then builtin eval "builtin $__rh_t"; else builtin trap - INT; fi
            [[ ${__rh_J[.eof]-} == true ]] && return 1
            __rh_answer=${__rh_J[.value]-}
            return 0
            ;;
        interrupt)
            [[ ${__rh_J[.target]-} == "$__rh_busy" ]] || continue
            __rh_intr=1
            builtin trap - INT
            builtin kill -INT "$$"
            ;;
        shutdown) __rh_quit 0 ;;
        esac
    done
    if [[ $__rh_t ]]; then builtin eval "builtin $__rh_t"; else builtin trap - INT; fi
    return 1
}

# `read` from the cell's own standard input, in a cell whose client can answer (its execute said
# "input": true): the line is asked for (-p gives the prompt, -s makes it a password) and read from
# the answer. Everywhere else (a redirection, a pipe, -u, a subshell, a cell nobody can answer)
# it is the builtin, which finds the end of /dev/null at once.
read() {
    if [[ ! $__rh_input || $BASHPID != "$$" ]] || ! [[ /dev/stdin -ef /dev/null ]]; then
        builtin read "$@"
        return
    fi
    local __rh_o __rh_pr= __rh_pw=false OPTIND=1 OPTARG
    while getopts ':ersa:d:i:n:N:p:t:u:' __rh_o; do
        case $__rh_o in
        p) __rh_pr=$OPTARG ;;
        s) __rh_pw=true ;;
        u)
            builtin read "$@"
            return
            ;;
        esac
    done
    if ! __rh_ask "$__rh_pr" "$__rh_pw"; then
        builtin read "$@" </dev/null
        return
    fi
    builtin read "$@" <<<"$__rh_answer"
}

exit() {
    local st=$?
    if [[ ! $__rh_busy || $BASHPID != "$$" ]]; then
        builtin exit "$@"
    fi
    if (( $# > 1 )); then
        builtin printf 'bash: exit: too many arguments\n' >&2
        return 1
    fi
    if (( $# == 1 )); then
        local n=${1//[[:space:]]/}
        local digits=${n#[-+]}
        if [[ $digits && $digits != *[!0-9]* ]]; then
            st=$(( 10#$digits ))
            [[ $n == -* ]] && st=$(( -st ))
            st=$(( st & 255 ))
        else
            builtin printf 'bash: exit: %s: numeric argument required\n' "$1" >&2
            st=2
        fi
    fi
    __rh_exit=$st
    __rh_ut=$(builtin trap -p INT)
    builtin trap - INT
    # The shell greets SIGINT with a newline on stderr, right for an interrupt but not for exit:
    # stderr is parked on fd 57 until the next request is read.
    command exec 57>&2 2>/dev/null
    builtin kill -INT "$$"
    # Only reached if the signal could not unwind the shell: carry on as a plain failure.
    command exec 2>&57 57>&-
    __rh_exit=
    return "$st"
}

builtin readonly -f __rh_js __rh_jsu __rh_send __rh_log __rh_mark __rh_read __rh_unesc __rh_parse \
    __rh_idjs __rh_hello __rh_reply_error __rh_validname __rh_env __rh_restore __rh_begin \
    __rh_started __rh_shown __rh_finish __rh_setopts __rh_ask __rh_blen __rh_snap __rh_drain __rh_quit __rh_exited __rh_complete __rh_clip __rh_variables \
    __rh_next __rh_post \
    exit
builtin declare -r PROMPT_COMMAND='{ \__rh_post; } 2>/dev/null' __rh_bell __rh_cell __rh_spool
builtin trap '\__rh_exited' EXIT

# What exists now is the shell's and the driver's own; variables reports only what comes later.
builtin mapfile -t __rh_q < <(builtin compgen -v)
for __rh_d in "${__rh_q[@]}"; do __rh_basev[$__rh_d]=1; done
builtin mapfile -t __rh_q < <(builtin compgen -A function)
for __rh_d in "${__rh_q[@]}"; do __rh_basef[$__rh_d]=1; done
__rh_q=() __rh_d=''
builtin printf '%s\n' "$__rh_bell" >&0
