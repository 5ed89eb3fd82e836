package Cache::Memcached::RustXS::Zstd::DictionarySet::IDs;

# The IDs of a dictionary set: its identity, and the dictionary IDs it
# gives (the lowest free one, or a random draw no dictionary has or had).

use strict;
use warnings;

use Carp ();
use Digest::SHA ();
use Exporter 5.57 'import';

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw($MAX_ID is_id);

our $VERSION = '1.000';

our @EXPORT_OK = qw(new_identity lowest_unused_id random_unused_id random_u32 random_bytes loaded_state);

# New IDs are drawn at random from here up: an ID below takes only 1 or 2
# bytes in a frame, and is what hand-numbered sets use; every ID from here
# takes 4, so the draw spends no byte that a smaller random range would save.
my $FIRST_RANDOM_ID = 65536;
my $RANDOM_ID_BYTES = 4;
my $ID_DRAWS        = 1000;                    # draws before a random draw gives up
my $IDENTITY_BYTES  = 16;

# 32 hexadecimal digits that no other set has, but by chance.
sub new_identity {
    my $random = random_bytes($IDENTITY_BYTES);
    $random .= join ',', time, $$, rand, {}, $0 if length $random < $IDENTITY_BYTES;
    return substr Digest::SHA::sha256_hex($random), 0, 2 * $IDENTITY_BYTES;
}

# The lowest ID from $from up that is not in %$taken and that this process
# has not loaded.
sub lowest_unused_id {
    my ($taken, $from) = @_;
    $from = 1 unless defined $from;
    Carp::croak("unused_id: from must be 1 to $MAX_ID") unless is_id($from);
    for (my $id = $from; $id <= $MAX_ID; $id++) {
        return $id unless $taken->{$id} || loaded_state($id, '') ne 'not_loaded';
    }
    Carp::croak('unused_id: every dictionary ID is taken');
}

# A random ID that is not in %$taken and that this process has not loaded:
# two sets made apart then share an ID only by chance.
sub random_unused_id {
    my ($taken) = @_;
    my $span = $MAX_ID - $FIRST_RANDOM_ID + 1;
    for (1 .. $ID_DRAWS) {
        my $id = $FIRST_RANDOM_ID + random_u32() % $span;
        return $id unless $taken->{$id} || loaded_state($id, '') ne 'not_loaded';
    }
    Carp::croak("new_id: no free ID found in $ID_DRAWS random draws");
}

# 32 random bits from the system's generator (perl's rand where there is none).
sub random_u32 {
    my $bytes = random_bytes($RANDOM_ID_BYTES);
    return unpack 'N', $bytes if length $bytes == $RANDOM_ID_BYTES;
    return int rand 2**32;
}

# $count bytes from the system's generator, or fewer (none without one):
# each caller says what makes up for them.
sub random_bytes {
    my ($count) = @_;
    my $bytes = '';
    if (open my $fh, '<', '/dev/urandom') {
        binmode $fh;
        CORE::read($fh, $bytes, $count);
        close $fh;
    }
    return $bytes;
}

# Whether dictionary $id is loaded in this process: 'not_loaded', 'same'
# (with $bytes) or 'different' (the engine's answer).
sub loaded_state {
    my ($id, $bytes) = @_;
    # An XSUB booted with Cache::Memcached::RustXS (Zstd.pm loads this
    # module, never the reverse).
    return Cache::Memcached::RustXS::Zstd::_loaded_state($id, $bytes);
}

1;

__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd::DictionarySet::IDs - the IDs a dictionary set gives

=head1 SYNOPSIS

  use Cache::Memcached::RustXS::Zstd::DictionarySet::IDs qw(random_unused_id);

  my $id = random_unused_id({ 70000 => 1 });    # any free ID but 70000

=head1 DESCRIPTION

The part of L<Cache::Memcached::RustXS::Zstd::DictionarySet> that gives
IDs (see L<Cache::Memcached::RustXS::Zstd::DictionarySet/Dictionary IDs>).

=head1 FUNCTIONS

=over 4

=item new_identity()

A set's identity: 32 hexadecimal digits, random.

=item lowest_unused_id(\%taken, $from)

The lowest ID from C<$from> (1) up that is not taken and not loaded in
this process: what C<unused_id> returns.

=item random_unused_id(\%taken)

A random ID from 65536 up, not taken and not loaded: what C<new_id>
returns.

=item random_u32(), random_bytes($count)

Random bits from the system's generator.

=item loaded_state($id, $bytes)

Whether dictionary C<$id> is loaded in this process (C<not_loaded>,
C<same>, C<different>).

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Zstd::DictionarySet>, the set whose
dictionaries get these IDs.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
