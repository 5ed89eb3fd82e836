package CMRXTest::Child;

# Test helper: child processes. Run code in a forked child and get back
# what it returned, whether it died, its exit status and what memory it
# took; or run a command with given input and get its output. See the POD
# at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use File::Temp ();
use POSIX ();
use Storable ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(in_child run_command status_kb);

my $TMP;    # run_command's files, in a folder removed at exit
my $seq = 0;

# A field of /proc/self/status in kB (VmHWM, VmPeak, ...), or undef.
sub status_kb {
    my ($field) = @_;
    open my $fh, '<', '/proc/self/status' or return;
    while (<$fh>) { return $1 if /^\Q$field\E:\s+(\d+)/ }
    return;
}

sub in_child {
    my ($code, %opt) = @_;
    pipe my $from_child, my $to_parent or die "pipe: $!";
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {    # the child: never back into the test (no END blocks)
        close $from_child;
        if ($opt{fresh_peak} && open my $c, '>', '/proc/self/clear_refs') {
            print {$c} "5";    # resets the peak RSS (VmHWM) to the current RSS
            close $c;
        }
        my $peak   = status_kb('VmPeak');
        my $result = eval { scalar $code->() };
        my %report = (result => $result, died => $@ ? "$@" : undef,
                      vm_hwm_kb => status_kb('VmHWM'));
        $report{vm_peak_growth_kb} = status_kb('VmPeak') - $peak if defined $peak;
        binmode $to_parent;
        print {$to_parent} Storable::nfreeze(\%report);
        close $to_parent;
        POSIX::_exit(0);
    }
    close $to_parent;
    binmode $from_child;
    my $frozen = do { local $/; <$from_child> };
    close $from_child;
    waitpid $pid, 0;
    my %child = (status => $?);
    my $report = defined $frozen && length $frozen ? eval { Storable::thaw($frozen) } : undef;
    if ($report) {
        %child = (%$report, %child);
    }
    else {
        $child{died} = "child $pid gave no result (wait status $child{status})";
    }
    Test::More::diag("in_child: the child died: $child{died}")
        if defined $child{died} && defined &Test::More::diag;
    return (delete $child{result}, \%child);
}

# Runs @$cmd (exec, no shell), its input $opt{stdin} when given (else the
# test's), stderr as $opt{stderr} says ('stdout': with stdout, 'capture':
# apart, else the test's). Through files, so no pipe deadlocks on big
# output. Returns ($?, stdout, stderr).
sub run_command {
    my ($cmd, %opt) = @_;
    $TMP ||= File::Temp->newdir;
    my ($in, $out, $err) = map { "$TMP/run" . ++$seq . ".$_" } qw(in out err);
    if (defined $opt{stdin}) {
        open my $fh, '>:raw', $in or die "$in: $!";
        print {$fh} $opt{stdin};
        close $fh or die "$in: $!";
    }
    my $stderr = $opt{stderr} || '';
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {    # the child: never back into the test (no END blocks)
        open STDIN, '<', $in or POSIX::_exit(126) if defined $opt{stdin};
        open STDOUT, '>', $out or POSIX::_exit(126);
        if ($stderr eq 'stdout') { open STDERR, '>&', \*STDOUT or POSIX::_exit(126) }
        elsif ($stderr eq 'capture') { open STDERR, '>', $err or POSIX::_exit(126) }
        { exec { $cmd->[0] } @$cmd }    # block: no "unlikely to be reached"
        print STDERR "exec $cmd->[0] failed: $!\n";
        POSIX::_exit(127);
    }
    waitpid $pid, 0;
    my $status = $?;
    my @got = map {
        my $file = $_;
        my $data = '';
        if (open my $fh, '<:raw', $file) { local $/; $data = <$fh>; $data = '' unless defined $data }
        $data;
    } $out, $err;
    unlink grep { -e } $in, $out, $err;
    return ($status, @got);
}

1;

__END__

=head1 NAME

CMRXTest::Child - child processes for tests: code in a fork, commands with captured output

=head1 SYNOPSIS

    use CMRXTest::Child qw(in_child run_command status_kb);

    my ($result, $child) = in_child(sub {
        my $memd = Cache::Memcached->new({ ... });
        return { got => $memd->get_multi(@keys) };    # any Perl data
    }, fresh_peak => 1);
    is $child->{status}, 0, 'the client process survived';
    cmp_ok $child->{vm_hwm_kb}, '<', 200 * 1024, 'peak RSS under 200 MB';

    my ($status, $stdout, $stderr) = run_command(['gzip', '-dc'], stdin => $gz, stderr => 'capture');

=head1 DESCRIPTION

The tests' one helper for child processes (the servers they start are
owned through L<CMRXDev::ChildProcess> instead).

=head2 in_child

C<in_child($code, %options)>
forks; the child runs C<$code> (in scalar context) inside C<eval>, sends
back what it returned (any Perl data: a string, a number, a reference;
through L<Storable>) and leaves with C<POSIX::_exit(0)>, so it never runs
the test's C<END> blocks (which would stop the parent's servers) nor
returns into the test. The parent waits for it and returns C<($result,
\%child)>:

=over 4

=item C<$result>

What C<$code> returned; C<undef> when it died.

=item C<< $child->{status} >>

The child's wait status (C<$?>): 0 when it got to the end, a signal number
when it was killed (a crash of the code under test).

=item C<< $child->{died} >>

Why C<$code> died (its C<$@>), or why nothing came back from the child
(killed before it answered); C<undef> otherwise. It is also printed with
C<diag>.

=item C<< $child->{vm_hwm_kb} >>, C<< $child->{vm_peak_growth_kb} >>

The child's peak resident size (VmHWM of F</proc/self/status>) when
C<$code> was done, and how much its peak virtual size (VmPeak) grew while
C<$code> ran, in kB; C<undef> without F</proc>.

=back

Options:

=over 4

=item C<< fresh_peak => 1 >>

Resets the child's peak RSS first (by writing C<5> to
F</proc/self/clear_refs>), so that C<vm_hwm_kb> is the peak of C<$code>'s
own run, not the parent's peak inherited through the fork.

=back

C<status_kb($field)> is a field of this process's F</proc/self/status> in kB
(C<VmRSS>, C<VmHWM>, C<VmPeak>, ...), or C<undef> without it.

=head2 run_command

C<run_command(\@cmd, %options)> runs the command (C<exec> of the list, no
shell) and returns C<($?, $stdout, $stderr)>. Input and output go through
temporary files, so no pipe can deadlock on big data. Options:

=over 4

=item C<< stdin => $bytes >>

The command's standard input (else it inherits the test's).

=item C<< stderr => 'stdout' >> or C<< stderr => 'capture' >>

Standard error into C<$stdout> with the output, or apart into C<$stderr>
(else it goes where the test's goes, and C<$stderr> is empty).

=back

=cut
