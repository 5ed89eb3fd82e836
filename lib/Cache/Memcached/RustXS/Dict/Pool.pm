package Cache::Memcached::RustXS::Dict::Pool;

use strict;
use warnings;

use Cache::Memcached::RustXS::Dict::NodeReader ();

our $VERSION = '1.000';

# The nodes of one memcached pool as one source of values: every node's
# keys listed, each key fetched from the node that listed it.
sub connect {
    my ($class, $addresses, %opt) = @_;
    my @nodes = map { Cache::Memcached::RustXS::Dict::NodeReader->connect($_, %opt) } @$addresses;
    return bless { nodes => \@nodes, spec => join(', ', map { $_->spec } @nodes) }, $class;
}

sub nodes { @{ $_[0]{nodes} } }
sub spec  { $_[0]{spec} }

# A pool holds the cache: its keys, summed over the nodes, are counted.
sub counts_keys { 1 }

sub close {
    my ($self) = @_;
    $_->close for @{ $self->{nodes} };
    return;
}

# Calls $on_key->($key, $size, $node) for every key of every node, node by
# node ($node its index in the pool), each node's keys in its own order;
# returns how many.
sub each_key {
    my ($self, $on_key) = @_;
    my $keys = 0;
    for my $node (0 .. $#{ $self->{nodes} }) {
        $keys += $self->{nodes}[$node]->each_key(sub { $on_key->(@_[0, 1], $node) });
    }
    return $keys;
}

# { key => [flags, data] }: each key asked of the node $node_of names (the
# one that listed it), a key it names no node for of every node.
sub get_multi {
    my ($self, $keys, $node_of) = @_;
    my (%of_node, @anywhere);
    for my $key (@$keys) {
        my $node = $node_of ? $node_of->{$key} : undef;
        if (defined $node) { push @{ $of_node{$node} }, $key }
        else               { push @anywhere, $key }
    }
    my %got;
    for my $node (sort { $a <=> $b } keys %of_node) {
        my $values = $self->{nodes}[$node]->get_multi($of_node{$node});
        @got{ keys %$values } = values %$values;
    }
    if (@anywhere) {
        for my $server (@{ $self->{nodes} }) {
            my $values = $server->get_multi(\@anywhere);
            exists $got{$_} or $got{$_} = $values->{$_} for keys %$values;
        }
    }
    return \%got;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Pool - the nodes of a memcached pool as one source of values, for cmrx-dict

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Pool;
    use Cache::Memcached::RustXS::Dict::Sample qw(list_keys fetch_values);
    use Cache::Memcached::RustXS::Dict::SlabModel;

    # As cmrx-dict report --server cache1:11211 --server cache2:11211 ...:
    # every node of the pool, HOST:PORT each (here a pool of one)
    my @nodes = ('127.0.0.1:11211');
    my $pool  = Cache::Memcached::RustXS::Dict::Pool->connect(\@nodes, timeout => 10);
    my $listing = list_keys($pool, delimiter => ':', per_prefix => 1000);
    for my $group (values %{ $listing->{groups} }) {
        my $values = fetch_values($pool, $group);    # each from the node that listed it
        printf "%s: %d keys on %d nodes, %d sampled\n", $group->{prefix}, $group->{keys},
            scalar(grep { $_ } @{ $group->{keys_by_node} }), scalar @$values;
    }
    my $memory = Cache::Memcached::RustXS::Dict::SlabModel->from_server($pool);
    $pool->close;

=head1 DESCRIPTION

A site's memcached is a pool of nodes, each holding a share of every
prefix's keys (the clients hash the keys over the nodes). What a
dictionary saves is weighed against all the keys it serves, so
L<cmrx-dict> given C<--server> once per node samples them as one source:
every node lists its keys (C<lru_crawler metadump all> on each), the
sampler of L<Cache::Memcached::RustXS::Dict::Sample> sees the listings one
after the other, so that a prefix's sample is spread over the nodes in
proportion to the prefix's keys on each, and its key count and item bytes
are summed over them; each sampled key is fetched from the node that
listed it. Anything that takes a L<Cache::Memcached::RustXS::Dict::NodeReader>
as its source takes a pool.

=head1 METHODS

=over 4

=item Cache::Memcached::RustXS::Dict::Pool->connect(\@addresses, timeout => 10)

Connects to every node
(L<Cache::Memcached::RustXS::Dict::NodeReader/"Cache::Memcached::RustXS::Dict::NodeReader-E<gt>connect($address, timeout =E<gt> 10)">:
an address is C<HOST:PORT>, C<[IPv6]:PORT>, the path of a unix socket,
or what C<parse_address> returns); fails as it does.

=item nodes, spec, counts_keys, close

The nodes (L<Cache::Memcached::RustXS::Dict::NodeReader>s, in the order
given), their addresses joined with C<, >, true (a pool's keys are the
cache's, and counted), and every connection closed.

=item each_key(sub { my ($key, $size, $node) = @_ })

Lists every node's keys, node by node, each in its own (LRU) order, with
the index of the node that listed it; returns how many keys in all.

=item get_multi(\@keys, \%node_of)

C<< { key => [ $flags, $data ] } >>: each key asked of the node
C<< $node_of->{$key} >> names (fetch_values gives the group's C<node_of>),
a key without one of every node (the first node that has it wins).

=item The memory model

A pool has no settings of its own:
L<Cache::Memcached::RustXS::Dict::SlabModel/from_server($server)> reads each
node's C<stats settings> and slab classes and forecasts the pool as its
nodes together (L<Cache::Memcached::RustXS::Dict::SlabModel/pool(@models)>).

=back

=head1 SEE ALSO

L<cmrx-dict>'s C<--server>; one node, L<Cache::Memcached::RustXS::Dict::NodeReader>.

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
