package CMRXDev::NodeFill;

# Fills a memcached fast: sets with noreply, pipelined over one raw socket,
# for the tests and the benchmarks that need nodes of many keys. See the
# POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use IO::Socket::INET ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(fill_node id_first_key);

my $BATCH_BYTES = 256 * 1024;    # requests written at once before the next batch

# Writes every item that $next returns ([key, value] or [key, value,
# flags]; undef when done) to the memcached at $address, with noreply,
# then asks its version so that every set has been read when it returns.
# Returns the number of items written.
sub fill_node {
    my ($address, $next) = @_;
    my $sock = IO::Socket::INET->new(PeerAddr => $address, Proto => 'tcp', Timeout => 10)
        or die "fill_node: cannot connect to $address: $!\n";
    binmode $sock;
    my ($buffer, $count) = ('', 0);
    while (my $item = $next->()) {
        my ($key, $value, $flags) = @$item;
        $buffer .= "set $key " . ($flags || 0) . ' 0 ' . length($value) . " noreply\r\n$value\r\n";
        $count++;
        if (length $buffer >= $BATCH_BYTES) { _write_all($sock, $buffer); $buffer = '' }
    }
    _write_all($sock, "${buffer}version\r\n");
    my $reply = '';
    while ($reply !~ /\r\n\z/) {
        my $got = sysread $sock, $reply, 4096, length $reply;
        die "fill_node: $address closed before its version: $reply\n" unless $got;
    }
    $reply =~ /\AVERSION / or die "fill_node: $address refused a set: $reply";
    close $sock;
    return $count;
}

sub _write_all {
    my ($sock, $bytes) = @_;
    my $at = 0;
    while ($at < length $bytes) {
        my $wrote = syswrite $sock, $bytes, length($bytes) - $at, $at;
        die "fill_node: write failed: $!\n" unless defined $wrote;
        $at += $wrote;
    }
    return;
}

# The key of item $n whose prefix is an ID, as key schemes that put the
# ID first make them: `%08x%08x:v`.
sub id_first_key {
    my ($n) = @_;
    return sprintf '%08x%08x:v', ($n * 2654435761) % 4294967296, $n;
}

1;
__END__

=head1 NAME

CMRXDev::NodeFill - fills a memcached with many keys fast (noreply sets, pipelined)

=head1 SYNOPSIS

    use CMRXDev::NodeFill qw(fill_node id_first_key);

    my $n = 0;
    fill_node('127.0.0.1:11211', sub { $n < 1000 ? [ "user:" . $n++, '{"id":1}' ] : undef });
    my $key = id_first_key(42);    # '........0000002a:v'

=head1 FUNCTIONS

=over 4

=item C<fill_node($address, $next)>

Writes the items C<$next> returns (C<[$key, $value]> or C<[$key, $value,
$flags]>, undef when done) with C<set ... noreply>, in batches of 256 KB
over one socket, then asks C<version>: when it returns, memcached has
read every set. An error reply (a refused set) dies. Returns how many
items were written.

=item C<id_first_key($n)>

The C<$n>-th key of a scheme that puts an ID first: C<%08x%08x:v>, the
first 8 hex digits spread, the last C<$n>.

=back

=cut
