package CMRXTest::Raw;

# Test helper: talk to a memcached server in its text protocol directly,
# bypassing every client: store exact bytes with exact flags, read what the
# server holds. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use IO::Select ();
use IO::Socket::INET ();

use CMRXTest::DevLib;
use CMRXDev::GetResponse qw(stored_items);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(raw_request raw_set raw_get);

my $TIMEOUT = 5;    # seconds for a connection or a reply

# Sends $request to the server at $addr ("host:port") and returns the reply,
# read until it matches $end.
sub raw_request {
    my ($addr, $request, $end) = @_;
    my $sock = IO::Socket::INET->new(PeerAddr => $addr, Proto => 'tcp', Timeout => $TIMEOUT)
        or die "connect $addr: $@";
    binmode $sock;
    my $off = 0;
    while ($off < length $request) {
        my $n = syswrite $sock, $request, length($request) - $off, $off;
        die "write to $addr: $!" unless defined $n;
        $off += $n;
    }
    my ($buf, $sel) = ('', IO::Select->new($sock));
    while ($buf !~ $end && $sel->can_read($TIMEOUT)) {
        sysread($sock, $buf, 65536, length $buf) or last;
    }
    return $buf;
}

# Stores $data under $key with $flags; true when the server says STORED.
sub raw_set {
    my ($addr, $key, $flags, $data) = @_;
    my $reply = raw_request($addr, "set $key $flags 0 " . length($data) . "\r\n$data\r\n", qr/\r\n\z/);
    return $reply eq "STORED\r\n";
}

# ($flags, $data) the server holds for $key, or () for a miss; dies on a
# reply that is not a get response for $key alone.
sub raw_get {
    my ($addr, $key) = @_;
    my $reply = raw_request($addr, "get $key\r\n", qr/(?:^|\n)END\r\n\z/);
    my $items = eval { stored_items($reply) } or die "raw_get $key from $addr: $@";
    return () unless @$items;
    my ($item, @more) = @$items;
    die "raw_get $key from $addr: the reply holds " . join(', ', map { $_->[0] } @$items) . "\n"
        if @more || $item->[0] ne $key;
    return @$item[1, 2];
}

1;

__END__

=head1 NAME

CMRXTest::Raw - store and read exact bytes on a memcached server

=head1 SYNOPSIS

    use CMRXTest::Raw qw(raw_set raw_get raw_request);
    raw_set($addr, $key, 2, $gzip_bytes) or die;
    my ($flags, $data) = raw_get($addr, $key);

=head1 FUNCTIONS

=over 4

=item raw_request($addr, $request, $end_regex)

One connection, the request written whole, the reply read until it matches
C<$end_regex> (or 5 seconds pass).

=item raw_set($addr, $key, $flags, $data)

C<set> with exptime 0; true on C<STORED>.

=item raw_get($addr, $key)

C<($flags, $data)> of a hit, as the server holds them (compressed data
stays compressed, flag 2 stays set), C<()> for a miss. The reply is read
by L<CMRXDev::GetResponse>'s C<stored_items>; it dies when that refuses
the reply, or when the reply holds another key than C<$key>.

=back

=cut
