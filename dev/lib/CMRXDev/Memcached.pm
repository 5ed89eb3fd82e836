package CMRXDev::Memcached;

# Throw-away memcached servers on free loopback ports, for the tests
# (CMRXTest::Memcached adds their skip-or-fail policy) and the benchmark.
# See the POD at the end of the file.

use strict;
use warnings;

use parent 'CMRXDev::ChildProcess';    # registry, stop, DESTROY, END

use Carp         qw(croak);
use File::Spec   ();
use File::Temp   ();
use IO::Select   ();
use IO::Socket::INET ();
use POSIX        qw(WNOHANG);
use Time::HiRes  qw(sleep time);

our $VERSION = '0.01';

my $HOST          = '127.0.0.1';    # loopback only, never anything else
my $START_TIMEOUT = 5;              # seconds to wait for a server to come up
my $ATTEMPTS      = 5;              # ports to try before giving up

# Registry of live servers, stop, DESTROY, END and the accessors (host,
# port, pid, address) are in CMRXDev::ChildProcess.

# --------------------------------------------------------------------------
# Class methods

# Path of the memcached binary, or undef. $ENV{CMRX_MEMCACHED} overrides the
# search (set it to a path that does not exist to simulate "not installed").
sub find_binary {
    return -x $ENV{CMRX_MEMCACHED} ? $ENV{CMRX_MEMCACHED} : undef
        if defined $ENV{CMRX_MEMCACHED} && length $ENV{CMRX_MEMCACHED};
    my @dirs = (File::Spec->path, qw(/usr/bin /usr/sbin /usr/local/bin));
    for my $dir (grep { length } @dirs) {
        my $file = File::Spec->catfile($dir, 'memcached');
        return $file if -f $file && -x _;
    }
    return undef;
}

# Start `count` servers (default 1); returns the objects. Dies with a clear
# message when memcached is missing or will not come up.
sub start {
    my ($class, %opt) = @_;
    my $count = $opt{count} // 1;
    my @args  = @{ $opt{args} // [] };
    my $bin   = $class->find_binary // die(
        defined $ENV{CMRX_MEMCACHED} && length $ENV{CMRX_MEMCACHED}
            ? "memcached not found: CMRX_MEMCACHED=$ENV{CMRX_MEMCACHED} is not an executable\n"
            : "memcached not found in PATH; install it\n");
    _install_signal_handlers();
    my @servers = map { $class->_start_one($bin, \@args) } 1 .. $count;
    return wantarray ? @servers : $servers[0];
}

# --------------------------------------------------------------------------
# Internals

# A port nobody listens on right now: bind to port 0 and ask which one we got.
# (Another process could take it before memcached does; start retries.)
sub _free_port {
    my $sock = IO::Socket::INET->new(
        LocalAddr => $HOST, LocalPort => 0, Proto => 'tcp', Listen => 1,
    ) or croak "cannot bind a socket on $HOST: $@";
    my $port = $sock->sockport;
    close $sock;
    return $port;
}

sub _start_one {
    my ($class, $bin, $args) = @_;
    local $?;    # waitpid below must not change the caller's $?
    my @user = $> == 0 && !grep({ /\A-u/ || $_ eq '--user' } @$args)
        ? ('-u', 'root') : ();    # memcached refuses to run as root without -u
    my $last_error = '';
    for (1 .. $ATTEMPTS) {
        my $port = _free_port();
        my @cmd  = ($bin, '-l', $HOST, '-p', $port, '-U', '0', '-m', '64',
                    @user, @$args);
        my $log  = File::Temp->new;    # memcached's stderr, for diagnostics
        my $pid  = _spawn(\@cmd, "$log");
        $class->_track($pid);
        my $state = _wait_until_up($pid, $port);
        if ($state eq 'up') {
            return bless { host => $HOST, port => $port, pid => $pid,
                           owner => $$ }, $class;
        }
        if ($state eq 'exited') { $class->_untrack($pid) }    # reaped
        else                    { $class->_kill_and_reap($pid) }
        my $err = do { local (@ARGV, $/) = ("$log"); <> } // '';
        $err =~ s/\s+\z//;
        $last_error = "'@cmd' did not come up"
                    . (length $err ? ": $err" : '');
        # Only a port clash is worth another try; bad arguments are not.
        last if $state eq 'exited' && $err !~ /bind|in use|listen/i;
    }
    die "could not start memcached: $last_error\n";
}

sub _spawn {
    my ($cmd, $errfile) = @_;
    my $pid = fork;
    croak "fork failed: $!" unless defined $pid;
    return $pid if $pid;
    # Child: quiet stdio, then exec. Never return into the test's code.
    open STDIN,  '<', File::Spec->devnull;
    open STDOUT, '>', File::Spec->devnull;
    open STDERR, '>', $errfile;
    { exec { $cmd->[0] } @$cmd }    # block: no "unlikely to be reached"
    print STDERR "exec $cmd->[0] failed: $!\n";
    POSIX::_exit(127);
}

# Poll until the server accepts a TCP connection and answers "version".
# Returns 'up', 'exited' (and reaped), or 'failed' (still running).
sub _wait_until_up {
    my ($pid, $port) = @_;
    my $deadline = time + $START_TIMEOUT;
    while (time < $deadline) {
        return 'exited' if waitpid($pid, WNOHANG) == $pid;
        if (my $sock = IO::Socket::INET->new(
                PeerAddr => $HOST, PeerPort => $port, Proto => 'tcp',
                Timeout => 1)) {
            return _answers_version($sock, $deadline) ? 'up' : 'failed';
        }
        sleep 0.02;
    }
    return 'failed';
}

sub _answers_version {
    my ($sock, $deadline) = @_;
    $sock->autoflush(1);
    print {$sock} "version\r\n" or return 0;
    my ($buf, $sel) = ('', IO::Select->new($sock));
    while ($buf !~ /\r\n/) {
        my $left = $deadline - time;
        return 0 if $left <= 0 || !$sel->can_read($left);
        return 0 unless sysread $sock, $buf, 256, length $buf;
    }
    return $buf =~ /\AVERSION \S+\r\n/ ? 1 : 0;
}

# If the test is interrupted (Ctrl-C, harness timeout), exit normally so END
# runs and no memcached is left behind. Only where nobody set a handler.
my %SIGNUM = (HUP => 1, INT => 2, TERM => 15);

sub _install_signal_handlers {
    for my $sig (sort keys %SIGNUM) {
        next if defined $SIG{$sig} && $SIG{$sig} ne 'DEFAULT';
        $SIG{$sig} = sub { exit 128 + $SIGNUM{$sig} };    # END still runs
    }
}

1;

__END__

=head1 NAME

CMRXDev::Memcached - start throw-away memcached servers on loopback

=head1 SYNOPSIS

    use lib 'dev/lib';
    use CMRXDev::Memcached;

    my @servers = CMRXDev::Memcached->start(count => 3, args => ['-I', '32m']);
    my @addrs = map { $_->address } @servers;   # "127.0.0.1:PORT"
    ...
    $servers[0]->stop;       # or let them go out of scope / END

=head1 DESCRIPTION

The memcached servers of the tests and of the benchmark: tests use it
through L<CMRXTest::Memcached>, which adds their policy for a host without
memcached (skip, or fail with C<CMRX_REQUIRE_MEMCACHED>); F<bench/run.pl>
starts its server with it.

Each server is C<memcached -l 127.0.0.1 -p PORT -U 0 -m 64 [-u root] ARGS>
on a free loopback port (found by binding port 0). A start is retried on a
new port when the server does not come up; it counts as up once it accepts
a TCP connection and answers C<version> (waited for up to 5 seconds).
C<-u root> is added when running as root unless ARGS contain C<-u>.
ARGS come last, so e.g. C<-m 256> overrides the default C<-m 64> (needed
for C<-I> above 32m: memcached wants C<-I> at most half of C<-m>).

Servers are stopped (TERM, then KILL after 2 s, then reaped) by C<stop>,
when the object is destroyed, and in an C<END> block. memcached acts on
TERM at its next one-second clock tick, so a C<stop> takes up to a second;
C<END> stops all remaining servers together. Only the process that
started a server stops it, so forked children may exit freely. Because the
object's destruction stops the server, keep the objects alive for as long
as you use the addresses: C<< map { $_->address } CMRXDev::Memcached->start >>
stops the servers at the end of that statement.

The stopping (and the accessors below) come from the base class
L<CMRXDev::ChildProcess>.

If SIGINT, SIGTERM and SIGHUP have no handler, handlers are installed that
C<exit> so that END still stops the servers.

=head1 METHODS

=over 4

=item C<< CMRXDev::Memcached->start(count => N, args => [...]) >>

Starts N servers (default 1) and returns the objects (in scalar context
the first one), blessed into the class it was called on. Dies with a
message saying why on failure ("memcached not found in PATH; install it",
"could not start memcached: ...").

=item C<< CMRXDev::Memcached->find_binary >>

The memcached path: C<$ENV{CMRX_MEMCACHED}> if set (undef if that is not
executable), otherwise the first found in PATH, F</usr/bin>, F</usr/sbin>,
F</usr/local/bin>.

=item C<address>, C<host>, C<port>, C<pid>

C<"127.0.0.1:PORT">, C<127.0.0.1>, the port, the server's pid (undef after
C<stop>).

=item C<stop>

Stops the server; idempotent.

=back

=cut
