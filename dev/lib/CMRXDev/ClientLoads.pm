package CMRXDev::ClientLoads;

# Records which test files load which memcached client, so that
# script/client-matrix can run a client release, or a host without that
# client, against the files that load it and no others. Loaded into every
# perl of a test run through PERL5OPT; see the POD at the end of the file.

use strict;
use warnings;

our $VERSION = '0.01';

# The clients whose releases the matrix tries, as %INC names them.
my %CLIENT_FILES = (
    'Cache/Memcached.pm'       => 'Cache::Memcached',
    'Cache/Memcached/Fast.pm'  => 'Cache::Memcached::Fast',
);

# The test file a process works for: its own name when it is one (prove
# runs "perl t/NN-name.t"), else the one its parent worked for, which the
# environment carries into every child perl a test starts.
$ENV{CMRX_CLIENT_LOADS_TEST} = $0 if $0 =~ m{(?:\A|/)t/[^/]+\.t\z};

END {
    my $record = $ENV{CMRX_CLIENT_LOADS};
    my $test   = $ENV{CMRX_CLIENT_LOADS_TEST};
    return unless defined $record && defined $test;
    my @loaded = map { $CLIENT_FILES{$_} } grep { $INC{$_} } sort keys %CLIENT_FILES;
    return unless @loaded;
    (my $file = $test) =~ s{\A.*?(?=t/[^/]+\.t\z)}{};
    # One short line per process, appended: O_APPEND writes this small do
    # not interleave between the processes of a parallel run.
    open my $fh, '>>', $record or return;
    syswrite $fh, join("\t", $file, @loaded) . "\n";
    close $fh;
}

# The record read back: { 'Cache::Memcached' => [files], ... }, each list
# sorted and without repeats.
sub read_record {
    my ($class, $record) = @_;
    open my $fh, '<', $record or return {};
    my %files;
    while (my $line = <$fh>) {
        chomp $line;
        my ($file, @clients) = split /\t/, $line;
        $files{$_}{$file} = 1 for @clients;
    }
    return { map { ($_ => [ sort keys %{ $files{$_} } ]) } keys %files };
}

1;

__END__

=head1 NAME

CMRXDev::ClientLoads - which test files load which memcached client

=head1 SYNOPSIS

    # record, over a whole run of t/ (every child perl included):
    PERL5LIB=dev/lib PERL5OPT=-MCMRXDev::ClientLoads \
        CMRX_CLIENT_LOADS=/tmp/loads prove -b t/

    # read back:
    my $files = CMRXDev::ClientLoads->read_record('/tmp/loads');
    # { 'Cache::Memcached' => ['t/11-getparser-memcached.t', ...],
    #   'Cache::Memcached::Fast' => [...] }

=head1 DESCRIPTION

Loaded into every perl of a test run (through C<PERL5OPT>), it notes the
test file a process works for (its own C<$0> when that is a F<t/*.t>, else
the one its parent perl noted, carried in C<CMRX_CLIENT_LOADS_TEST>), and
at exit appends a line to the file C<CMRX_CLIENT_LOADS> names when the
process had Cache::Memcached or Cache::Memcached::Fast loaded. Without
C<CMRX_CLIENT_LOADS> it records nothing.

F<script/client-matrix> records its first row, the one with both
clients (or takes, with C<--loads FILE>, the record of an earlier run, as
F<.ci/run>'s tests step makes it), and runs each row that hides a client
or puts a release of one first over just the files that loaded that
client; a file that loads it only in a child perl counts too.

=head1 FUNCTIONS

=over 4

=item C<< CMRXDev::ClientLoads->read_record($file) >>

The record as a hash reference: client name to the sorted list of test
files (as F<t/NAME.t>) that loaded it. An absent file gives C<{}>.

=back

=cut
