package Cache::Memcached::RustXS::Dict::Sample;

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Dict qw(sum_length);
use Cache::Memcached::RustXS::Dict::Report qw(shown);

our $VERSION = '1.000';

our @EXPORT_OK = qw(list_keys fetch_values decode_value sample_source);

our $NONE = '(none)';    # the group of keys without the delimiter

my %SHARED     = Cache::Memcached::RustXS::_constants();
my $F_STORABLE = $SHARED{F_STORABLE};    # the flags Cache::Memcached and ::Fast set
my $F_COMPRESS = $SHARED{F_COMPRESS};
my $GET_BATCH  = 100;    # keys per get request
my $MAX_KEY    = 250;    # the longest key a text-protocol get names
my $PROGRESS_EVERY = 10000;    # keys listed between progress reports

# ---- which keys: groups by prefix, an even sample of each -------------------------

our $MAX_PREFIXES = 1000;    # distinct prefixes tracked before they are taken for IDs
my $EXAMPLES = 3;            # keys shown of the prefixes summed in the rest
# Where keys start with IDs, a prefix of the site holds at least
# 1/($ID_SHARE * max_prefixes) of the item bytes listed (a ten-thousandth
# by default): a node's 200 prefixes hold 1/200 each on average, and some
# a tenth of that; an ID, the bytes of a handful of keys.
my $ID_SHARE = 10;

sub new {
    my ($class, %opt) = @_;
    my $want = $opt{prefixes} ? { map { ($_ => 1) } @{ $opt{prefixes} } } : undef;
    return bless { delimiter => $opt{delimiter}, per_prefix => $opt{per_prefix}, want => $want,
                   max_prefixes => $opt{max_prefixes} || $MAX_PREFIXES, seen_prefixes => 0,
                   nodes => $opt{nodes}, groups => {}, keys => 0, unfetchable => 0, item_bytes => 0 }, $class;
}

# One key of the listing, in listing order, and the index of the node of
# a pool that listed it (undef for a single server). Each group keeps
# every stride-th key it sees, and doubles the stride (halving what it
# kept) when it holds twice the sample: memory stays within 2 * per_prefix
# keys a group, and what is kept stays spread over the whole listing --
# over every node's, listed one after the other, in proportion to the
# group's keys on each. A group's kept keys are one string, a line each
# (the node's index and a space before the key, from a pool: a fetchable
# key has neither spaces nor newlines), not a scalar each: a group's keys
# take what their bytes take, a few hundred prefixes of them 20 MB less a
# process (and cmrx-dict's workers are forks of it).
sub add_key {
    my ($self, $key, $size, $node) = @_;
    my $at = index $key, $self->{delimiter};
    my $prefix = $at < 0 ? $NONE : substr $key, 0, $at;
    $self->{keys}++;
    $self->{item_bytes} += $size || 0;
    return if $self->{want} && !$self->{want}{$prefix};
    my $g = $self->{groups}{$prefix} || $self->_new_group($prefix, $at >= 0, $key);
    $g->{keys}++;
    $g->{keys_by_node}[$node]++ if defined $node;
    $g->{item_bytes} += $size || 0;
    # A text-protocol get cannot name keys with spaces or control bytes
    # (binary-protocol clients can store them).
    if (length $key > $MAX_KEY || $key =~ /[\x00-\x20\x7f]/) {
        $g->{unfetchable}++;
        $self->{unfetchable}++;
    } elsif ($g->{seen}++ % $g->{stride} == 0) {
        $g->{kept} .= (defined $node ? "$node $key" : $key) . "\n";
        if (++$g->{kept_count} >= 2 * $self->{per_prefix}) {
            my @kept = split /\n/, $g->{kept};
            $g->{kept} = join '', map { "$kept[$_]\n" } grep { $_ % 2 == 0 } 0 .. $#kept;
            $g->{kept_count} = int((@kept + 1) / 2);
            $g->{stride} *= 2;
        }
    }
    return;
}

# A group for a prefix not seen yet. Keys that start with an ID make a
# prefix a key: past twice max_prefixes groups, those that hold the
# fewest keys are summed into the rest (their keys, bytes and a few
# examples), so that the groups tracked stay at most twice max_prefixes,
# the ones that hold the memory among them.
sub _new_group {
    my ($self, $prefix, $delimited, $key) = @_;
    $self->{seen_prefixes}++;
    $self->_sum_into_rest($self->{max_prefixes}) if keys %{ $self->{groups} } >= 2 * $self->{max_prefixes};
    return $self->{groups}{$prefix} = {
        prefix => $prefix, delimited => ($delimited ? 1 : 0), example => $key,
        keys => 0, item_bytes => 0, unfetchable => 0,
        seen => 0, stride => 1, kept => '', kept_count => 0,
    };
}

# Keeps the $keep groups of the most keys (then item bytes, then by name):
# an ID holds a key or a few, and the listing goes slab class by slab
# class, so that a prefix of the site may have few bytes listed yet, but
# keys; the others go into the rest.
sub _sum_into_rest {
    my ($self, $keep) = @_;
    my $groups = $self->{groups};
    my @order = sort { $groups->{$b}{keys} <=> $groups->{$a}{keys}
                       || $groups->{$b}{item_bytes} <=> $groups->{$a}{item_bytes} || $a cmp $b } keys %$groups;
    my $rest = $self->{rest} ||= { prefixes => 0, keys => 0, item_bytes => 0, unfetchable => 0, examples => [] };
    for my $prefix (@order[ $keep .. $#order ]) {
        my $g = delete $groups->{$prefix};
        $rest->{prefixes}++;
        $rest->{$_} += $g->{$_} for qw(keys item_bytes unfetchable);
        push @{ $rest->{examples} }, $g->{example} if @{ $rest->{examples} } < $EXAMPLES;
    }
    return;
}

# What the listing gave: { keys, unfetchable, groups => { prefix => group } },
# each group with its sample (at most per_prefix keys, evenly spaced over
# what it kept, in key order) and, from a pool, the node of each sampled
# key and how many of them each node gave. When more than max_prefixes
# prefixes were listed, the groups kept are those that hold at least
# 1/(10 * max_prefixes) of the item bytes listed (the prefixes of the site,
# not its IDs); the others are summed in rest => { prefixes, keys, item_bytes,
# unfetchable, examples } (at most max_prefixes groups stay).
sub listing {
    my ($self) = @_;
    my $per = $self->{per_prefix};
    if ($self->{seen_prefixes} > $self->{max_prefixes}) {
        # By keys when the listing gives no sizes.
        my $by = $self->{item_bytes} ? 'item_bytes' : 'keys';
        my $floor = $self->{$by} / ($ID_SHARE * $self->{max_prefixes});
        my $holding = grep { $_->{$by} >= $floor } values %{ $self->{groups} };
        $self->_sum_into_rest($holding < $self->{max_prefixes} ? $holding : $self->{max_prefixes});
        $self->{rest}{seen_prefixes} = $self->{seen_prefixes};
    }
    for my $g (values %{ $self->{groups} }) {
        next unless defined $g->{kept};
        my $kept = [ split /\n/, delete $g->{kept} ];
        my $n = @$kept;
        my @pick = $n <= $per ? @$kept : @$kept[ map { int($_ * $n / $per) } 0 .. $per - 1 ];
        # A key two nodes list (a stale copy) is sampled once.
        my (%node_of, @sampled);
        for my $kept_key (@pick) {
            my ($node, $key) = $self->{nodes} ? split(/ /, $kept_key, 2) : (undef, $kept_key);
            next if exists $node_of{$key};
            $node_of{$key} = $node;
            push @sampled, $key;
        }
        $g->{sample} = [ sort @sampled ];
        if ($self->{nodes}) {
            $g->{node_of} = \%node_of;
            $g->{sampled_by_node} = [ (0) x $self->{nodes} ];
            $g->{keys_by_node}[$_] ||= 0 for 0 .. $self->{nodes} - 1;
            $g->{sampled_by_node}[ $node_of{$_} ]++ for @sampled;
        }
        delete @{$g}{qw(seen stride example kept_count)};
    }
    return { keys => $self->{keys}, unfetchable => $self->{unfetchable}, groups => $self->{groups},
             ($self->{rest} ? (rest => $self->{rest}, max_prefixes => $self->{max_prefixes}) : ()) };
}

sub list_keys {
    my ($server, %opt) = @_;
    my $progress = $opt{progress} || sub { };
    # A pool's nodes, which its listing names by their index.
    my $nodes;
    $nodes = () = $server->nodes if $server->can('nodes');
    my $sample = __PACKAGE__->new(%opt, nodes => $nodes);
    $progress->(0);
    $server->each_key(sub {
        $sample->add_key(@_);
        $progress->($sample->{keys}) if $sample->{keys} % $PROGRESS_EVERY == 0;
    });
    return $sample->listing;
}

# ---- their values ------------------------------------------------------------------

# Fetches the group's sampled keys and returns their values, decoded, in
# the sample's (key) order; counts in the group what was stored and what
# was skipped.
sub fetch_values {
    my ($server, $g, %opt) = @_;
    my $progress = $opt{progress} || sub { };
    my $keys = $g->{sample};
    @{$g}{qw(fetched gone stored_bytes compressed storable undecodable)} = (0) x 6;
    $g->{skip_reasons} = {};
    # The key of each value returned, and how many stored values name each
    # zstd dictionary ID (decoded or not).
    $g->{value_keys} = [];
    $g->{dictionary_ids} = {};
    # From a pool: how many values each node gave.
    $g->{values_by_node} = [ (0) x @{ $g->{sampled_by_node} } ] if $g->{sampled_by_node};
    my @values;
    for (my $i = 0; $i < @$keys; $i += $GET_BATCH) {
        my $end = $i + $GET_BATCH <= @$keys ? $i + $GET_BATCH : scalar @$keys;
        my @batch = @$keys[ $i .. $end - 1 ];
        $progress->($end, scalar @$keys);
        my $got = $server->get_multi(\@batch, $g->{node_of});
        for my $key (@batch) {
            my $item = $got->{$key};
            if (!$item) { $g->{gone}++; next }
            my ($flags, $data) = @$item;
            $g->{fetched}++;
            $g->{stored_bytes} += length $data;
            $g->{compressed}++ if $flags & $F_COMPRESS;
            $g->{storable}++   if $flags & $F_STORABLE;
            if ($flags & $F_COMPRESS) {
                my $id = Cache::Memcached::RustXS::Zstd::frame_dictionary_id($data);
                $g->{dictionary_ids}{$id}++ if $id;
            }
            my ($value, $why) = decode_value($flags, $data);
            if (defined $value) {
                push @values, $value;
                push @{ $g->{value_keys} }, $key;
                $g->{values_by_node}[ $g->{node_of}{$key} ]++ if $g->{values_by_node};
                next;
            }
            $g->{undecodable}++;
            $g->{skip_reasons}{$why}++;
        }
    }
    $g->{values} = scalar @values;
    $g->{raw_bytes} = sum_length(\@values);
    return \@values;
}

# Every group of the source's keys listed, sampled and fetched, one after
# another: the listing, its groups largest (item bytes) first, and how
# many sampled stored values name each zstd dictionary ID, over every
# group. Each group's pairs ([key, value] of its decoded values, in key
# order) go to each_group as soon as they are fetched, and are not kept:
# what the source holds never waits in memory for the other prefixes.
sub sample_source {
    my ($source, %opt) = @_;
    my $progress = $opt{progress} || sub { };
    my $each_group = $opt{each_group} || sub { };
    my $listing = list_keys($source, delimiter => $opt{delimiter}, per_prefix => $opt{per_prefix},
                            prefixes => $opt{prefixes}, max_prefixes => $opt{max_prefixes},
                            progress => $opt{listing_progress});
    my @groups = sort { $b->{item_bytes} <=> $a->{item_bytes} || $a->{prefix} cmp $b->{prefix} }
                 values %{ $listing->{groups} };
    my %named;
    for my $i (0 .. $#groups) {
        my $g = $groups[$i];
        my $tag = 'prefix ' . shown($g->{prefix});
        my $values = fetch_values($source, $g, progress => sub { $progress->("$tag: fetching $_[0]/$_[1]") });
        my $keys = delete $g->{value_keys};
        delete $g->{node_of};
        $named{$_} += $g->{dictionary_ids}{$_} for keys %{ $g->{dictionary_ids} };
        $each_group->($g, [ map { [ $keys->[$_], $values->[$_] ] } 0 .. $#$values ], $i, \@groups);
    }
    return { listing => $listing, groups => \@groups, dictionary_ids => \%named };
}

# A stored value as the clients read it, before any thaw: one flagged
# F_COMPRESS is decoded by the engine (gzip, zlib or zstd by its magic
# number); Storable's frozen bytes stay as they are. (undef, why) when it
# does not decode.
sub decode_value {
    my ($flags, $data) = @_;
    return ($data) unless $flags & $F_COMPRESS;
    my ($value, $format, $missing) = Cache::Memcached::RustXS::decode_compressed($data);
    return ($value) if defined $value;
    return (undef, 'flagged compressed, but not gzip, zlib or zstd') unless defined $format;
    return (undef, "zstd, with dictionary $missing, which is not loaded (--dictionary)") if defined $missing;
    return (undef, $format eq 'zstd' ? 'zstd that does not decompress (corrupt, or too large)'
                                     : "$format that does not decompress");
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Sample - which values cmrx-dict looks at: keys by prefix, sampled evenly, fetched and decoded

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::NodeReader;
    use Cache::Memcached::RustXS::Dict::Sample qw(list_keys fetch_values decode_value);

    my $server  = Cache::Memcached::RustXS::Dict::NodeReader->connect('127.0.0.1:11211');
    my $listing = list_keys($server, delimiter => ':', per_prefix => 1000);
    for my $prefix (sort keys %{ $listing->{groups} }) {
        my $group  = $listing->{groups}{$prefix};
        my $values = fetch_values($server, $group);    # decoded, in key order
        printf "%s: %d keys, %d sampled, %d values\n",
            $prefix, $group->{keys}, scalar @{ $group->{sample} }, scalar @$values;
    }

    # Without a server: the same grouping and sampling of any listing
    my $sample = Cache::Memcached::RustXS::Dict::Sample->new(delimiter => ':', per_prefix => 2);
    $sample->add_key($_, 100) for map { "user:$_" } 1 .. 10;
    my $users = $sample->listing->{groups}{user};   # keys 10, sample of 2

    my ($value, $why) = decode_value(2, "\x1f\x8b not quite gzip");   # (undef, why)

=head1 DESCRIPTION

The sampling of L<cmrx-dict> (its manual says how keys are sampled and
values read): grouping a source's keys by prefix, an even sample of each
group, fetching and decoding the sampled values, counting what was stored
and what was skipped. A source is a memcached server
(L<Cache::Memcached::RustXS::Dict::NodeReader>) or files of get responses
(L<Cache::Memcached::RustXS::Dict::Files>): anything with C<each_key> and
C<get_multi> as they have them. Measuring the values is
L<Cache::Memcached::RustXS::Dict::Measure>'s business.

=head1 FUNCTIONS

Exported on request: C<list_keys>, C<fetch_values>, C<sample_source>,
C<decode_value>.

=over 4

=item list_keys($server, delimiter => ':', per_prefix => 1000, prefixes => \@prefixes, max_prefixes => 1000, progress => sub { my ($keys_so_far) = @_ })

Lists the keys of C<$server> (a L<Cache::Memcached::RustXS::Dict::NodeReader>,
a L<Cache::Memcached::RustXS::Dict::Pool> of them, or
L<Cache::Memcached::RustXS::Dict::Files>) through a sampler (below) and
returns its C<listing>. A pool's nodes are listed one after the other, so
that a group's sample is spread over them in proportion to its keys on
each. C<prefixes>: keep
only these groups (all by default). C<progress> is called with 0 first
and then every 10,000 keys.

=item fetch_values($server, $group, progress => sub { my ($done, $total) = @_ })

Fetches the keys of C<< $group->{sample} >> (100 to a C<get>; from a pool,
each from the node that listed it, C<< $group->{node_of} >>) and returns
their values decoded by L</decode_value($flags, $data)>, in key order. It
adds to the group: C<fetched>, C<gone> (listed, but not there any more),
C<stored_bytes> (as stored), C<compressed> and C<storable> (values so
flagged), C<undecodable> and C<skip_reasons> (C<< { why => count } >>),
C<values> and C<raw_bytes> (the decoded values returned), C<value_keys>
(the key of each value returned, in the same order) and C<dictionary_ids>
(C<< { id => count } >>: how many of the stored values are zstd frames
naming each dictionary ID, decodable or not); from a pool, also
C<values_by_node> (how many of the values returned each node gave).

=item sample_source($source, delimiter => ':', per_prefix => 1000, prefixes => \@prefixes, max_prefixes => 1000, each_group => sub { my ($group, $pairs, $index, $groups) = @_ }, progress => sub { my ($what) = @_ }, listing_progress => sub { })

What the set commands (C<train --all>, C<report --dictionaries>,
C<prune>) look at: the source listed by C<list_keys> and every group's
sample fetched by C<fetch_values> (both above), one group after another,
largest (item bytes) first. Each group's pairs (C<[$key, $value]> of its
decoded values, in key order) are given to C<each_group> with the group
(what C<fetch_values> counts), its index and all the groups, and are not
kept: the values of one prefix at a time are held here, whatever the
number of prefixes. Returns C<< { listing, groups => \@groups,
dictionary_ids => { id => count } } >>: the groups in that order, and how
many sampled stored values are zstd frames naming each dictionary ID, over
every group. C<progress> is called with what is being fetched.
C<max_prefixes>: as the sampler's.

=item decode_value($flags, $data)

A stored value as Cache::Memcached and Cache::Memcached::Fast read it,
before any thaw: with C<F_COMPRESS> (2) in C<$flags> it is decoded by
L<Cache::Memcached::RustXS/decode_compressed($bytes)> (gzip, zlib or a zstd
frame, told by its magic number, with any loaded dictionary); Storable's
frozen bytes (C<F_STORABLE>, 1) stay as they are. Returns C<($value)>, or
C<(undef, $why)>.

=back

=head2 The sampler

=over 4

=item Cache::Memcached::RustXS::Dict::Sample->new(delimiter => ':', per_prefix => 1000, prefixes => \@prefixes, max_prefixes => 1000, nodes => $count)

C<max_prefixes>: past twice that many groups, those of the fewest keys
are summed into the rest (keys that start with an ID; L<cmrx-dict/Large
nodes>).

=item $sample->add_key($key, $item_size, $node)

One key of a listing, in the listing's order (C<$node>: the index of the
node of a pool that listed it; undef for one server). The key's group is its
prefix: what comes before the first C<delimiter>, or C<(none)>
(C<$Cache::Memcached::RustXS::Dict::Sample::NONE>) without one. Keys a
text-protocol C<get> cannot name (over 250 bytes, spaces, control bytes)
are counted as C<unfetchable>, never sampled. Each group keeps at most
twice C<per_prefix> keys, spread over the whole listing.

=item $sample->listing

C<< { keys => $listed, unfetchable => $count, groups => { $prefix => $group } } >>;
each group has C<prefix>, C<delimited>, C<keys>, C<item_bytes> (the sum
of their item sizes), C<unfetchable>, and C<sample>: at most C<per_prefix>
of its keys, evenly spaced over the listing, sorted. The same listing in
the same order gives the same sample. Sampled with C<< nodes => $count >>
(a pool's listing: C<list_keys> gives it), a group also has
C<keys_by_node> and C<sampled_by_node> (its keys and sampled keys on each
node, by index) and C<node_of> (C<< { sampled key => node } >>); a key
that two nodes list is sampled once. When more than C<max_prefixes>
prefixes were listed, only the groups holding at least 1/(10 x
C<max_prefixes>) of the listed item bytes stay (at most C<max_prefixes>),
and the listing has C<max_prefixes> and C<< rest => { seen_prefixes,
prefixes, keys, item_bytes, unfetchable, examples } >>: how many prefixes
were listed, and those summed, with three of their keys.

=back

=head1 SEE ALSO

L<cmrx-dict>; where the keys come from,
L<Cache::Memcached::RustXS::Dict::NodeReader>; what is measured of the
sample, L<Cache::Memcached::RustXS::Dict::Measure>.

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
