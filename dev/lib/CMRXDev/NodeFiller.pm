package CMRXDev::NodeFiller;

# Fills a memcached node the way a production one is filled: many prefixes
# of keys and keys whose first part is an ID, real values. See the POD at
# the end of the file.

use strict;
use warnings;

use Exporter 'import';
use IO::Select ();
use IO::Socket::INET ();

use CMRXDev::Corpus qw(corpus_values);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(fill_node node_values);

my $BATCH_BYTES = 1 << 20;    # bytes of pipelined sets written at once
my $TIMEOUT     = 60;         # seconds to wait for the server's final answer

# The corpus's values (bench/data/values), every family's in file order.
sub node_values {
    my $corpus = corpus_values($CMRXDev::Corpus::DIR);
    return [ map { [ map { $_->[1] } @{ $corpus->{$_} } ] } sort keys %$corpus ];
}

# Sets the keys over one connection, pipelined with noreply, then waits
# for the server to have read them all (a meta no-op answered after them).
sub fill_node {
    my (%opt) = @_;
    my ($host, $port) = $opt{address} =~ /\A(.+):([0-9]+)\z/ or die "fill_node: address HOST:PORT\n";
    my $families  = $opt{families} || node_values();
    my $prefixes  = $opt{prefixes} || 0;
    my $per       = $opt{keys_per_prefix} || 0;
    my $id_keys   = $opt{id_keys} || 0;
    my $sock = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Proto => 'tcp')
        or die "fill_node: cannot connect to $opt{address}: $@\n";
    binmode $sock;
    my ($buf, $sets, $bytes) = ('', 0, 0);
    my $set = sub {
        my ($key, $value) = @_;
        $buf .= "set $key 0 0 " . length($value) . " noreply\r\n$value\r\n";
        $sets++;
        $bytes += length $value;
        if (length $buf >= $BATCH_BYTES) { _write_all($sock, $buf); $buf = '' }
    };
    # Prefix p takes the values of family p modulo the families, key i the
    # i-th of them modulo their count: a site's prefix holds one kind. The
    # keys go round the prefixes (key 0 of each, then key 1, ...), the
    # ID-first keys (%08x%08x:v, values of every family in turn) spread
    # among them: a node too small for them all evicts the oldest of every
    # prefix alike, as a node written over time does. The IDs come from a
    # fixed sequence, so that a node is filled the same each time.
    my @values = map { $families->[ $_ % @$families ] } 0 .. $prefixes - 1;
    my $all = [ map { @$_ } @$families ];
    my $rounds = $per > 0 ? $per : 1;
    my ($x, $id) = ($opt{seed} || 1, 0);
    for my $i (0 .. $rounds - 1) {
        if ($i < $per) {
            $set->(sprintf('p%03d:%d', $_, $i), $values[$_][ $i % @{ $values[$_] } ]) for 0 .. $prefixes - 1;
        }
        my $until = int($id_keys * ($i + 1) / $rounds);
        for (; $id < $until; $id++) {
            $x = (1103515245 * $x + 12345) % 2147483648;
            $set->(sprintf('%08x%08x:v', $x, $id), $all->[ $id % @$all ]);
        }
    }
    _write_all($sock, $buf . "mn\r\n");
    _wait_for($sock, "MN\r\n");
    close $sock;
    return { keys => $sets, bytes => $bytes };
}

sub _write_all {
    my ($sock, $data) = @_;
    my $off = 0;
    while ($off < length $data) {
        my $n = syswrite $sock, $data, length($data) - $off, $off;
        die "fill_node: writing: $!\n" unless defined $n || $!{EINTR};
        $off += $n || 0;
    }
    return;
}

sub _wait_for {
    my ($sock, $line) = @_;
    my ($got, $sel) = ('', IO::Select->new($sock));
    while (index($got, $line) < 0) {
        $sel->can_read($TIMEOUT) or die "fill_node: the server did not answer for $TIMEOUT s\n";
        sysread($sock, $got, 65536, length $got) or die "fill_node: the server closed the connection\n";
    }
    return;
}

1;

__END__

=head1 NAME

CMRXDev::NodeFiller - fill a memcached node like a production one, fast

=head1 SYNOPSIS

    use lib 'dev/lib';
    use CMRXDev::Memcached;
    use CMRXDev::NodeFiller qw(fill_node);

    my $server = CMRXDev::Memcached->start(args => [ '-m', '2048', '-o', 'lru_crawler' ]);
    my $filled = fill_node(address => $server->address, prefixes => 200,
                           keys_per_prefix => 5000, id_keys => 100_000);
    print "$filled->{keys} keys, $filled->{bytes} bytes of values\n";

=head1 DESCRIPTION

The node that the scale checks of C<cmrx-dict> run against, built by the
tests' and the benchmark's code alike: C<prefixes> prefixes named
C<p000>, C<p001>, ... of C<keys_per_prefix> keys each (C<p000:0>,
C<p000:1>, ...), prefix I<p> holding the values of the corpus's family
I<p> modulo the families; and C<id_keys> keys whose first part is an ID
(C<%08x%08x:v>, as some key schemes put the ID first), holding the
corpus's values in turn. The keys are written round the prefixes, the IDs
among them, so that a node too small for them all evicts the oldest keys
of every prefix alike. The same arguments fill a node the same way.

Every C<set> goes over one connection, pipelined with C<noreply> in
writes of 1 MiB; a meta no-op (C<mn>) at the end is answered once the
server has read them all, so the node is full when C<fill_node> returns
(about 20 s for a million keys here). A node smaller than the values
evicts, as a full production node does.

=head1 FUNCTIONS

=over 4

=item fill_node(address => 'HOST:PORT', prefixes => N, keys_per_prefix => K, id_keys => M, families => \@families, seed => 1)

Fills the node; returns C<< { keys => $sets, bytes => $value_bytes } >>.
C<families>: lists of values (C<node_values>'s by default); C<seed>: the
start of the IDs' sequence.

=item node_values

The corpus's values (F<bench/data/values>, through
L<CMRXDev::Corpus>), one list a family.

=back

=cut
