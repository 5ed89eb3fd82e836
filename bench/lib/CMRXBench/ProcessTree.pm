package CMRXBench::ProcessTree;

# Runs a command and measures its wall time and the peak resident memory of
# its whole process tree (the command and every process it forks, summed),
# sampled from /proc: what an operator's box sees of a command that forks
# workers, where getrusage reports only the largest single child.

use strict;
use warnings;
use Exporter 'import';
use POSIX ();
use Time::HiRes ();

our @EXPORT_OK = qw(run_measured tree_rss);

my $SAMPLE_EVERY = 0.05;    # seconds between samples of the tree's memory

# The resident bytes of $pid and all its descendants now (Linux /proc).
sub tree_rss {
    my ($root) = @_;
    my (%children, %rss);
    opendir my $dh, '/proc' or return 0;
    for my $pid (grep { /\A[0-9]+\z/ } readdir $dh) {
        open my $fh, '<', "/proc/$pid/stat" or next;
        my $stat = <$fh>;
        close $fh;
        next unless defined $stat && $stat =~ /\)\s+\S\s+([0-9]+)\s/;
        push @{ $children{$1} }, $pid;
        # Field 24 of stat (after the command's parenthesis): rss in pages.
        my @f = split ' ', substr($stat, rindex($stat, ')') + 2);
        $rss{$pid} = $f[21] * 4096;
    }
    closedir $dh;
    my ($sum, @todo) = (0, $root);
    while (defined(my $pid = shift @todo)) {
        $sum += $rss{$pid} || 0;
        push @todo, @{ $children{$pid} || [] };
    }
    return $sum;
}

# Runs @$command with its standard output to $out and its standard error
# to $err (files); returns { seconds, peak_rss (bytes), status }.
sub run_measured {
    my ($command, $out, $err) = @_;
    my $t0 = Time::HiRes::time();
    my $pid = fork;
    die "fork: $!\n" unless defined $pid;
    if (!$pid) {
        open STDOUT, '>', $out or POSIX::_exit(126);
        open STDERR, '>', $err or POSIX::_exit(126);
        exec @$command or POSIX::_exit(127);
    }
    my $peak = 0;
    while (1) {
        my $done = waitpid $pid, POSIX::WNOHANG();
        last if $done == $pid;
        my $rss = tree_rss($pid);
        $peak = $rss if $rss > $peak;
        Time::HiRes::sleep($SAMPLE_EVERY);
    }
    return { seconds => Time::HiRes::time() - $t0, peak_rss => $peak, status => $? >> 8 };
}

1;
