package CMRXTest::FakeServer;

# Test helper: a scripted fake memcached on loopback, for hostile and edge
# case tests. See the POD at the end of the file.

use strict;
use warnings;

use CMRXTest::DevLib;                   # dev/lib, where CMRXDev::ChildProcess lives
use parent 'CMRXDev::ChildProcess';    # registry, stop, DESTROY, END

use Carp        qw(croak);
use File::Temp  ();
use IO::Select  ();
use IO::Socket::INET ();
use POSIX       ();
use Socket      qw(IPPROTO_TCP TCP_NODELAY SOL_SOCKET SO_LINGER);
use Time::HiRes qw(sleep);

our $VERSION = '0.01';

my $HOST = '127.0.0.1';    # loopback only

# Registry of live children, stop, DESTROY, END and the accessors (host,
# port, pid, address) are in CMRXDev::ChildProcess.

# --------------------------------------------------------------------------
# Public API

sub start {
    my ($class, %opt) = @_;
    # answers: a reply for each request, looked up by the request's bytes
    # (a recorded transcript), as a script of one step per request.
    if (my $answers = $opt{answers}) {
        croak "answers must be a hash of request => reply" unless ref $answers eq 'HASH';
        $opt{script} = [ [ answer => $answers, $opt{unknown} // "ERROR\r\n" ] ];
    }
    my $scripts = $opt{scripts}
        // [ $opt{script} // croak "script, scripts or answers required" ];
    croak "scripts must be a non-empty array of arrays"
        unless ref $scripts eq 'ARRAY' && @$scripts
            && !grep { ref ne 'ARRAY' } @$scripts;
    _check_step($_) for map {@$_} @$scripts;

    # Listen before forking: the port is ready as soon as start returns.
    my $listen = IO::Socket::INET->new(
        LocalAddr => $HOST, LocalPort => 0, Proto => 'tcp',
        Listen => 16, ReuseAddr => 1,
    ) or croak "cannot listen on $HOST: $@";
    my $log = File::Temp->new;    # what the client sent, length-prefixed
    $log->autoflush(1);

    my $parent = $$;
    my $pid = fork;
    croak "fork failed: $!" unless defined $pid;
    if (!$pid) {                  # child: serve, then leave without END
        my $ok = eval { _serve($listen, $scripts, $log, $parent); 1 };
        POSIX::_exit($ok ? 0 : 1);
    }
    my $self = bless {
        host => $HOST, port => $listen->sockport, pid => $pid, owner => $$,
        log => $log,
    }, $class;
    close $listen;
    $class->_track($pid);
    return $self;
}

# Everything the clients sent, one string per request read (all connections,
# in order). A request is what was read up to and including a "\r\n".
sub requests {
    my ($self) = @_;
    open my $fh, '<:raw', $self->{log}->filename or return;
    my $data = do { local $/; <$fh> } // '';
    return unpack '(N/a*)*', $data;
}

# --------------------------------------------------------------------------
# Parent-side internals

my %STEP_ARGS = (sleep => 1, dribble => 2, close => 1, hold => 1, reset => 1, answer => 2);

sub _check_step {
    my ($step) = @_;
    return if !ref $step && defined $step;
    croak "bad script step: " . (defined $step ? $step : 'undef')
        unless ref $step eq 'ARRAY' && defined $step->[0]
            && exists $STEP_ARGS{ $step->[0] };
    return;
}

# --------------------------------------------------------------------------
# Child side: accept connections one after another and play the scripts.

sub _serve {
    my ($listen, $scripts, $log, $parent) = @_;
    $SIG{PIPE} = 'IGNORE';            # a client that hangs up is not fatal
    $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP);
    my $sel = IO::Select->new($listen);
    my $n = 0;
    while (1) {
        # Wake up now and then to notice an orphaned child and quit.
        next unless $sel->can_read(0.5) || _orphaned($parent);
        return if _orphaned($parent);
        my $conn = $listen->accept or next;
        setsockopt($conn, IPPROTO_TCP, TCP_NODELAY, 1);
        my $script = $scripts->[ $n < @$scripts ? $n : $#$scripts ];
        $n++;
        _play($conn, $script, $log, $parent);
        close $conn;
    }
}

sub _orphaned { getppid() != $_[0] }

# Per connection: read a request, run the script; repeat until the client
# hangs up or a close/reset step ends the connection.
sub _play {
    my ($conn, $script, $log, $parent) = @_;
    while (defined(my $req = _read_request($conn, $parent))) {
        syswrite $log, pack('N/a*', $req);
        for my $step (@$script) {
            if (!ref $step) {
                _write_all($conn, $step) or return;
                next;
            }
            my ($op, @arg) = @$step;
            if ($op eq 'sleep') { sleep $arg[0] }
            elsif ($op eq 'hold') { sleep $arg[0] }
            elsif ($op eq 'close') { return }
            elsif ($op eq 'answer') {
                my ($answers, $unknown) = @arg;
                _write_all($conn, exists $answers->{$req} ? $answers->{$req} : $unknown) or return;
            }
            elsif ($op eq 'reset') {    # close with RST instead of FIN
                setsockopt($conn, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
                return;
            }
            elsif ($op eq 'dribble') {
                for my $byte (split //, $arg[0]) {
                    _write_all($conn, $byte) or return;
                    sleep($arg[1] // 0.001);
                }
            }
        }
    }
    return;
}

# Read until the data so far ends with "\r\n" (so a pipelined burst of
# request lines is one request). undef on EOF/error before any request.
sub _read_request {
    my ($conn, $parent) = @_;
    my ($buf, $sel) = ('', IO::Select->new($conn));
    while ($buf !~ /\r\n\z/) {
        if (!$sel->can_read(0.5)) {
            return undef if _orphaned($parent);
            next;
        }
        my $got = sysread $conn, $buf, 65536, length $buf;
        return undef unless $got;    # EOF or error
    }
    return $buf;
}

sub _write_all {
    my ($conn, $data) = @_;
    while (length $data) {
        my $put = syswrite $conn, $data;
        return 0 unless $put;
        substr($data, 0, $put, '');
    }
    return 1;
}

1;

__END__

=head1 NAME

CMRXTest::FakeServer - a scripted fake memcached on loopback for tests

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::FakeServer;

    my $fake = CMRXTest::FakeServer->start(script => [
        "VALUE a 0 5\r\n",
        [dribble => "hello\r\nEND\r\n", 0.001],
    ]);
    my $client = SomeClient->new(servers => [ $fake->address ]);
    ...
    my @sent = $fake->requests;    # ("get a\r\n")
    $fake->stop;                   # or let it go out of scope / END

    # A reply for each request, by its bytes (unknown ones get ERROR):
    CMRXTest::FakeServer->start(answers => {
        "get a\r\n"   => "VALUE a 0 1\r\nx\r\nEND\r\n",
        "stats\r\n"   => "STAT pid 1\r\nEND\r\n",
    });

    # A different script for each connection, in order of arrival:
    CMRXTest::FakeServer->start(scripts => [
        [ "VALUE a 0 1\r\nx", [close => 1] ],   # first connection
        [ "END\r\n" ],                          # second and later ones
    ]);

=head1 DESCRIPTION

C<start> binds a listening socket on 127.0.0.1 (free port), then forks a
child that accepts connections one after another (a connection that is
being served holds up the next one). The N-th connection gets the N-th
script of C<scripts> (the last one for connections beyond the list) or
always the single C<script>.

For each connection the child reads a request -- data up to a C<"\r\n">
that ends what has arrived so far -- records it, and runs the script. When
the script ends without closing, it waits for the next request on the same
connection and runs the script again, until the client hangs up. The socket
has C<TCP_NODELAY> set so that separate writes leave separately.

=head2 Script steps

=over 4

=item C<"bytes">

Write them (all of them, however many writes it takes).

=item C<< [sleep => SECONDS] >>, C<< [hold => SECONDS] >>

Pause with the connection open, writing nothing. (The same thing; use
whichever reads better.)

=item C<< [dribble => "bytes", DELAY] >>

Write one byte per write, sleeping DELAY seconds (default 0.001) after each.

=item C<< [close => 1] >>

Close the connection (normal FIN) at once.

=item C<< [reset => 1] >>

Close it with a TCP RST (SO_LINGER 0): the client sees "connection reset".

=item C<< [answer => \%replies, $unknown] >>

Write the reply C<< $replies{$request} >> to the request just read, or
C<$unknown>. C<< start(answers => \%replies, unknown => "ERROR\r\n") >>
is a server made of this one step (C<unknown> defaults to C<ERROR>): a
recorded transcript played back.

=back

=head1 METHODS

C<address> (C<"127.0.0.1:PORT">), C<host>, C<port>, C<pid> (the child's),
C<requests> (list of the requests read so far, all connections, oldest
first; each is recorded before its script runs), and C<stop> (TERM, KILL
after 2 s, reap; idempotent).

The child is stopped by C<stop>, when the object is destroyed, and in an
C<END> block, only ever by the process that started it (fork safe). The
child also quits by itself within about half a second if its parent dies.
The stopping and the accessors come from the base class
L<CMRXDev::ChildProcess>, shared with L<CMRXDev::Memcached>.

=cut
