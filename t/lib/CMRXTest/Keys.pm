package CMRXTest::Keys;

# Test helper: which server Cache::Memcached 1.30 sends a key to, and keys
# that go to a chosen server. See the POD at the end of the file.

use strict;
use warnings;

use Carp   qw(croak);
use Exporter 'import';

our $VERSION   = '0.01';
our @EXPORT_OK = qw(server_for keys_for);

# Cache::Memcached's own mapping (get_multi, get_sock): bucket
# ((crc32(key) >> 16) & 0x7fff) % bucketcount, on the key without namespace.
# Rehashing only happens when a server cannot be connected to; these tests
# never ask for keys of such servers.
sub server_for {
    my ($memd, $key) = @_;
    $memd->init_buckets;
    my $hv = Cache::Memcached::_hashfunc($key);
    return $memd->{buckets}[ $hv % $memd->{bucketcount} ];
}

# The first $n keys "${prefix}0", "${prefix}1", ... that map to $address.
sub keys_for {
    my ($memd, $address, $n, $prefix) = @_;
    $prefix //= 'k';
    my @keys;
    for (my $i = 0; @keys < $n; $i++) {
        croak "no key for $address after $i tries" if $i > 100_000;
        push @keys, "$prefix$i" if server_for($memd, "$prefix$i") eq $address;
    }
    return @keys;
}

1;

__END__

=head1 NAME

CMRXTest::Keys - map keys to servers the way Cache::Memcached does

=head1 SYNOPSIS

    use CMRXTest::Keys qw(server_for keys_for);
    my $addr = server_for($memd, 'some_key');       # "127.0.0.1:PORT"
    my @keys = keys_for($memd, $fake->address, 3, 'bad');

=head1 DESCRIPTION

C<server_for($memd, $key)> is the server string (as given in C<servers>)
that a L<Cache::Memcached> 1.30 object sends C<$key> (without namespace)
to, by the client's own C<_hashfunc> and buckets. C<keys_for> returns the
first C<$n> keys C<$prefix . N> that go to C<$address>.

=cut
