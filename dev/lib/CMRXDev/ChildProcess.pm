package CMRXDev::ChildProcess;

# Base class: ownership of a child process (a server) that a test or the
# benchmark started. Shared by CMRXDev::Memcached and the tests' helpers
# that own children (CMRXTest::FakeServer, ::FaultProxy, ::Worker). See the
# POD at the end of the file.

use strict;
use warnings;

use POSIX       qw(WNOHANG);
use Time::HiRes qw(sleep time);

our $VERSION = '0.01';

# pid => $$ of the process that started it. Plain data, not objects, so the
# registry never keeps an object alive; END stops whatever is left.
my %LIVE;

# --------------------------------------------------------------------------
# Accessors and stop

sub host    { $_[0]{host} }
sub port    { $_[0]{port} }
sub pid     { $_[0]{pid} }
sub address { "$_[0]{host}:$_[0]{port}" }

# Stop the child (TERM, then KILL) and reap it. Idempotent; does nothing in
# a process other than the one that started the child (fork safety).
sub stop {
    my ($self) = @_;
    my $pid = $self->{pid};
    return unless $pid && $self->{owner} == $$;
    delete $self->{pid};
    # Not in %LIVE: END has already stopped it (global destruction).
    $self->_kill_and_reap($pid) if exists $LIVE{$pid};
    return;
}

sub DESTROY {
    my ($self) = @_;
    local ($?, $!, $@);
    $self->stop;
}

END {
    local ($?, $!, $@);    # keep the exit status of the test (or benchmark)
    # All at once: memcached takes up to a second to act on TERM.
    __PACKAGE__->_kill_and_reap(grep { $LIVE{$_} == $$ } keys %LIVE);
}

# --------------------------------------------------------------------------
# For subclasses

# Register a child just forked by this process, so END stops it.
sub _track {
    my ($class, $pid) = @_;
    $LIVE{$pid} = $$;
    return;
}

# Forget a child that has already been reaped elsewhere.
sub _untrack {
    my ($class, $pid) = @_;
    delete $LIVE{$pid};
    return;
}

# Stop children now: TERM, give them up to 2 s, then KILL; always reap.
# All are signalled first and then reaped together.
sub _kill_and_reap {
    my ($class, @pids) = @_;
    delete @LIVE{@pids};
    kill 'TERM', @pids;
    my $deadline = time + 2;
    while (@pids && time < $deadline) {
        @pids = grep { my $r = waitpid $_, WNOHANG; $r != $_ && $r != -1 }
                @pids;
        sleep 0.01 if @pids;
    }
    return unless @pids;
    kill 'KILL', @pids;
    waitpid $_, 0 for @pids;
    return;
}

1;

__END__

=head1 NAME

CMRXDev::ChildProcess - base class for helpers that own a child process

=head1 SYNOPSIS

    package CMRXTest::SomeServer;
    use parent 'CMRXDev::ChildProcess';

    sub start {
        my ($class) = @_;
        my $pid = ...;                  # fork (and exec) the server
        $class->_track($pid);           # END stops it from now on
        return bless { host => '127.0.0.1', port => $port, pid => $pid,
                       owner => $$ }, $class;
    }

=head1 DESCRIPTION

The shared part of L<CMRXDev::Memcached> (in F<dev/lib>, with this module:
the tests and the benchmark both use it) and of the tests' helpers that own
children: L<CMRXTest::FakeServer>, L<CMRXTest::FaultProxy> and
L<CMRXTest::Worker> (in F<t/lib>).
An object is a hash with C<host>, C<port>, C<pid> (the child's) and
C<owner> (C<$$> of the process that started the child).

The child is stopped (TERM, then KILL after 2 s, then reaped) by C<stop>,
when the object is destroyed, and in an C<END> block. Only the process that
started a child stops it, so forked children may exit freely.
C<END> first signals all remaining children of this process and then reaps
them, so slow ones (memcached acts on TERM at its next one-second tick) are
waited for together, not one after another. C<DESTROY> and C<END> keep
C<$?>, C<$!> and C<$@>, so the process's exit status is not changed.

=head1 METHODS

=over 4

=item C<address>, C<host>, C<port>, C<pid>

C<"HOST:PORT">, the host, the port, the child's pid (undef after C<stop>).

=item C<stop>

Stops the child; idempotent; a no-op in any process but the starter.

=item C<< $class->_track($pid) >>, C<< $class->_untrack($pid) >>

For subclasses: register a child just started (so C<END> stops it), or
forget one already reaped.

=item C<< $class->_kill_and_reap(@pids) >>

For subclasses: stop and reap these children now (TERM to all, up to 2 s,
KILL to those left, reap), and forget them.

=back

=cut
