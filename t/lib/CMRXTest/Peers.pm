package CMRXTest::Peers;

# Test helper: external gzip/zlib peers (gzip(1), python3's zlib) and
# files. (Code in a forked child: CMRXTest::Child.) See the POD at the end.

use strict;
use warnings;

use Exporter 'import';

our $VERSION   = '0.01';
our @EXPORT_OK = qw(slurp spew run_filter have_gzip have_python python);


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
    return $file;
}

# Run @cmd with $input on stdin (CMRXTest::Child's run_command: through
# temporary files, so no pipe can deadlock on big data). Returns ($?,
# $stdout_bytes). (CMRXTest::Child is loaded here, not by the files that
# only slurp and spew.)
sub run_filter {
    my ($input, @cmd) = @_;
    require CMRXTest::Child;
    my ($status, $data) = CMRXTest::Child::run_command(\@cmd, stdin => $input);
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

1;

__END__

=head1 NAME

CMRXTest::Peers - run gzip(1) and python3 as peers

=head1 SYNOPSIS

    use CMRXTest::Peers qw(run_filter have_gzip python);

    my ($status, $plain) = run_filter($gz, 'gzip', '-dc') if have_gzip();
    my ($status2, $gz2)  = python(gzip => $data);   # gunzip uncompress gzip compress

=head1 DESCRIPTION

C<run_filter> feeds bytes to a command's stdin and returns its exit status
and stdout, through temporary files. C<python> runs one of four zlib/gzip
operations in python3. To run code in a forked child and measure its
memory, see L<CMRXTest::Child>. C<slurp($file)> reads a file's bytes;
C<spew($file, $data)> writes them and returns C<$file>.

=cut
