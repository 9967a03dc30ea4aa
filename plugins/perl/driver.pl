# SPDX-License-Identifier: Apache-2.0
#
# replhost worker driver for Perl 5.22 or newer, core modules only (worker protocol version 1,
# docs/worker-protocol.md).
#
# Why it looks like this:
#
# - A cell is a string eval in package main, so the value of its last statement is the result
#   and named subs, `our` variables and loaded modules simply stay. The eval runs inside a
#   "runner" sub that is *running* at the time: it declares every lexical the earlier cells left
#   behind and aliases each to the value it had (core refaliasing: `\my $x = $ref`). Because the
#   runner is live while the cell compiles, a named sub in the cell closes over the real variable
#   (not the stale copy a REPL that wraps cells in subs gives, the "Variable is not available"
#   trap), and a cell's own `my` variables live in the eval's single pad, so its named subs see
#   them too.
#
# - The end of a cell's compilation is observed, not parsed: the cell's first line stores an
#   object in %^H. When the compiler leaves the cell's top-level scope it frees that hash, and the
#   object's destructor runs while $^H and the cell's lexical pad are still those of the last
#   top-level statement. It records the pragmas (`use strict`, `use feature`, ...) for the next
#   cell and takes references to the top-level `my`/`state` variables (pad entries still in scope
#   there; variables of inner blocks are not) before the cell runs, so when the eval returns Perl
#   leaves those values to us instead of clearing them. Nothing is appended after the user's code:
#   a trailing BEGIN block would put the last statement in void context and lose the result.
#   ${^WARNING_BITS} is already restored by then, so warnings changes are tracked in %^H as they
#   happen (warnings::import/unimport are wrapped; `use v5.35`+ is recognised by its bundle).
#
# - Output is not captured: fd 1 and 2 are the host's pipes, STDOUT is unbuffered, and child
#   processes write to them directly. Sync marks go to duplicates of fd 1/2 taken at startup, each
#   in one syswrite, after STDOUT/STDERR are flushed.
#
# - SIGINT is ignored while idle. While a cell runs, the handler dies with "KeyboardInterrupt"
#   when user code is running and only notes the signal while the driver itself is busy (between
#   two frame writes, say), so a frame is never cut in half. Perl's system() ignores SIGINT in the
#   parent while it waits, so only the child dies and a loop around system() would run on; like
#   Python's and bash's REPLs, a child killed by SIGINT interrupts the cell (a CORE::GLOBAL
#   override; cells using the `system { $prog } @args` form compile without it, since the
#   override cannot parse that syntax).
#
# - `exit` in a cell ends the cell, not the worker, like Python's SystemExit: status 0 is a normal
#   end; any other status is an "Exit" error and the done event carries the status as exit_code.
#   END blocks run when the worker shuts down. CORE::exit, POSIX::_exit, exec and signals still
#   end the worker, and the host reports that (WorkerDied). A child made with fork() that reaches
#   the end of the cell exits there instead of returning into the driver.
#
# - The requests the host sends are ASCII-only JSON and parsed here with a few C-speed regexes
#   (JSON::PP's pure-Perl parser costs about 70 us per request and grows badly with large cells);
#   events are encoded with JSON::PP.

# The pragmas a fresh Perl file starts with; the first cell starts from these.
BEGIN {
    $ReplHost::Driver::INITIAL_H = $^H;
    %ReplHost::Driver::INITIAL_HH = %^H;
    $ReplHost::Driver::INITIAL_W = ${^WARNING_BITS};
    # Idle from the first instruction on.
    $SIG{INT} = 'IGNORE';
}

# Compiles the runner of each cell. Defined before anything else in this file so that no lexical
# of the driver is in scope for the code the runner evaluates.
sub ReplHost::Driver::_compile_clean { eval $_[0] }

package ReplHost::Driver;

use strict;
use warnings;

use B ();
use Cwd ();
use Data::Dumper ();
use Fcntl qw(F_SETFD FD_CLOEXEC);
use IO::Handle ();
use JSON::PP ();
use MIME::Base64 ();
use mro ();
use overload ();
use POSIX ();
use Scalar::Util ();
use Time::HiRes ();

use constant {
    REQ_FD        => 3,
    EVT_FD        => 4,
    PROTOCOL      => 1,
    # The newest addition to protocol 1 this driver uses: input requests.
    REVISION      => 2,
    MAX_FRAME     => 64 << 20,
    # Events above this are shrunk rather than sent, leaving headroom under the host's limit.
    SHRINK_AT     => (64 << 20) - (1 << 16),
    PADSEQ_INTRO  => 0xFFFFFFFF,
    HINT_LOCALIZE_HH => 0x20000,
    HOOK_KEY      => 'replhost/cell',
    WARN_KEY      => 'replhost/warnings',
    RUNNER_FILE   => '<replhost>',
};

our @DISPLAY_MIMES = ('text/plain', 'text/html', 'text/markdown', 'text/latex', 'image/svg+xml',
                      'image/png', 'image/jpeg', 'application/json');

# --- state shared with the code the runner compiles (package variables: no lexical leaks) -------

our ($INITIAL_H, %INITIAL_HH, $INITIAL_W);
our ($H, %HH, $W);     # pragmas for the next cell
$H = $INITIAL_H;
%HH = %INITIAL_HH;
$W = $INITIAL_W;
our %LEX;        # '$x' => {ref => \$x} | {our => 'Package'}: lexicals the next cell sees
our $SRC;        # the cell being compiled
our @R;          # its values
our $ERR;        # its $@
our $IN_USER = 0;       # user code (not the driver) is running: SIGINT may die
our $EXECUTING = 0;     # an execute request is being served
our $PENDING = 0;       # SIGINT arrived while the driver was busy
our $INTERRUPTED = 0;   # SIGINT arrived during this execution
our $INT_WHERE;         # where it hit

my $PID = $$;
my $DRIVER_FILE = __FILE__;
my $JSON = JSON::PP->new->utf8->allow_nonref->allow_blessed->allow_unknown;
my $TRUE = JSON::PP::true();
my $FALSE = JSON::PP::false();
my ($REQ, $EVT, $MARK_OUT, $MARK_ERR);
my $RBUF = '';
my $MARK_PREFIX = '';
my $SEQ = 0;
my $CURRENT_ID;
my $HOST_REVISION = 0;  # what the host's init names
my $INPUT_ALLOWED = 0;  # the running cell's client can answer questions (revision 2)
my $CELL_SERIAL = 0;
my ($RUNNER_KEY, $RUNNER);  # the runner for the current set of lexicals
my ($PENDING_CAPTURE, $COMPILED);
my $DIE_RECORD;
my $USER_INT;           # the user's own $SIG{INT}, put back for every cell
my %STARTUP_GLOBS;      # names in %main:: that are not the user's
my ($SYSTEM_GLOB, $SYSTEM_HIDDEN);

# --- transport ----------------------------------------------------------------------------------

sub _write_all {
    my ($fh, $data) = @_;
    my $off = 0;
    my $len = length $data;
    while ($off < $len) {
        my $n = syswrite($fh, $data, $len - $off, $off);
        if (!defined $n) {
            next if $!{EINTR} || $!{EAGAIN};
            # Nobody reads our events any more: the host is gone.
            POSIX::_exit(1);
        }
        $off += $n;
    }
}

# Character string from a Perl value that may hold UTF-8 bytes (a literal in a cell without
# `use utf8`, output of a program): valid UTF-8 is decoded, anything else is taken as Latin-1.
sub _text {
    my $s = shift;
    return '' unless defined $s;
    $s = "$s";
    utf8::decode($s) unless utf8::is_utf8($s);
    return $s;
}

sub _shrink {
    my ($v, $limit) = @_;
    if (ref $v eq 'HASH') {
        my %h = %$v;
        %h = ('text/plain' => $h{'text/plain'}) if exists $h{'text/plain'} && keys %h > 1;
        $h{$_} = _shrink($h{$_}, $limit) for keys %h;
        return \%h;
    }
    if (ref $v eq 'ARRAY') {
        my @a = @$v > 10000 ? @$v[0 .. 9999] : @$v;
        return [map { _shrink($_, $limit) } @a];
    }
    if (defined $v && !ref $v && length($v) > $limit) {
        return substr($v, 0, $limit) . "\n[truncated by replhost: " . length($v) . " characters]";
    }
    return $v;
}

sub _send {
    my $ev = shift;
    return if $$ != $PID;
    my $payload = eval { $JSON->encode($ev) };
    $payload = $JSON->encode({type => 'log', level => 'error',
                              message => "cannot encode event: $@"}) unless defined $payload;
    if (length($payload) > SHRINK_AT) {
        my $size = length $payload;
        $payload = $JSON->encode(_shrink($ev, 1 << 20));
        $payload = $JSON->encode(_shrink($ev, 1 << 10)) if length($payload) > SHRINK_AT;
        _send({type => 'log', level => 'warning', message => "$ev->{type} event of $size bytes "
            . 'exceeds the frame limit; sent without rich data and with long texts cut'});
    }
    _write_all($EVT, length($payload) . "\n" . $payload);
}

sub _flush_user {
    no strict 'refs';
    my $selected = select;
    my @handles = (\*STDOUT, \*STDERR);
    push @handles, ref $selected ? $selected : \*{$selected} if defined $selected;
    for my $fh (@handles) {
        IO::Handle::flush($fh) if defined fileno($fh);
    }
}

sub _write_mark {
    _flush_user();
    # Numbered before writing: if one stream got it and the other did not, the next mark still
    # supersedes it on both.
    my $mark = $MARK_PREFIX . ++$SEQ . "\a";
    syswrite($MARK_OUT, $mark);
    syswrite($MARK_ERR, $mark);
    return $SEQ;
}

# Sends an event, with a sync mark first when asked. SIGINT only notes itself meanwhile; a
# signal that arrived while user code ran and the driver was busy is raised once it is done.
sub _emit {
    my ($ev, $mark) = @_;
    # A child made with fork() in a cell shares fd 1, 2 and 4 but not our sequence of marks.
    return if $$ != $PID;
    my $was = $IN_USER;
    {
        local $IN_USER = 0;
        $ev->{mark} = _write_mark() if $mark;
        _send($ev);
    }
    if ($was && $PENDING) {
        $PENDING = 0;
        die "KeyboardInterrupt\n";
    }
}

sub _log {
    my ($level, $message) = @_;
    _send({type => 'log', level => $level, message => _text($message)});
}

sub _fatal {
    _log('error', $_[0]);
    _flush_user();
    POSIX::_exit(2);
}

sub _sysread_more {
    while (1) {
        my $n = sysread($REQ, $RBUF, 1 << 16, length $RBUF);
        return $n if defined $n;
        next if $!{EINTR};
        die "cannot read requests: $!\n";
    }
}

# Next request object, or undef at a clean end of input. Malformed input is fatal.
sub _read_frame {
    my $nl;
    while (($nl = index($RBUF, "\n")) < 0) {
        _fatal('malformed frame header') if length($RBUF) > 11;
        if (!_sysread_more()) {
            return undef if $RBUF eq '';
            _fatal('end of input inside a frame header');
        }
    }
    my $header = substr($RBUF, 0, $nl);
    _fatal('malformed frame header "' . substr($header, 0, 32) . '"')
        unless $header =~ /\A[0-9]{1,10}\z/;
    my $length = $header + 0;
    _fatal("frame of $length bytes exceeds the limit") if $length > MAX_FRAME;
    my $end = $nl + 1 + $length;
    while (length($RBUF) < $end) {
        _fatal('end of input inside a frame') unless _sysread_more();
    }
    my $payload = substr($RBUF, $nl + 1, $length);
    substr($RBUF, 0, $end, '');
    my $req = eval { _decode_json($payload) };
    _fatal("frame is not valid JSON: $@") if $@;
    _fatal('frame is not a request object')
        unless ref $req eq 'HASH' && defined $req->{type} && !ref $req->{type};
    return $req;
}

# --- JSON in ------------------------------------------------------------------------------------

my %JSON_ESCAPES = ('"' => '"', '\\' => '\\', '/' => '/', b => "\b", f => "\f", n => "\n",
                    r => "\r", t => "\t");

sub _decode_json {
    my $s = shift;
    utf8::decode($s);
    pos($s) = 0;
    my $v = _json_value(\$s);
    $s =~ /\G[ \t\r\n]*/gc;
    die "unexpected data after the value\n" if pos($s) != length $s;
    return $v;
}

sub _json_string {
    my $r = shift;
    my $start = pos($$r);
    my $at = $start;
    my $end;
    while (1) {
        $end = index($$r, '"', $at);
        die "unterminated string\n" if $end < 0;
        my $bs = 0;
        $bs++ while $end - $bs - 1 >= $start && substr($$r, $end - $bs - 1, 1) eq '\\';
        last unless $bs % 2;
        $at = $end + 1;
    }
    my $raw = substr($$r, $start, $end - $start);
    pos($$r) = $end + 1;
    die "control character in a string\n" if $raw =~ /[\x00-\x1f]/;
    return $raw if index($raw, '\\') < 0;
    no warnings qw(utf8 surrogate nonchar);
    $raw =~ s{\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt])|(.))}{
        defined $1 ? chr(hex $1) : defined $2 ? $JSON_ESCAPES{$2} : die "bad escape\n"
    }gse;
    $raw =~ s/([\x{D800}-\x{DBFF}])([\x{DC00}-\x{DFFF}])/
        chr(0x10000 + ((ord($1) - 0xD800) << 10) + (ord($2) - 0xDC00))/ge;
    return $raw;
}

sub _json_value {
    my $r = shift;
    $$r =~ /\G[ \t\r\n]*/gc;
    if ($$r =~ /\G"/gc) {
        return _json_string($r);
    }
    if ($$r =~ /\G\{/gc) {
        my %h;
        $$r =~ /\G[ \t\r\n]*/gc;
        return \%h if $$r =~ /\G\}/gc;
        while (1) {
            $$r =~ /\G[ \t\r\n]*"/gc or die "expected a key\n";
            my $k = _json_string($r);
            $$r =~ /\G[ \t\r\n]*:/gc or die "expected ':'\n";
            $h{$k} = _json_value($r);
            $$r =~ /\G[ \t\r\n]*/gc;
            next if $$r =~ /\G,/gc;
            return \%h if $$r =~ /\G\}/gc;
            die "expected ',' or '}'\n";
        }
    }
    if ($$r =~ /\G\[/gc) {
        my @a;
        $$r =~ /\G[ \t\r\n]*/gc;
        return \@a if $$r =~ /\G\]/gc;
        while (1) {
            push @a, _json_value($r);
            $$r =~ /\G[ \t\r\n]*/gc;
            next if $$r =~ /\G,/gc;
            return \@a if $$r =~ /\G\]/gc;
            die "expected ',' or ']'\n";
        }
    }
    return 0 + $1 if $$r =~ /\G(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)/gc;
    return $TRUE if $$r =~ /\Gtrue/gc;
    return $FALSE if $$r =~ /\Gfalse/gc;
    return undef if $$r =~ /\Gnull/gc;
    die "unexpected character at offset " . (pos($$r) // 0) . "\n";
}

# --- signals ------------------------------------------------------------------------------------

sub _on_sigint {
    $INTERRUPTED = 1;
    if ($IN_USER) {
        my (undef, $file, $line) = caller(0);
        $INT_WHERE = "$file line $line" if defined $file && $file ne $DRIVER_FILE;
        die "KeyboardInterrupt\n";
    }
    $PENDING = 1;
}

sub _is_our_sigint { my $h = $SIG{INT}; return ref $h eq 'CODE' && $h == \&_on_sigint }

sub _arm {
    $INTERRUPTED = $PENDING = 0;
    $INT_WHERE = undef;
    $SIG{INT} = defined $USER_INT ? $USER_INT : \&_on_sigint;
}

sub _disarm {
    my $h = $SIG{INT};
    # A handler sub the user installed during the cell stays theirs for later cells, as in a
    # script. DEFAULT, IGNORE or deleting it gives interrupts back to the driver: a worker that
    # SIGINT kills or cannot stop would only lose its state to the host's SIGKILL.
    $USER_INT = ref $h eq 'CODE' && !_is_our_sigint() ? $h : undef;
    # Pending signals are dispatched with the old handler right here; it only notes them.
    $IN_USER = 0;
    $SIG{INT} = 'IGNORE';
}

# --- input ------------------------------------------------------------------------------------------

# A cell whose client can answer (its execute said "input": true) reads STDIN through this tie:
# each line it reads is asked for with an input_request and read from the input_reply on fd 3.
# Without one STDIN stays the worker's /dev/null, where reading finds the end at once.

sub _ask {
    my ($prompt, $password) = @_;
    _emit({type => 'input_request', id => $CURRENT_ID, prompt => _text($prompt),
           password => $password ? $TRUE : $FALSE}, 1);
    while (1) {
        my $req = _read_frame();
        _shutdown(undef) unless $req;
        my $type = $req->{type};
        if ($type eq 'input_reply' && defined $req->{target} && $req->{target} eq $CURRENT_ID) {
            return undef if $req->{eof};
            my $value = $req->{value};
            return defined $value && !ref $value ? $value : '';
        }
        if ($type eq 'interrupt') {
            # Its SIGINT follows the frame at once and dies in the sleep; should the cell's own
            # handler take it, the frame still ends the wait.
            Time::HiRes::sleep(1);
            $INTERRUPTED = 1;
            die "KeyboardInterrupt\n";
        }
        _shutdown($req) if $type eq 'shutdown';
    }
}

sub _tie_stdin {
    return unless $INPUT_ALLOWED;
    tie *STDIN, 'ReplHost::Driver::Stdin';
}

sub _untie_stdin {
    untie *STDIN if tied *STDIN && ref(tied *STDIN) eq 'ReplHost::Driver::Stdin';
}

# --- rich output ----------------------------------------------------------------------------------

sub _looks_base64 {
    my $s = shift;
    return 0 if $s =~ /[^A-Za-z0-9+\/=\s]/;
    (my $t = $s) =~ s/\s+//g;
    return length($t) % 4 == 0 && length($t) > 0;
}

sub _mime_value {
    my ($mime, $v) = @_;
    return undef unless defined $v;
    if ($mime eq 'application/json' || $mime =~ /\+json\z/) {
        return $v if ref $v;
        my $decoded = eval { JSON::PP->new->allow_nonref->decode(_text($v)) };
        return $@ ? _text($v) : $decoded;
    }
    if ($mime =~ m{\Atext/} || $mime eq 'image/svg+xml') {
        return _text($v);
    }
    # Binary: raw bytes are encoded here; a string that already is base64 is passed on.
    my $bytes = "$v";
    return $bytes =~ s/\s+//gr if _looks_base64($bytes);
    utf8::encode($bytes) if utf8::is_utf8($bytes);
    return MIME::Base64::encode_base64($bytes, '');
}

sub _png_size {
    my $bytes = shift;
    return unless length($bytes) >= 24 && substr($bytes, 0, 8) eq "\x89PNG\r\n\x1a\n";
    return unpack('N N', substr($bytes, 16, 8));
}

# display($mime => $data, ...) or display(\%bundle [, \%metadata]): rich output (an image, HTML)
# in the cell's output, in order with what the cell prints. Binary data may be raw bytes or
# base64.
sub display {
    my ($data, $metadata);
    if (@_ && ref $_[0] eq 'HASH') {
        ($data, $metadata) = @_;
    } elsif (@_ >= 2 && @_ % 2 == 0) {
        $data = {@_};
    } else {
        die "usage: display(\$mime => \$data, ...) or display(\\%bundle, \\%metadata)\n";
    }
    my (%bundle, %md);
    for my $mime (sort keys %$data) {
        my $v = _mime_value($mime, $data->{$mime});
        next unless defined $v;
        $bundle{$mime} = $v;
        if ($mime eq 'image/png' && !ref $data->{$mime}) {
            my $raw = $data->{$mime};
            $raw = MIME::Base64::decode_base64($raw) if _looks_base64($raw);
            my ($w, $h) = _png_size($raw);
            $md{'image/png'} = {width => $w, height => $h} if defined $w;
        }
    }
    die "display: no data to show\n" unless %bundle;
    %md = (%md, %$metadata) if ref $metadata eq 'HASH';
    _emit({type => 'display', id => $CURRENT_ID, data => \%bundle, metadata => \%md}, 1);
    return;
}

# --- rendering values ---------------------------------------------------------------------------

sub _dumper {
    my ($v, $indent) = @_;
    local $Data::Dumper::Terse = 1;
    local $Data::Dumper::Indent = $indent;
    local $Data::Dumper::Sortkeys = 1;
    local $Data::Dumper::Useqq = 0;
    local $Data::Dumper::Quotekeys = 0;
    local $Data::Dumper::Trailingcomma = 0;
    my $s = Data::Dumper::Dumper($v);
    $s =~ s/\n\z//;
    return $s;
}

sub _render {
    my @v = @_;
    if (@v == 1) {
        my $v = $v[0];
        return ref $v ? _dumper($v, 1) : defined $v ? "$v" : 'undef';
    }
    my $line = '(' . join(', ', map { _dumper($_, 0) } @v) . ')';
    return $line if length($line) <= 100 && index($line, "\n") < 0;
    my $s = _dumper(\@v, 1);
    $s =~ s/\A\[/(/;
    $s =~ s/\]\z/)/;
    return $s;
}

sub _bundle {
    my @v = @_;
    my (%data, %md);
    if (@v == 1 && Scalar::Util::blessed($v[0]) && $v[0]->can('iperl_data_representations')) {
        # The convention of Devel::IPerl: an object offers its own MIME bundle.
        my $reps = $v[0]->iperl_data_representations;
        if (ref $reps eq 'HASH') {
            for my $mime (keys %$reps) {
                my $x = _mime_value($mime, $reps->{$mime});
                $data{$mime} = $x if defined $x;
            }
        }
    }
    $data{'text/plain'} = _text(_render(@v)) unless defined $data{'text/plain'};
    return (\%data, \%md);
}

# Whether the cell's last statement is one whose value nobody wants to see (print returns 1, a
# loop returns '' or 0) or has no value of its own at run time (use, sub, package: the value
# would be that of the statement before). A heuristic over the text; when unsure it shows.
my %QUIET_WORDS = map { $_ => 1 } 'sub NAME', qw(print printf say use no package for foreach
                                                  while until require format BEGIN END INIT CHECK
                                                  UNITCHECK);

sub _first_word {
    my $text = shift;
    $text =~ s/\A\s+//;
    $text =~ s/\A[A-Za-z_]\w*:(?!:)\s*//;    # a loop label
    return $text =~ /\A(sub\s+[A-Za-z_]|[A-Za-z_]\w*|\{)/ ? $1 : '';
}

my %BLOCK_STATEMENT = map { $_ => 1 } qw(if unless while until for foreach package BEGIN END INIT
                                          CHECK UNITCHECK {);

sub _quiet_tail {
    my $s = shift;
    no warnings;
    $s =~ s/^=[a-zA-Z].*?(?:^=cut\b[^\n]*(?:\n|\z)|\z)//msg;
    my ($depth, $start, $block_start) = (0, 0, 0);
    my $len = length $s;
    pos($s) = 0;
    while (pos($s) < $len) {
        next if $s =~ /\G[^'"#{}()\[\];]+/gc;
        my $at = pos($s);
        my $c = substr($s, $at, 1);
        if ($c eq '"' || $c eq "'") {
            # Skip the string: the next quote that is not escaped (plain index calls, as a
            # regex for this hits the engine's recursion limit on long strings).
            my $from = $at + 1;
            my $end = $len;
            while (1) {
                my $q = index($s, $c, $from);
                last if $q < 0;
                my $bs = 0;
                $bs++ while $q - $bs - 1 > $at && substr($s, $q - $bs - 1, 1) eq '\\';
                if ($bs % 2) { $from = $q + 1; next }
                $end = $q + 1;
                last;
            }
            pos($s) = $end;
            next;
        }
        if ($c eq '#') {
            # A comment, unless it is part of $#array or a quote-like delimiter.
            my $prev = $at > 0 ? substr($s, $at - 1, 1) : "\n";
            if ($prev =~ /[\s;{}()]/) {
                my $nl = index($s, "\n", $at);
                pos($s) = $nl < 0 ? $len : $nl;
            } else {
                pos($s) = $at + 1;
            }
            next;
        }
        pos($s) = $at + 1;
        if ($c eq ';') {
            $start = $at + 1 if $depth == 0;
        } elsif ($c eq '{' || $c eq '(' || $c eq '[') {
            $depth++;
        } else {
            $depth-- if $depth > 0;
            # The closing brace of a block statement (sub NAME {...}, if (...) {...}, a bare
            # block) ends the statement, unless an else or continue goes on with it.
            if ($depth == 0 && $c eq '}') {
                my $word = _first_word(substr($s, $start, $at + 1 - $start));
                if (($BLOCK_STATEMENT{$word} || $word =~ /\Asub\s/)
                    && substr($s, $at + 1, 200) !~ /\A\s*(?:else|elsif|continue)\b/) {
                    ($block_start, $start) = ($start, $at + 1);
                }
            }
        }
    }
    my $last = substr($s, $start);
    $last =~ s/#[^\n]*//g;
    # Nothing after the last block statement: that statement is the last one.
    $start = $block_start if $last !~ /[^\s;]/;
    my $word = _first_word(substr($s, $start, 200));
    $word = 'sub NAME' if $word =~ /\Asub\s/;
    return $QUIET_WORDS{$word} ? 1 : 0;
}

# --- errors ---------------------------------------------------------------------------------------

sub _short_arg {
    my $a = shift;
    return 'undef' unless defined $a;
    return "$a" if ref $a;
    return $a if $a =~ /\A-?(?:0|[1-9][0-9]{0,15})(?:\.[0-9]+)?\z/;
    my $s = length($a) > 40 ? substr($a, 0, 37) . '...' : $a;
    $s =~ s/([\\'])/\\$1/g;
    $s =~ s/([\x00-\x1f])/sprintf('\\x%02x', ord $1)/ge;
    return "'$s'";
}

sub _is_driver_file { my $f = shift; return $f eq $DRIVER_FILE || $f eq RUNNER_FILE }

# $SIG{__DIE__} while a cell runs: remembers the call stack of the exception, the user's frames
# only, for the error's traceback.
sub _on_die {
    my $err = $_[0];
    local $IN_USER = 0;
    my @frames;
    my $started = 0;
    for (my $i = 1; $i < 100; $i++) {
        my @c;
        {
            package DB;
            @c = caller($i);
        }
        last unless @c;
        my ($file, $line, $sub, $hasargs) = @c[1, 2, 3, 4];
        if (_is_driver_file($file)) {
            last if $started;
            next;
        }
        # The driver's own subs (the system() wrapper) are plumbing, not the user's frames.
        next if $sub =~ /\AReplHost::Driver::/;
        $started = 1;
        my $call = $sub;
        if ($sub eq '(eval)') {
            $call = defined $c[6] ? 'eval \'...\'' : 'eval {...}';
        } elsif ($hasargs) {
            my @args = @DB::args;
            my $more = @args > 8 ? ', ...' : '';
            splice(@args, 8) if @args > 8;
            $call .= '(' . join(', ', map { _short_arg($_) } @args) . $more . ')';
        } else {
            $call .= '()' unless $sub =~ /\(/;
        }
        push @frames, "\t$call called at $file line $line";
    }
    $DIE_RECORD = {err => $err, frames => \@frames};
    return;
}

sub _same_error {
    my ($a, $b) = @_;
    return 0 unless defined $a && defined $b;
    return ref $a && ref $b ? Scalar::Util::refaddr($a) == Scalar::Util::refaddr($b)
         : !ref $a && !ref $b && $a eq $b;
}

sub _message_lines {
    my $text = _text(shift);
    $text =~ s/\n+\z//;
    return split /\n/, $text;
}

sub _error_event {
    my ($ename, $evalue, $traceback) = @_;
    return {type => 'error', id => $CURRENT_ID, ename => $ename, evalue => _text($evalue),
            traceback => $traceback};
}

# The error event for a cell's exception.
sub _describe_error {
    my ($err, $compiled) = @_;
    my $record = $DIE_RECORD && defined $DIE_RECORD->{err}
        && _same_error($DIE_RECORD->{err}, $err) ? $DIE_RECORD : undef;
    my @frames = $record ? @{$record->{frames}} : ();
    if (ref $err && Scalar::Util::blessed($err)) {
        # An exception class that does not say how to print itself is shown with its fields.
        my $text = overload::Method($err, '""') ? eval { "$err" } // ref $err : _dumper($err, 0);
        my @lines = _message_lines($text);
        return _error_event(ref $err, join("\n", @lines), [@lines, @frames]);
    }
    if (ref $err) {
        my $text = _dumper($err, 0);
        return _error_event('Error', $text, [$text, @frames]);
    }
    my @lines = _message_lines($err);
    my $ename = 'Error';
    if (!$compiled) {
        $ename = $err =~ /\bsyntax error\b/ ? 'SyntaxError' : 'CompileError';
        @frames = ();
    }
    return _error_event($ename, join("\n", @lines), [@lines, @frames]);
}

# --- cells --------------------------------------------------------------------------------------

# Called from the BEGIN block that opens every cell, while the cell compiles.
sub _begin {
    my ($probe) = @_;
    local $IN_USER = 0;
    $^H = $H;
    %^H = %HH;
    ${^WARNING_BITS} = $W;
    # The compiling eval is the scope around this BEGIN block's sub.
    my $evalcv = B::svref_2object($probe)->OUTSIDE->OUTSIDE;
    $^H |= HINT_LOCALIZE_HH;
    _note_warnings();
    $^H{+HOOK_KEY} = bless {cv => $evalcv}, 'ReplHost::Driver::CompileEnd';
    return;
}

# Remembers the compile-time warnings of the current scope in %^H, so they are scoped like it.
sub _note_warnings {
    $^H |= HINT_LOCALIZE_HH;
    my $bits = ${^WARNING_BITS};
    $^H{+WARN_KEY} = (($^H >> 26) & 0xF) . ':' . (defined $bits ? unpack('H*', $bits) : '-');
}

# The compiler has left the cell's top level (see the top of this file).
sub _compile_end {
    my ($hook, $hints_hash) = @_;
    local $IN_USER = 0;
    my %hh = %{$hints_hash || {}};
    my $record = delete $hh{+WARN_KEY};
    delete $hh{+HOOK_KEY};
    my $h = $^H;
    my $w = $W;
    if (defined $record && $record =~ /\A(\d+):([0-9a-f]*|-)\z/) {
        my ($bundle, $hex) = ($1, $2);
        $w = $hex eq '-' ? undef : pack('H*', $hex);
        my $now = ($h >> 26) & 0xF;
        # `use v5.35` or later turns all warnings on in C, without calling warnings::import.
        $w = $warnings::Bits{all} if $] >= 5.035 && $now != $bundle && $now >= 6 && $now != 15;
    }
    my %lex;
    my $ok = eval {
        my ($names, $pad) = $hook->{cv}->PADLIST->ARRAY;
        my @names = $names->ARRAY;
        my @values = $pad->ARRAY;
        for my $i (1 .. $#names) {
            my $pn = $names[$i];
            next unless $pn && $pn->can('FLAGS');
            my $name = $pn->PVX;
            next unless defined $name && $name =~ /\A[\$\@\%][A-Za-z_][A-Za-z_0-9]*\z/;
            my $flags = $pn->FLAGS;
            next if $flags & B::PADNAMEt_OUTER;
            # Still in scope at the end of the top level: declared there, not in a block.
            next unless $pn->COP_SEQ_RANGE_HIGH == PADSEQ_INTRO
                && $pn->COP_SEQ_RANGE_LOW != PADSEQ_INTRO;
            if ($flags & B::PADNAMEt_OUR) {
                my $stash = $pn->OURSTASH;
                $lex{$name} = {our => $stash->can('NAME') ? $stash->NAME : 'main'};
            } else {
                $lex{$name} = {ref => $values[$i]->object_2svref};
            }
        }
        1;
    };
    _log('warning', "cannot capture the cell's lexical variables: $@") unless $ok;
    $PENDING_CAPTURE = {h => $h, hh => \%hh, w => $w, lex => \%lex};
    _restore_system();
}

# The cell's first statement at run time: the compilation succeeded.
sub _go {
    my $was = $IN_USER;
    {
        local $IN_USER = 0;
        $COMPILED = 1;
        _restore_system();
        if (my $c = $PENDING_CAPTURE) {
            $PENDING_CAPTURE = undef;
            ($H, %HH) = ($c->{h}, %{$c->{hh}});
            $W = $c->{w};
            @LEX{keys %{$c->{lex}}} = values %{$c->{lex}};
        }
    }
    if ($was && $PENDING) {
        $PENDING = 0;
        die "KeyboardInterrupt\n";
    }
    # Nothing, so that an empty cell has no value.
    return;
}

sub _hide_system {
    return if $SYSTEM_HIDDEN || !$SYSTEM_GLOB;
    delete $CORE::GLOBAL::{system};
    $SYSTEM_HIDDEN = 1;
}

sub _restore_system {
    return unless $SYSTEM_HIDDEN;
    $CORE::GLOBAL::{system} = $SYSTEM_GLOB;
    $SYSTEM_HIDDEN = 0;
}

# The sub that evaluates a cell with the earlier cells' lexicals in scope. One per set of names.
sub _runner {
    my @names = sort keys %LEX;
    my (@decl, @key);
    for my $name (@names) {
        my $e = $LEX{$name};
        if (exists $e->{our}) {
            my $pkg = $e->{our};
            next unless $pkg =~ /\A[A-Za-z_][\w:]*\z/;
            push @decl, $pkg eq 'main' ? "our $name;" : "package $pkg; our $name; package main;";
            push @key, "our $pkg $name";
        } else {
            push @decl, "\\my $name = \$ReplHost::Driver::LEX{'$name'}{ref};";
            push @key, $name;
        }
    }
    my $key = join ' ', @key;
    return $RUNNER if defined $RUNNER_KEY && $RUNNER_KEY eq $key;
    # The set of names only grows, so an older runner is never needed again.
    ($RUNNER_KEY, $RUNNER) = ($key, do {
        my $src = join "\n", '#line 1 "' . RUNNER_FILE . '"',
            "package main; use feature 'refaliasing'; no warnings; sub {", @decl,
            '$ReplHost::Driver::IN_USER = 1;',
            '@ReplHost::Driver::R = eval $ReplHost::Driver::SRC;',
            '$ReplHost::Driver::IN_USER = 0;',
            '$ReplHost::Driver::ERR = $@;', '}';
        my $runner = _compile_clean($src);
        die "cannot build the cell runner: $@" unless ref $runner eq 'CODE';
        $runner;
    });
    return $RUNNER;
}

sub _child_of_fork_exits {
    my $err = shift;
    return if $$ == $PID;
    # A child made with fork() in the cell: it must not return into the driver, which would
    # answer requests meant for the parent.
    if (defined $err && !(Scalar::Util::blessed($err) && $err->isa('ReplHost::Driver::Exit'))) {
        print STDERR (ref $err ? _dumper($err, 0) . "\n" : $err);
    }
    my $status = Scalar::Util::blessed($err) && $err->isa('ReplHost::Driver::Exit')
        ? $err->{status} : defined $err ? 255 : 0;
    _flush_user();
    POSIX::_exit($status & 0xFF);
}

# Runs one cell; returns (status, exit_code).
sub _run_cell {
    my ($code, $count, $started) = @_;
    $CELL_SERIAL++;
    my $file = 'cell-' . (defined $count && $count =~ /\A[0-9]+\z/ ? $count : "x$CELL_SERIAL");
    # __END__ and __DATA__ end a file; in a cell they end the code.
    $code =~ s/^__(?:END|DATA)__\b.*\z//ms;
    my $quiet = _quiet_tail($code);
    my $bytes = $code;
    utf8::encode($bytes);
    $SRC = join "\n", 'package main;BEGIN{ReplHost::Driver::_begin(sub{})}',
        '#line 1 "' . RUNNER_FILE . '"',
        'ReplHost::Driver::_go();',
        qq{#line 1 "$file"}, $bytes;
    ($PENDING_CAPTURE, $COMPILED, $DIE_RECORD, $ERR) = (undef, 0, undef, undef);
    @R = ();

    my $status = 'ok';
    my ($err, @events, $exit_code);
    my $own_die = !defined $SIG{__DIE__};
    $SIG{__DIE__} = \&_on_die if $own_die;
    my $runner = _runner();
    _hide_system() if $code =~ /\bsystem\s*\{/;
    $EXECUTING = 1;
    _tie_stdin();
    # Armed before `started` goes out: the host may signal as soon as it reads it.
    _arm();
    my $ok = eval {
        _emit($started);
        $runner->();
        _child_of_fork_exits($ERR) if $$ != $PID;
        $err = $ERR if defined $ERR && (ref $ERR || $ERR ne '');
        if (!defined $err && @R && !$quiet && !(@R == 1 && !defined $R[0])) {
            local $IN_USER = 1;
            my ($data, $md) = _bundle(@R);
            push @events, {type => 'result', id => $CURRENT_ID, execution_count => $count,
                           data => $data, metadata => $md};
        }
        1;
    };
    if (!$ok) {
        _child_of_fork_exits($@) if $$ != $PID;
        $err = $@ unless defined $err;
    }
    $IN_USER = 0;
    _disarm();
    $EXECUTING = 0;
    _untie_stdin();
    _restore_system();
    @R = ();
    # Perl keeps a "_<file" glob (source lines for a debugger) per file name it compiled, and each
    # cell has a name of its own; code of the cell refers to its file by name, not by this glob.
    delete $main::{"_<$file"};
    $SIG{__DIE__} = undef if $own_die && ref $SIG{__DIE__} eq 'CODE' && $SIG{__DIE__} == \&_on_die;

    if (defined $err) {
        if (Scalar::Util::blessed($err) && $err->isa('ReplHost::Driver::Exit')) {
            $exit_code = $err->{status};
            if ($exit_code != 0) {
                $status = 'error';
                push @events, _error_event('Exit', "exit($exit_code)", ["exit($exit_code)"]);
            }
        } elsif ($INTERRUPTED && !ref $err && $err =~ /\AKeyboardInterrupt\n/) {
            $status = 'interrupted';
            my $where = defined $INT_WHERE ? "interrupted at $INT_WHERE" : 'interrupted';
            my $ev = _describe_error("KeyboardInterrupt\n", 1);
            $ev->{ename} = 'KeyboardInterrupt';
            $ev->{evalue} = $where;
            my @trace = @{$ev->{traceback}};
            $ev->{traceback} = ["KeyboardInterrupt: $where", @trace[1 .. $#trace]];
            push @events, $ev;
        } else {
            $status = 'error';
            push @events, _describe_error($err, $COMPILED);
        }
    }
    $DIE_RECORD = undef;
    _emit($_, 1) for @events;
    return ($status, $exit_code);
}

# --- env and cwd --------------------------------------------------------------------------------

sub _bytes { my $s = shift; utf8::encode($s) if utf8::is_utf8($s); return $s }

sub _set_env_layer {
    my ($layer, $errors) = @_;
    return unless ref $layer eq 'HASH';
    my $set = ref $layer->{set} eq 'HASH' ? $layer->{set} : {};
    for my $k (keys %$set) {
        my $v = $set->{$k};
        if (!defined $v) { delete $ENV{_bytes($k)}; next }
        if (ref $v) { push @$errors, "env value of $k is not a string"; next }
        $ENV{_bytes($k)} = _bytes("$v");
    }
    my $unset = ref $layer->{unset} eq 'ARRAY' ? $layer->{unset} : [];
    delete $ENV{_bytes($_)} for grep { defined && !ref } @$unset;
}

sub _apply_env {
    my ($env, $errors) = @_;
    my %saved;
    return \%saved unless ref $env eq 'HASH';
    _set_env_layer($env->{context}, $errors);
    my $layer = $env->{exec};
    if (ref $layer eq 'HASH') {
        my @keys = ref $layer->{set} eq 'HASH' ? keys %{$layer->{set}} : ();
        push @keys, grep { defined && !ref } @{$layer->{unset}} if ref $layer->{unset} eq 'ARRAY';
        for my $k (@keys) {
            my $b = _bytes($k);
            $saved{$b} = exists $ENV{$b} ? [$ENV{$b}] : undef;
        }
        _set_env_layer($layer, $errors);
    }
    return \%saved;
}

sub _restore_env {
    my $saved = shift;
    for my $k (keys %$saved) {
        if (defined $saved->{$k}) { $ENV{$k} = $saved->{$k}[0] }
        else { delete $ENV{$k} }
    }
}

sub _getcwd {
    my $cwd = Cwd::getcwd();
    if (!defined $cwd) {
        $cwd = readlink('/proc/self/cwd');
        $cwd =~ s/ \(deleted\)\z// if defined $cwd;
    }
    return defined $cwd ? _text($cwd) : undef;
}

sub _execute {
    my $req = shift;
    my $id = $req->{id};
    my $count = $req->{execution_count};
    my $code = $req->{code};
    if (!defined $code || ref $code) {
        _send({type => 'error_reply', id => $id, reason => 'execute needs a string code'});
        return;
    }
    $CURRENT_ID = $id;
    $INPUT_ALLOWED = $HOST_REVISION >= 2 && ref $req->{input} && $req->{input} ? 1 : 0;
    my $t0 = Time::HiRes::time();
    my ($status, $exit_code) = ('error', undef);
    my $saved = {};
    my $ok = eval {
        my @errors;
        $saved = _apply_env($req->{env}, \@errors);
        my $cwd = $req->{cwd};
        if (defined $cwd && !ref $cwd && $cwd ne '' && !@errors) {
            chdir(_bytes($cwd)) or push @errors, "cannot change directory to $cwd: $!";
        }
        my $started = {type => 'started', id => $id, execution_count => $count};
        $t0 = Time::HiRes::time();
        if (@errors) {
            # Running in the wrong directory or environment could do harm.
            _send($started);
            _emit(_error_event('EnvironmentError', $_, [$_]), 1) for @errors;
        } else {
            ($status, $exit_code) = _run_cell($code, $count, $started);
        }
        1;
    };
    if (!$ok) {
        my $e = $@;
        $IN_USER = 0;
        $SIG{INT} = 'IGNORE';
        $EXECUTING = 0;
        _log('error', "driver failure during execute: $e");
        $status = 'error';
    }
    my $duration = (Time::HiRes::time() - $t0) * 1000;
    _restore_env($saved);
    my $done = {type => 'done', id => $id, status => $status, execution_count => $count,
                cwd => _getcwd(), duration_ms => 0 + sprintf('%.3f', $duration)};
    $done->{exit_code} = 0 + $exit_code if defined $exit_code;
    _emit($done, 1);
    $CURRENT_ID = undef;
    $INPUT_ALLOWED = 0;
}

# --- completion and variables ---------------------------------------------------------------------

my @KEYWORDS = qw(
    abs accept alarm and atan2 bind binmode bless caller chdir chmod chomp chop chown chr chroot
    close closedir cmp connect continue cos crypt dbmclose defined delete die do dump each else
    elsif eof eq eval exec exists exit exp fcntl fileno flock for foreach fork format formline ge
    getc glob gmtime goto grep gt hex if index int ioctl join keys kill last lc lcfirst le length
    link listen local localtime lock log lstat lt map mkdir my ne next no not oct open opendir or
    ord our pack package pipe pop pos print printf prototype push quotemeta rand read readdir
    readline readlink readpipe recv redo ref rename require reset return reverse rewinddir rindex
    rmdir say scalar seek seekdir select send shift sin sleep socket sort splice split sprintf
    sqrt srand stat state study sub substr symlink syscall sysopen sysread sysseek system syswrite
    tell telldir tie time times truncate uc ucfirst umask undef unless unlink unpack unshift untie
    until use utime values vec wait waitpid wantarray warn while write xor);

sub _stash_names {
    my ($pkg, $sigil, $prefix) = @_;
    no strict 'refs';
    my $stash = \%{"${pkg}::"};
    my @out;
    for my $name (keys %$stash) {
        next unless index($name, $prefix) == 0;
        if ($name =~ /\A(\w+)::\z/) {
            push @out, [$1 . '::', 'package'] if $sigil eq '';
            next;
        }
        next unless $name =~ /\A[A-Za-z_]\w*\z/;
        my $glob = $stash->{$name};
        # A sub that is all there is under its name may be stored as a plain code reference.
        if (ref $glob eq 'CODE' || (ref \$glob ne 'GLOB' && !ref $glob && defined $glob)) {
            push @out, [$name, 'sub'] if $sigil eq '' || $sigil eq '&';
            next;
        }
        next unless ref \$glob eq 'GLOB';
        if ($sigil eq '' || $sigil eq '&') {
            push @out, [$name, 'sub'] if defined *{$glob}{CODE};
        } elsif ($sigil eq '$') {
            my $sref = *{$glob}{SCALAR};
            # $name also starts $name[0] and $name{key}.
            push @out, [$name, 'scalar'] if (defined $sref && defined $$sref)
                || defined *{$glob}{ARRAY} || defined *{$glob}{HASH};
        } elsif ($sigil eq '@') {
            push @out, [$name, 'array'] if defined *{$glob}{ARRAY} || defined *{$glob}{HASH};
        } elsif ($sigil eq '%') {
            push @out, [$name, 'hash'] if defined *{$glob}{HASH};
        }
    }
    return map { $_->[0] } @out;
}

sub _value_of {
    my $name = shift;    # '$obj'
    if (my $e = $LEX{$name}) {
        my $r = $e->{ref};
        return $$r if ref $r eq 'SCALAR' || ref $r eq 'REF';
    }
    no strict 'refs';
    my $var = substr($name, 1);
    return ${"main::$var"};
}

sub _complete_matches {
    my ($before) = @_;
    # Methods: $obj->meth or Class->meth
    if ($before =~ /(\$[A-Za-z_]\w*|[A-Za-z_][\w:]*)->([A-Za-z_]\w*)?\z/) {
        my ($inv, $prefix) = ($1, $2 // '');
        my $class;
        if ($inv =~ /\A\$/) {
            my $v = eval { _value_of($inv) };
            $class = Scalar::Util::blessed($v);
        } else {
            $class = $inv;
        }
        return ([], length $prefix) unless defined $class;
        my %seen;
        for my $c (@{mro::get_linear_isa($class)}, 'UNIVERSAL') {
            $seen{$_} = 1 for _stash_names($c, '&', $prefix);
        }
        return ([sort keys %seen], length $prefix);
    }
    my ($sigil, $word) = $before =~ /([\$\@\%\&]?)((?:[A-Za-z_]\w*)?(?:::(?:[A-Za-z_]\w*)?)*)\z/;
    $sigil //= '';
    $word //= '';
    return ([], 0) if $sigil eq '' && $word eq '';
    my %seen;
    if ($word =~ /\A(.*)::(\w*)\z/s) {
        my ($pkg, $prefix) = ($1, $2);
        $pkg = 'main' if $pkg eq '';
        $seen{"${pkg}::$_"} = 1 for _stash_names($pkg, $sigil, $prefix);
    } else {
        for my $name (keys %LEX) {
            my ($s, $n) = $name =~ /\A(.)(.*)\z/;
            next unless index($n, $word) == 0;
            if ($sigil eq $s || ($sigil eq '$' && $s ne '$') || ($sigil eq '@' && $s eq '%')) {
                $seen{$n} = 1;
            }
        }
        $seen{$_} = 1 for _stash_names('main', $sigil, $word);
        if ($sigil eq '') {
            $seen{$_} = 1 for grep { index($_, $word) == 0 } @KEYWORDS;
            for my $file (keys %INC) {
                next unless $file =~ /\.pm\z/;
                (my $mod = $file) =~ s/\.pm\z//;
                $mod =~ s{/}{::}g;
                $seen{$mod} = 1 if index($mod, $word) == 0;
            }
        }
        delete $seen{$_} for grep { /\A(?:ReplHost|CORE)::\z/ } keys %seen;
    }
    my @matches = map { $sigil . $_ } sort keys %seen;
    return (\@matches, length($sigil) + length($word));
}

sub _complete {
    my $req = shift;
    my $code = $req->{code};
    $code = '' unless defined $code && !ref $code;
    my $cursor = $req->{cursor};
    $cursor = length $code unless defined $cursor && !ref $cursor && $cursor =~ /\A[0-9]+\z/
        && $cursor <= length $code;
    my ($matches, $len) = eval { _complete_matches(substr($code, 0, $cursor)) };
    ($matches, $len) = ([], 0) unless $matches;
    _send({type => 'complete_reply', id => $req->{id}, matches => [map { _text($_) } @$matches],
           cursor_start => 0 + ($cursor - $len), cursor_end => 0 + $cursor});
}

sub _short_repr {
    my ($v, $limit) = @_;
    my $text = eval { ref $v ? _dumper($v, 0) : defined $v ? "$v" : 'undef' } // '<repr failed>';
    $text = _text($text);
    $text = substr($text, 0, $limit - 1) . "\x{2026}" if length($text) > $limit;
    return $text;
}

sub _scalar_type {
    my $v = shift;
    return 'undef' unless defined $v;
    return ref $v if ref $v;
    my $flags = B::svref_2object(\$v)->FLAGS;
    return ($flags & (B::SVf_IOK | B::SVf_NOK)) && !($flags & B::SVf_POK) ? 'number' : 'string';
}

sub _list_repr {
    my ($ref, $limit) = @_;
    my $s = _short_repr($ref, $limit + 2);
    $s =~ s/\A[\[{]/(/;
    $s =~ s/[\]}]\z/)/;
    $s = substr($s, 0, $limit - 1) . "\x{2026}" if length($s) > $limit;
    return $s;
}

sub _variables {
    my $req = shift;
    my $limit = $req->{max_repr};
    $limit = 200 unless defined $limit && !ref $limit && $limit =~ /\A[0-9]+\z/ && $limit > 0;
    my (@out, %seen);
    for my $name (sort keys %LEX) {
        my $e = $LEX{$name};
        next unless $e->{ref};
        my $sigil = substr($name, 0, 1);
        $seen{$name} = 1;
        if ($sigil eq '$') {
            my $v = ${$e->{ref}};
            push @out, {name => $name, type => _scalar_type($v), repr => _short_repr($v, $limit)};
        } elsif ($sigil eq '@') {
            push @out, {name => $name, type => 'array', repr => _list_repr($e->{ref}, $limit)};
        } else {
            push @out, {name => $name, type => 'hash', repr => _list_repr($e->{ref}, $limit)};
        }
    }
    no strict 'refs';
    for my $g (sort keys %main::) {
        # $a and $b belong to sort.
        next if $STARTUP_GLOBS{$g} || $g !~ /\A[A-Za-z_]\w*\z/ || $g =~ /\A(?:_|[ab]\z)/;
        my $glob = $main::{$g};
        next unless ref \$glob eq 'GLOB';
        my $sref = *{$glob}{SCALAR};
        if ($sref && defined $$sref && !$seen{"\$$g"}) {
            push @out, {name => "\$$g", type => _scalar_type($$sref),
                        repr => _short_repr($$sref, $limit)};
        }
        if (my $aref = *{$glob}{ARRAY}) {
            push @out, {name => "\@$g", type => 'array', repr => _list_repr($aref, $limit)}
                unless $seen{"\@$g"};
        }
        if (my $href = *{$glob}{HASH}) {
            push @out, {name => "%$g", type => 'hash', repr => _list_repr($href, $limit)}
                unless $seen{"%$g"};
        }
    }
    _send({type => 'variables_reply', id => $req->{id}, variables => \@out});
}

# --- control ------------------------------------------------------------------------------------

sub _shutdown {
    my $req = shift;
    _send({type => 'shutdown_reply', id => $req->{id}}) if $req;
    _flush_user();
    # END blocks and destructors run, as when a script ends.
    CORE::exit(0);
}

sub _init {
    my $req = shift;
    my $nonce = $req->{mark_nonce};
    _fatal('init carries no valid mark_nonce')
        unless defined $nonce && !ref $nonce && $nonce =~ /\A[0-9A-Fa-f]{1,64}\z/;
    $MARK_PREFIX = "\e]5253;rh;$nonce;";
    my $revision = $req->{revision};
    $HOST_REVISION = defined $revision && !ref $revision && $revision =~ /\A[0-9]+\z/
        ? ($revision < REVISION ? $revision : REVISION) : 0;
    _send({
        type => 'hello', id => $req->{id}, protocol => PROTOCOL, language => 'perl',
        language_version => sprintf('%vd', $^V), implementation => 'perl', executable => _text($^X),
        pid => 0 + $$,
        capabilities => {interrupt => ['signal'], complete => $TRUE, variables => $TRUE,
                         display => [@DISPLAY_MIMES]},
    });
}

my %HANDLERS = (
    execute   => \&_execute,
    complete  => \&_complete,
    variables => \&_variables,
    shutdown  => \&_shutdown,
    # Only meaningful while an execution runs, and then SIGINT does the work; one read while
    # idle targets an execution that already ended.
    interrupt => sub { },
    # An answer that crossed the end of its cell (an interrupt came first).
    input_reply => sub { },
    init      => sub {
        _send({type => 'error_reply', id => $_[0]{id}, reason => 'already initialized'});
    },
);

sub _dispatch {
    my $req = shift;
    my $handler = $HANDLERS{$req->{type}};
    if (!$handler) {
        _send({type => 'error_reply', id => $req->{id}, reason => 'unknown request type'});
        return;
    }
    my $ok = eval { $handler->($req); 1 };
    if (!$ok) {
        my $e = $@;
        _log('error', "driver failure handling $req->{type}: $e");
        _send({type => 'error_reply', id => $req->{id}, reason => _text($e)})
            unless $req->{type} eq 'execute';
    }
}

sub _setup {
    if (!open($REQ, '<&=', REQ_FD) || !open($EVT, '>&=', EVT_FD)) {
        print STDERR "replhost perl driver: fd 3 and fd 4 must carry the worker protocol ($!)\n";
        POSIX::_exit(2);
    }
    binmode $_ for $REQ, $EVT;
    # Children of user code must not inherit the protocol.
    fcntl($_, F_SETFD, FD_CLOEXEC) for $REQ, $EVT;
    # Duplicates land above fd 4, where Perl sets close-on-exec itself.
    open($MARK_OUT, '>&', \*STDOUT) or die "cannot duplicate stdout: $!\n";
    open($MARK_ERR, '>&', \*STDERR) or die "cannot duplicate stderr: $!\n";
    binmode $_ for $MARK_OUT, $MARK_ERR;
    # print output must reach fd 1 before the output of a child that follows it.
    STDOUT->autoflush(1);
    STDERR->autoflush(1);
    @ARGV = ();
    # As for `perl -e`: the driver's file name means nothing to the user.
    $0 = '-e';

    no strict 'refs';
    no warnings qw(redefine once);
    # See the top of this file for why these exist.
    *CORE::GLOBAL::exit = sub (;$) {
        my $status = do { no warnings; @_ ? int($_[0] // 0) : 0 };
        die ReplHost::Driver::Exit->new($status) if $EXECUTING && $$ == $PID;
        CORE::exit($status);
    };
    *CORE::GLOBAL::system = sub {
        my $result = CORE::system(@_);
        if ($IN_USER && $? != -1 && ($? & 127) == POSIX::SIGINT() && _is_our_sigint()) {
            my (undef, $file, $line) = caller(0);
            $INTERRUPTED = 1;
            $INT_WHERE = "$file line $line";
            die "KeyboardInterrupt\n";
        }
        return $result;
    };
    $SYSTEM_GLOB = $CORE::GLOBAL::{system};
    # Errors that warnings.pm croaks with (an unknown category) are about the user's line.
    $Carp::Internal{+__PACKAGE__}++;
    for my $name (qw(import unimport)) {
        my $orig = \&{"warnings::$name"};
        *{"warnings::$name"} = sub {
            my @r = &$orig;
            _note_warnings() if $EXECUTING;
            return wantarray ? @r : $r[-1];
        };
    }
    *main::display = \&display;
    %STARTUP_GLOBS = map { $_ => 1 } keys %main::;
}

sub _main {
    _setup();
    my $req = _read_frame();
    _shutdown(undef) unless $req;
    _fatal("first request must be init, got \"" . substr($req->{type}, 0, 40) . '"')
        unless $req->{type} eq 'init';
    _init($req);
    while (1) {
        my $next = eval { _read_frame() };
        # fd 3 closed or unreadable (user code can do that): no request can arrive again.
        _fatal("cannot read requests: $@") if $@;
        _shutdown(undef) unless $next;
        _dispatch($next);
    }
}

package ReplHost::Driver::CompileEnd;

sub DESTROY {
    local $ReplHost::Driver::IN_USER = 0;
    my $self = shift;
    my @c = caller(0);
    local $@;
    eval { ReplHost::Driver::_compile_end($self, $c[10]); 1 }
        or eval { ReplHost::Driver::_log('warning', "cell compile hook failed: $@") };
}

package ReplHost::Driver::Stdin;

# STDIN while a cell may ask for input: a line per question, the end of input when the answer
# says so.

sub TIEHANDLE { my $class = shift; return bless {eof => 0}, $class }

sub READLINE {
    my $self = shift;
    if (wantarray) {
        my @lines;
        while (defined(my $line = $self->READLINE)) { push @lines, $line }
        return @lines;
    }
    return undef if $self->{eof};
    my $value = ReplHost::Driver::_ask('', 0);
    if (!defined $value) {
        $self->{eof} = 1;
        return undef;
    }
    utf8::encode($value);
    return "$value\n";
}

sub EOF { return $_[0]{eof} }
sub FILENO { return 0 }
sub BINMODE { return 1 }
sub CLOSE { $_[0]{eof} = 1; return 1 }

package ReplHost::Driver::Exit;

use overload '""' => sub { "exit($_[0]{status})\n" }, fallback => 1;

sub new { my ($class, $status) = @_; return bless {status => $status}, $class }

package ReplHost::Driver;

_main();
