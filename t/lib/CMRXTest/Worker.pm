package CMRXTest::Worker;

# Test helper: run code in a forked child that reports its counts to the
# parent over a pipe; the parent waits with a deadline and kills the
# children that miss it. See the POD at the end of the file.

use strict;
use warnings;

use CMRXTest::DevLib;                   # dev/lib, where CMRXDev::ChildProcess lives
use parent 'CMRXDev::ChildProcess';    # registry, stop, DESTROY, END

use Carp        qw(croak);
use Errno       qw(EINTR);
use POSIX       qw(WNOHANG);
use Time::HiRes qw(sleep time);

our $VERSION = '0.01';

my $REAP_TIMEOUT = 2;    # seconds for a child that closed its pipe to exit

# --------------------------------------------------------------------------
# Parent side

sub start {
    my ($class, %opt) = @_;
    my $name = $opt{name};
    my $run  = $opt{run};
    croak 'name and run (a code reference) are required'
        unless defined $name && ref $run eq 'CODE';
    pipe my $reader, my $writer or croak "pipe: $!";
    my $pid = fork;
    croak "fork failed: $!" unless defined $pid;
    if (!$pid) {    # child: run, report, leave without END or DESTROY
        close $reader;
        $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP);
        _report($writer, $run);
        POSIX::_exit(0);
    }
    close $writer;
    $class->_track($pid);
    return bless { name => $name, pid => $pid, owner => $$, pipe => $reader,
                   buf => '', result => undef }, $class;
}

sub name   { $_[0]{name} }
sub done   { defined $_[0]{result} }
sub result { $_[0]{result} }

# Read what the unfinished workers have written, for up to $timeout
# seconds or until all are done. Returns how many are still running.
sub poll {
    my ($class, $workers, $timeout) = @_;
    my $until = time + $timeout;
    while (my @open = grep { !$_->done } @$workers) {
        my $rin = '';
        vec($rin, fileno($_->{pipe}), 1) = 1 for @open;
        my $left = $until - time;
        $left = 0 if $left < 0;
        my $n = select my $rout = $rin, undef, undef, $left;
        if ($n < 0) {
            next if $! == EINTR;
            croak "select: $!";
        }
        last if !$n;
        for my $w (grep { vec($rout, fileno($_->{pipe}), 1) } @open) {
            my $got = sysread $w->{pipe}, $w->{buf}, 65_536, length $w->{buf};
            $w->_finish if !$got && !(defined $got ? 0 : $! == EINTR);
        }
    }
    return scalar grep { !$_->done } @$workers;
}

# Stop the workers that are not done (TERM, then KILL after 2 s) and say
# so in their results. Returns their names.
sub kill_unfinished {
    my ($class, $workers, $why) = @_;
    my @late = grep { !$_->done } @$workers;
    for my $w (@late) {
        $w->stop;
        close $w->{pipe};
        $w->{result} = { ok => 0, counts => {}, notes => [],
                         error => "killed: $why" };
    }
    return map { $_->name } @late;
}

# The pipe is at its end: parse the report, reap the child.
sub _finish {
    my ($self) = @_;
    close $self->{pipe};
    my $status = $self->_reap;
    my (%counts, @notes, $done, $died);
    for my $line (split /\n/, $self->{buf}) {
        if    ($line =~ /\Acount (\w+) (\d+)\z/) { $counts{$1} = $2 }
        elsif ($line =~ /\Anote (.*)\z/)         { push @notes, $1 }
        elsif ($line =~ /\Adied (.*)\z/)         { $died = $1 }
        elsif ($line eq 'done')                  { $done = 1 }
    }
    my $error = defined $died ? "died: $died"
              : !$done        ? 'exited without reporting'
              : undef;
    $error = ($error ? "$error; " : '') . _status_text($status)
        if !defined $status || $status != 0;
    $self->{result} = { ok => !defined $error, counts => \%counts,
                        notes => \@notes, error => $error };
    return;
}

# Wait (bounded) for the child to exit; its wait status, or undef.
sub _reap {
    my ($self) = @_;
    my $pid = delete $self->{pid};
    my $deadline = time + $REAP_TIMEOUT;
    while (time < $deadline) {
        my $r = waitpid $pid, WNOHANG;
        if ($r == $pid || $r == -1) {
            my $status = $r == $pid ? $? : undef;
            $self->_untrack($pid);
            return $status;
        }
        sleep 0.01;
    }
    $self->_kill_and_reap($pid);
    return undef;
}

sub _status_text {
    my ($status) = @_;
    return 'not reaped (killed)' unless defined $status;
    return 'killed by signal ' . ($status & 127) if $status & 127;
    return 'exit status ' . ($status >> 8);
}

# --------------------------------------------------------------------------
# Child side

# Run the code; write its counts and notes, then "done" -- or why it died.
sub _report {
    my ($writer, $run) = @_;
    my ($counts, @notes);
    my $ok = eval { ($counts, @notes) = $run->(); 1 };
    my $out = '';
    if ($ok && ref $counts eq 'HASH') {
        $out .= "count $_ $counts->{$_}\n" for sort keys %$counts;
        $out .= "note $_\n" for map { (my $n = $_) =~ s/[\r\n]+/ /g; $n } @notes;
        $out .= "done\n";
    }
    else {
        (my $why = $ok ? 'the code returned no hash of counts' : $@)
            =~ s/[\r\n]+/ /g;
        $out .= "died $why\n";
    }
    while (length $out) {
        my $put = syswrite $writer, $out;
        next if !defined $put && $! == EINTR;
        last unless $put;
        substr($out, 0, $put, '');
    }
    close $writer;
    return;
}

1;

__END__

=head1 NAME

CMRXTest::Worker - forked children that report counts to the parent, with a deadline

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::Worker;

    my @workers = map {
        my $n = $_;
        CMRXTest::Worker->start(name => "w$n", run => sub {
            my %counts = (ops => 0);
            $counts{ops}++ for 1 .. 1000;
            return (\%counts, "a note", "another");
        });
    } 1 .. 3;
    my $deadline = time + 30;
    while (CMRXTest::Worker->poll(\@workers, 0.2)) {
        last if time > $deadline;
        # ... do other things meanwhile ...
    }
    my @late = CMRXTest::Worker->kill_unfinished(\@workers, 'deadline');
    for my $w (@workers) {
        my $r = $w->result;  # { ok, counts => {...}, notes => [...], error }
    }

=head1 DESCRIPTION

C<start> forks a child that runs C<run> (with the default handlers for
SIGINT, SIGTERM and SIGHUP) and writes, over a pipe, one C<count NAME N>
line per entry of the hash it returns, one C<note TEXT> line per further
value, then C<done>; if C<run> dies, C<died MESSAGE> instead. The child
then leaves with C<POSIX::_exit(0)>: no C<END> block or destructor of the
parent's runs in it.

The parent reads the pipes with C<poll>. When a pipe ends, the child is
reaped (waited for up to 2 s, then killed) and its result is set: C<ok> is
true only when the report ended with C<done> and the exit status is 0;
otherwise C<error> says what happened (died and why, exited without
reporting, killed by a signal, an exit status). C<kill_unfinished> stops
the children that are not done and gives them a result with C<ok> false.

The children are owned as L<CMRXDev::ChildProcess> owns servers: C<stop>,
destruction and C<END> kill the ones still running, only in the process
that started them.

=head1 METHODS

=over 4

=item C<< CMRXTest::Worker->start(name => NAME, run => CODE) >>

Forks and returns the worker.

=item C<< CMRXTest::Worker->poll(\@workers, $seconds) >>

Reads for up to C<$seconds> (less if all finish); returns the number of
workers not done.

=item C<< CMRXTest::Worker->kill_unfinished(\@workers, $why) >>

Stops those not done; their C<error> is C<"killed: $why">. Returns their
names.

=item C<name>, C<done>, C<result>, C<pid>, C<stop>

The name; whether the result is in; the result (undef until then); the
child's pid (undef once reaped); stop it now.

=back

=cut
