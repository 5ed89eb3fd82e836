package CMRXTest::Peers;

# Test helper: external gzip/zlib peers (gzip(1), python3's zlib), files,
# and a forked child with memory measurement. See the POD at the end.

use strict;
use warnings;

use Exporter 'import';
use File::Temp ();
use POSIX ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(slurp spew run_filter have_gzip have_python python
                    status_kb in_child);

my $TMP = File::Temp->newdir;    # removed at exit
my $seq = 0;

sub slurp {
    my ($file) = @_;
    open my $fh, '<:raw', $file or die "$file: $!";
    local $/;
    return <$fh> // '';
}

sub spew {
    my ($file, $data) = @_;
    open my $fh, '>:raw', $file or die "$file: $!";
    print {$fh} $data;
    close $fh or die "$file: $!";
}

# Run @cmd with $input on stdin (through temporary files, so no pipe can
# deadlock on big data). Returns ($?, $stdout_bytes).
sub run_filter {
    my ($input, @cmd) = @_;
    my ($in, $out) = map { "$TMP/f" . ++$seq . $_ } qw(.in .out);
    spew($in, $input);
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDIN,  '<', $in  or POSIX::_exit(126);
        open STDOUT, '>', $out or POSIX::_exit(126);
        { exec { $cmd[0] } @cmd }
        POSIX::_exit(127);
    }
    waitpid $pid, 0;
    my $status = $?;
    my $data = -e $out ? slurp($out) : '';
    unlink $in, $out;
    return ($status, $data);
}

my %have;
sub have_gzip   { $have{gzip} //= !system('sh', '-c', 'gzip --version >/dev/null 2>&1') }
sub have_python { $have{py} //= !system('sh', '-c', 'python3 -c "import zlib, gzip" >/dev/null 2>&1') }

my %PY = (    # python3 expressions of d (stdin's bytes), written to stdout
    gunzip     => 'zlib.decompress(d, 31)',    # wbits 31: gzip, CRC and ISIZE checked
    uncompress => 'zlib.decompress(d)',
    gzip       => 'gzip.compress(d)',
    compress   => 'zlib.compress(d)',
);

sub python {
    my ($op, $input) = @_;
    my $expr = $PY{$op} // die "unknown python op $op";
    return run_filter($input, 'python3', '-c',
        "import sys, zlib, gzip; d = sys.stdin.buffer.read(); sys.stdout.buffer.write($expr)");
}

# A field of /proc/self/status in kB (VmHWM, VmPeak, ...), or undef.
sub status_kb {
    my ($field) = @_;
    open my $fh, '<', '/proc/self/status' or return;
    while (<$fh>) { return $1 if /^\Q$field\E:\s+(\d+)/ }
    return;
}

# Run $code in a forked child, after resetting the child's peak RSS.
# Returns ($code's result string, VmHWM kB at the end, VmPeak growth kB).
sub in_child {
    my ($code) = @_;
    pipe my $r, my $w or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $r;
        if (open my $c, '>', '/proc/self/clear_refs') { print {$c} "5"; close $c }
        my $peak = status_kb('VmPeak') // 0;
        my $res = eval { $code->() } // "died: $@";
        print {$w} join "\t", $res, status_kb('VmHWM') // -1, (status_kb('VmPeak') // 0) - $peak;
        close $w;
        POSIX::_exit(0);
    }
    close $w;
    my $got = do { local $/; <$r> };
    waitpid $pid, 0;
    return split /\t/, $got // '';
}

1;

__END__

=head1 NAME

CMRXTest::Peers - run gzip(1) and python3 as peers; measure memory in a child

=head1 SYNOPSIS

    use CMRXTest::Peers qw(run_filter have_gzip python in_child status_kb);

    my ($status, $plain) = run_filter($gz, 'gzip', '-dc') if have_gzip();
    my ($status2, $gz2)  = python(gzip => $data);   # gunzip uncompress gzip compress
    my ($result, $hwm_kb, $vmpeak_growth_kb) = in_child(sub { ...; "result" });

=head1 DESCRIPTION

C<run_filter> feeds bytes to a command's stdin and returns its exit status
and stdout, through temporary files. C<python> runs one of four zlib/gzip
operations in python3. C<in_child> runs code in a forked child after writing
C<5> to F</proc/self/clear_refs> (which resets the peak RSS, VmHWM) and
reports the code's string result, the child's VmHWM and how much VmPeak
grew, so a test can assert that something did not allocate much.

=cut
