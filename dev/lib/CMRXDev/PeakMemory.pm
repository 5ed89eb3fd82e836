package CMRXDev::PeakMemory;

# The time a command takes and the peak memory of its whole process tree
# (the command and every process it starts), polled from /proc. See the
# POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use POSIX ();
use Time::HiRes ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(run_measured tree_memory);

my $POLL = 0.1;    # seconds between looks at /proc

# Runs @$command (stdout and stderr to the files given, else inherited),
# polling the memory of its process tree until it ends.
sub run_measured {
    my ($command, %opt) = @_;
    my $t0 = Time::HiRes::time();
    my $pid = fork;
    die "run_measured: fork: $!\n" unless defined $pid;
    if (!$pid) {
        open STDOUT, '>', $opt{stdout} or POSIX::_exit(127) if defined $opt{stdout};
        open STDERR, '>', $opt{stderr} or POSIX::_exit(127) if defined $opt{stderr};
        { exec { $command->[0] } @$command }
        POSIX::_exit(127);
    }
    my %peak = (rss_kb => 0, pss_kb => 0, processes => 0);
    for (;;) {
        last if waitpid($pid, POSIX::WNOHANG()) == $pid;
        my $now = tree_memory($pid);
        $peak{$_} = $now->{$_} > $peak{$_} ? $now->{$_} : $peak{$_} for keys %peak;
        Time::HiRes::sleep($POLL);
    }
    return { %peak, status => $?, seconds => Time::HiRes::time() - $t0 };
}

# { rss_kb, pss_kb, processes } of $pid and its descendants now: the sum
# of their resident sets (pages a forked child shares with its parent
# count in both), and of their proportional sets (shared pages divided
# among those who share them).
sub tree_memory {
    my ($root) = @_;
    my %children;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $stat or next;
        my $line = <$fh>;
        push @{ $children{$2} }, $1 if defined $line && $line =~ /\A([0-9]+) \(.*\) \S ([0-9]+)/s;
    }
    my %sum = (rss_kb => 0, pss_kb => 0, processes => 0);
    my @todo = ($root);
    while (defined(my $pid = shift @todo)) {
        push @todo, @{ $children{$pid} || [] };
        open my $status, '<', "/proc/$pid/status" or next;
        my $text = do { local $/; <$status> };
        next unless defined $text && $text =~ /^VmRSS:\s+([0-9]+)/m;
        $sum{rss_kb} += $1;
        $sum{processes}++;
        if (open my $rollup, '<', "/proc/$pid/smaps_rollup") {
            my $r = do { local $/; <$rollup> };
            $sum{pss_kb} += $1 if defined $r && $r =~ /^Pss:\s+([0-9]+)/m;
        }
    }
    return \%sum;
}

1;

__END__

=head1 NAME

CMRXDev::PeakMemory - a command's time and the peak memory of its process tree

=head1 SYNOPSIS

    use lib 'dev/lib';
    use CMRXDev::PeakMemory qw(run_measured);

    my $run = run_measured([ $^X, '-e', 'my $x = "x" x 50_000_000; sleep 1' ],
                           stdout => '/dev/null');
    printf "%.1f s, peak %.0f MB over %d process(es)\n",
        $run->{seconds}, $run->{rss_kb} / 1024, $run->{processes};

=head1 DESCRIPTION

How the scale checks of C<cmrx-dict> measure a run (Linux only: it reads
F</proc>): the command and every process it starts (C<cmrx-dict>'s
workers) are looked at every 0.1 s; the peaks of the sum of their
resident sets (C<rss_kb>: what the bars count; a forked child's pages
shared with its parent count in both) and of their proportional sets
(C<pss_kb>: shared pages divided among those who share them), and the
most processes at once, are returned with the exit status (C<$?>) and
the seconds it took.

=head1 FUNCTIONS

=over 4

=item run_measured(\@command, stdout => $file, stderr => $file)

Runs the command and measures it: C<< { seconds, rss_kb, pss_kb,
processes, status } >>.

=item tree_memory($pid)

C<< { rss_kb, pss_kb, processes } >> of C<$pid> and its descendants now.

=back

=cut
