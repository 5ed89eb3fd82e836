package Cache::Memcached::RustXS::Dict::SlabModel;

use strict;
use warnings;

use Carp ();

our $VERSION = '1.000';

# memcached 1.6 on a 64-bit host: the fixed part of every item (sizeof
# item), the CAS value each item carries unless the server runs with -C,
# the NUL after the key, the "\r\n" after the value, the client flags kept
# only when they are not 0.
my $ITEM_HEADER  = 48;
my $CAS_BYTES    = 8;
my $KEY_NUL      = 1;
my $VALUE_CRLF   = 2;
my $FLAGS_BYTES  = 4;
my $CHUNK_ALIGN  = 8;     # every chunk size is a multiple of this
my $MAX_CLASSES  = 63;    # MAX_NUMBER_OF_SLAB_CLASSES - 1
my $CHUNK_HEADER = 48;    # sizeof(item_chunk): the head of each chunk of a chunked item

my %DEFAULT = (
    growth_factor  => 1.25,           # -f
    chunk_size     => 48,             # -n: the data room of the smallest item
    item_size_max  => 1024 * 1024,    # -I
    slab_chunk_max => 512 * 1024,     # -o slab_chunk_max: half a page
    slab_page_size => 1024 * 1024,    # memory is handed to classes in pages of 1 MiB
    cas            => 1,              # without -C
    slab_reassign  => 1,              # pages are whole pages (1.6's default); off: chunks * per page
    memory_limit   => 64 * 1024 * 1024,    # -m 64, memcached's default
);
my @OPTIONS = (sort(keys %DEFAULT), 'chunk_sizes');

sub new {
    my ($class, %opt) = @_;
    my @unknown = grep { my $o = $_; !grep { $_ eq $o } @OPTIONS } sort keys %opt;
    Carp::croak("Cache::Memcached::RustXS::Dict::SlabModel->new: unknown option(s): @unknown") if @unknown;
    my $self = bless { %DEFAULT, %opt }, $class;
    for my $name (qw(chunk_size item_size_max slab_chunk_max slab_page_size memory_limit)) {
        Carp::croak("Cache::Memcached::RustXS::Dict::SlabModel->new: $name must be a whole number of bytes above 0")
            unless defined $self->{$name} && $self->{$name} =~ /\A[0-9]+\z/ && $self->{$name} > 0;
    }
    Carp::croak('Cache::Memcached::RustXS::Dict::SlabModel->new: growth_factor must be a number above 1')
        unless defined $self->{growth_factor} && $self->{growth_factor} =~ /\A[0-9]+(?:\.[0-9]+)?\z/
            && $self->{growth_factor} > 1;
    $self->{cas} = $self->{cas} ? 1 : 0;
    $self->{slab_reassign} = $self->{slab_reassign} ? 1 : 0;
    if ($opt{chunk_sizes}) {
        my @sizes = sort { $a <=> $b } @{ $opt{chunk_sizes} };
        Carp::croak('Cache::Memcached::RustXS::Dict::SlabModel->new: chunk_sizes must be whole numbers of bytes')
            if !@sizes || grep { !/\A[0-9]+\z/ || !$_ } @sizes;
        $self->{chunk_sizes} = \@sizes;
        $self->{classes_from} = 'given';
    } else {
        $self->{chunk_sizes} = [ $self->standard_chunk_sizes ];
        $self->{classes_from} = 'computed';
    }
    return $self;
}

# The slab classes memcached 1.6 makes (slabs_init): from the item header
# plus -n, each the previous times -f, rounded up to 8 bytes, until
# slab_chunk_max / -f; the last class is slab_chunk_max itself.
sub standard_chunk_sizes {
    my ($self) = @_;
    my @sizes;
    my $size = $ITEM_HEADER + $self->{chunk_size};
    while (@sizes < $MAX_CLASSES - 1 && $size < $self->{slab_chunk_max} / $self->{growth_factor}) {
        $size += $CHUNK_ALIGN - $size % $CHUNK_ALIGN if $size % $CHUNK_ALIGN;
        push @sizes, $size;
        $size = int($size * $self->{growth_factor});
    }
    push @sizes, $self->{slab_chunk_max};
    return @sizes;
}

sub from_stats {
    my ($class, $settings, $in_use) = @_;
    Carp::croak('Cache::Memcached::RustXS::Dict::SlabModel->from_stats: the stats settings must be a hash reference')
        unless ref $settings eq 'HASH';
    my %opt;
    $opt{growth_factor}  = $settings->{growth_factor}  if defined $settings->{growth_factor};
    $opt{chunk_size}     = $settings->{chunk_size}     if defined $settings->{chunk_size};
    $opt{item_size_max}  = $settings->{item_size_max}  if defined $settings->{item_size_max};
    $opt{slab_chunk_max} = $settings->{slab_chunk_max} if defined $settings->{slab_chunk_max};
    $opt{memory_limit}   = $settings->{maxbytes}       if defined $settings->{maxbytes};
    $opt{cas} = $settings->{cas_enabled} eq 'yes' ? 1 : 0 if defined $settings->{cas_enabled};
    $opt{slab_reassign} = $settings->{slab_reassign} eq 'yes' ? 1 : 0 if defined $settings->{slab_reassign};
    my $self = $class->new(%opt);
    $self->{classes_from} = 'stats settings';
    # Classes in use that the computation does not know (a server started
    # with -o slab_sizes, or another memcached): the server's word wins.
    my %known = map { ($_ => 1) } @{ $self->{chunk_sizes} };
    my @odd = grep { !$known{$_} } @{ $in_use || [] };
    if (@odd) {
        my %all = map { ($_ => 1) } @$in_use, $self->{slab_chunk_max};
        $self->{chunk_sizes} = [ sort { $a <=> $b } keys %all ];
        $self->{classes_from} = 'stats slabs';
    }
    return $self;
}

# The model of a server, or of a pool: each node's own (its settings and
# the classes it uses), the pool's made of them.
sub from_server {
    my ($class, $server) = @_;
    my @nodes = $server->can('nodes') ? $server->nodes : ($server);
    my @models = map { $class->from_stats($_->settings, [ $_->slab_chunk_sizes ]) } @nodes;
    return @models == 1 ? $models[0] : $class->pool(@models);
}

# A pool of nodes as one memory. Clients spread the keys over the nodes
# evenly (by a hash of the key), so each node is written the same mix of
# items and fills its own memory with them: the pool holds the sum of its
# nodes' forecasts, each node with its own settings and -m (nodes alike
# are forecast once). A model of their classes merged would have classes
# no node has. The memory limit is the nodes' together; the rest (an
# item's chunk, the settings) is the first node's.
sub pool {
    my ($class, @models) = @_;
    Carp::croak('Cache::Memcached::RustXS::Dict::SlabModel->pool: no node') unless @models;
    my (%alike, @shapes);
    for my $m (@models) {
        my $shape = join ' ', (map { "$_=$m->{$_}" } sort keys %DEFAULT), @{ $m->{chunk_sizes} };
        push @shapes, [ $m, 0 ] unless $alike{$shape};
        ($alike{$shape} ||= $shapes[-1])->[1]++;
    }
    my $limit = 0;
    $limit += $_->{memory_limit} for @models;
    my $first = $models[0];
    my $self = bless { %$first, chunk_sizes => [ @{ $first->{chunk_sizes} } ], memory_limit => $limit,
                       nodes => \@shapes }, ref $first;
    $self->{classes_from} = sprintf '%s, %d nodes%s', $first->{classes_from}, scalar @models,
                                    @shapes == 1 ? ' alike' : ' in ' . @shapes . ' settings';
    return $self;
}

sub chunk_sizes   { @{ $_[0]{chunk_sizes} } }

# slab_chunk_max over the largest class below it: at most -f when the
# classes reach it, more when memcached's 63 classes run out first (with
# -f 1.08 they end at 13,800 bytes, and an item of 14 KB takes a chunk of
# slab_chunk_max, 512 KB by default).
sub top_gap {
    my ($self) = @_;
    my @sizes = @{ $self->{chunk_sizes} };
    return @sizes > 1 ? $sizes[-1] / $sizes[-2] : 1;
}
sub item_header   { $ITEM_HEADER }    # the bytes of an item before -n's data room
sub classes_from  { $_[0]{classes_from} }
sub memory_limit  { $_[0]{memory_limit} }
sub item_size_max { $_[0]{item_size_max} }
sub settings {
    my ($self) = @_;
    return { map { ($_ => $self->{$_}) } sort keys %DEFAULT };
}

sub item_size {
    my ($self, $key_length, $value_length, $flags) = @_;
    return $ITEM_HEADER + ($self->{cas} ? $CAS_BYTES : 0) + $key_length + $KEY_NUL
         + $value_length + $VALUE_CRLF + ($flags ? $FLAGS_BYTES : 0);
}

sub item_memory {
    my ($self, $key_length, $value_length, $flags) = @_;
    my $size = $self->item_size($key_length, $value_length, $flags);
    return undef if $size > $self->{item_size_max};
    return $self->chunk_for($size);
}

# The smallest class that holds $size bytes; above the largest class, whole
# chunks of it and the smallest class for the rest (memcached chains such
# items; the chain's own small headers are not counted).
sub chunk_for {
    my ($self, $size) = @_;
    my $sizes = $self->{chunk_sizes};
    my $largest = $sizes->[-1];
    my $memory = 0;
    while ($size > $largest) {
        $memory += $largest;
        $size -= $largest;
    }
    my ($lo, $hi) = (0, $#$sizes);
    while ($lo < $hi) {
        my $mid = int(($lo + $hi) / 2);
        if ($sizes->[$mid] >= $size) { $hi = $mid } else { $lo = $mid + 1 }
    }
    return $memory + $sizes->[$lo];
}

sub resident_items {
    my ($self, $items, %opt) = @_;
    my $pages = int(($opt{memory_limit} || $self->{memory_limit}) / $self->{slab_page_size});
    my (%capacity, %held);
    my $resident = 0;
    for my $item (@$items) {
        my $chunk = $self->item_memory(@$item);
        next unless defined $chunk;
        if (($held{$chunk} || 0) < ($capacity{$chunk} || 0)) {
            $held{$chunk}++;
            $resident++;
        } elsif ($pages > 0) {
            $pages -= $chunk > $self->{slab_page_size} ? int($chunk / $self->{slab_page_size}) + 1 : 1;
            $capacity{$chunk} += $chunk >= $self->{slab_page_size} ? 1 : int($self->{slab_page_size} / $chunk);
            $held{$chunk}++;
            $resident++;
        }
        # else: the class is full and no page is left, so memcached evicts
        # one of the class's own items: the count stays.
    }
    return $resident;
}

# A copy of the model with other settings (the classes computed afresh).
sub with_settings {
    my ($self, %change) = @_;
    my %opt = map { ($_ => $self->{$_}) } keys %DEFAULT;
    return ref($self)->new(%opt, %change);
}

# The chunks an item takes, { chunk size => count }, as memcached 1.6
# allocates them (do_item_alloc, do_item_alloc_chunk): one chunk of the
# smallest class that holds it; an item over slab_chunk_max is a header
# (key, flags, CAS and a chunk head) in its own class, and its value and
# "\r\n" in chunks of at most slab_chunk_max, each with a 48-byte head,
# the last one of the smallest class that holds the rest.
sub item_chunks {
    my ($self, $key_length, $value_length, $flags) = @_;
    my $size = $self->item_size($key_length, $value_length, $flags);
    return undef if $size > $self->{item_size_max};
    my $largest = $self->{slab_chunk_max};
    return { $self->_class_of($size) => 1 } if $size <= $largest;
    my %chunks;
    $chunks{ $self->_class_of($size - $value_length - $VALUE_CRLF + $CHUNK_HEADER) }++;
    my $remain = $value_length + $VALUE_CRLF;
    while ($remain > 0) {
        my $want = $remain + $CHUNK_HEADER;
        my $chunk = $want >= $largest ? $largest : $self->_class_of($want);
        $chunks{$chunk}++;
        $remain -= $chunk - $CHUNK_HEADER;
    }
    return \%chunks;
}

sub _class_of {
    my ($self, $size) = @_;
    my $sizes = $self->{chunk_sizes};
    my ($lo, $hi) = (0, $#$sizes);
    while ($lo < $hi) {
        my $mid = int(($lo + $hi) / 2);
        if ($sizes->[$mid] >= $size) { $hi = $mid } else { $lo = $mid + 1 }
    }
    return $sizes->[$lo];
}

# The bytes of memory one page of a class counts against -m: a whole page
# with slab_reassign (memcached 1.6's default), else only its chunks.
sub _page_bytes {
    my ($self, $chunk) = @_;
    my $per_page = int($self->{slab_page_size} / $chunk) || 1;
    return $self->{slab_reassign} ? $self->{slab_page_size} : $chunk * $per_page;
}

# How many items the server holds once written past its memory with items
# of these sizes, [$key_length, $value_length, $flags, $times], in this
# order over and over ($times: written that many times in a row, 1 if not
# given), until every class has filled its last page: memcached hands a
# class a page when it has no free chunk, while the pages counted so far
# leave room under -m (a class without any page gets its first regardless);
# a class that gets none evicts its own items. The whole rounds are counted
# by class; the round in which memory runs out, item by item. In list
# context also the rounds written to fill it.
sub forecast_items {
    my ($self, $items) = @_;
    return $self->_pool_forecast($items) if $self->{nodes};
    my (@kinds, %per_round, %chunks_of);
    for my $item (@$items) {
        # Items of one shape share their chunks: a sample repeats shapes.
        my $shape = join ',', @{$item}[0 .. 2];
        my $chunks = exists $chunks_of{$shape} ? $chunks_of{$shape}
                   : ($chunks_of{$shape} = $self->item_chunks(@{$item}[0 .. 2]));
        my $times = defined $item->[3] ? $item->[3] : 1;
        next unless $chunks && $times > 0;
        push @kinds, [ $chunks, $times ];
        $per_round{$_} += $chunks->{$_} * $times for keys %$chunks;
    }
    return 0 unless @kinds;
    my $fill = $self->_whole_rounds(\%per_round);
    # The round in which memory runs out, in order.
    for my $kind (@kinds) {
        my ($chunks, $times) = @$kind;
        $self->_add_chunks($fill, $_, $chunks->{$_} * $times) for sort { $a <=> $b } keys %$chunks;
    }
    my $held = _held_items($fill->{capacity}, \%per_round, \@kinds);
    my $rounds = 0;
    for my $chunk (keys %per_round) {
        my $r = ($fill->{capacity}{$chunk} || 0) / $per_round{$chunk};
        $rounds = $r if $r > $rounds;
    }
    return wantarray ? ($held, int($rounds) + 1) : $held;
}

# A pool's forecast: its nodes', summed; the rounds, the most a node takes.
sub _pool_forecast {
    my ($self, $items) = @_;
    my ($held, $rounds) = (0, 0);
    for my $shape (@{ $self->{nodes} }) {
        my ($model, $count) = @$shape;
        my ($n, $r) = $model->forecast_items($items);
        $held += $count * $n;
        $rounds = $r if $r > $rounds;
    }
    return wantarray ? ($held, $rounds) : $held;
}

# The pages of whole rounds, as many as fit under -m (each round needs
# the pages its chunks fill): the most rounds r whose pages fit, found by
# doubling and halving, as memcached reaches it round by round.
sub _whole_rounds {
    my ($self, $per_round) = @_;
    my $pages_for = sub {    # { malloced, capacity, used } after $r whole rounds
        my ($r) = @_;
        my %fill = (malloced => 0, capacity => {}, used => {});
        for my $chunk (keys %$per_round) {
            my $per_page = int($self->{slab_page_size} / $chunk) || 1;
            my $want = $r * $per_round->{$chunk};
            my $pages = int(($want + $per_page - 1) / $per_page);
            $fill{malloced} += $pages * $self->_page_bytes($chunk);
            $fill{capacity}{$chunk} = $pages * $per_page;
            $fill{used}{$chunk} = $want;
        }
        return \%fill;
    };
    my $fits = sub { $pages_for->($_[0])->{malloced} <= $self->{memory_limit} };
    my ($lo, $hi) = (0, 1);
    ($lo, $hi) = ($hi, 2 * $hi) while $fits->($hi);
    while ($hi - $lo > 1) {
        my $mid = int(($lo + $hi) / 2);
        if ($fits->($mid)) { $lo = $mid } else { $hi = $mid }
    }
    return $pages_for->($lo);
}

# $n more chunks of class $chunk written: the pages they need, while -m
# leaves room (a class's first page regardless).
sub _add_chunks {
    my ($self, $fill, $chunk, $n) = @_;
    my ($capacity, $used) = @$fill{qw(capacity used)};
    my $per_page = int($self->{slab_page_size} / $chunk) || 1;
    my $short = ($used->{$chunk} || 0) + $n - ($capacity->{$chunk} || 0);
    $used->{$chunk} = ($used->{$chunk} || 0) + $n;
    return if $short <= 0;
    my $pages = int(($short + $per_page - 1) / $per_page);
    my $bytes = $self->_page_bytes($chunk);
    my $room = int(($self->{memory_limit} - $fill->{malloced}) / $bytes);
    $room = 0 if $room < 0;
    $room = 1 if !$room && !$capacity->{$chunk};
    my $got = $pages < $room ? $pages : $room;
    $fill->{malloced} += $got * $bytes;
    $capacity->{$chunk} += $got * $per_page;
    return;
}

# Written on, every class fills its pages and then evicts its own. A
# chunked item is held while all its chunks are: its share of each of its
# classes as it is written, the least of them counting (it is evicted with
# all its chunks, which the other items of those classes then take). The
# items of one chunk take the rest of their class.
sub _held_items {
    my ($capacity, $per_round, $kinds) = @_;
    my $held = 0;
    my %left = map { ($_ => $capacity->{$_} || 0) } keys %$per_round;
    my %single;
    for my $kind (@$kinds) {
        my ($chunks, $times) = @$kind;
        my @classes = keys %$chunks;
        if (@classes == 1 && $chunks->{ $classes[0] } == 1) {
            $single{ $classes[0] } = 1;
            next;
        }
        my $share;
        for my $chunk (@classes) {
            my $s = ($capacity->{$chunk} || 0) / $per_round->{$chunk};
            $share = $s if !defined $share || $s < $share;
        }
        $held += $times * $share;
        $left{$_} -= $times * $share * $chunks->{$_} for @classes;
    }
    $held += $left{$_} > 0 ? $left{$_} : 0 for keys %single;
    return int($held + 0.5);
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::SlabModel - the memory memcached gives an item: header, key, flags, value, rounded up to its slab class

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::SlabModel;

    my $memory = Cache::Memcached::RustXS::Dict::SlabModel->new;    # memcached 1.6's defaults
    print join(' ', ($memory->chunk_sizes)[0 .. 7]), "\n";       # 96 120 152 192 240 304 384 480

    # A 30-byte key and a 600-byte value, compressed (flags 2): a 693-byte
    # item in a 752-byte chunk; 400 bytes would fit the 600-byte class.
    print $memory->item_size(30, 600, 2), " ", $memory->item_memory(30, 600, 2), "\n";   # 693 752
    print $memory->item_memory(30, 400, 2), "\n";                                         # 600

    # How many items a memcached of 64 MiB keeps when these are written in
    # this order, over and over, past its memory.
    my @writes = map { [ 20, 180 + $_ % 400, 2 ] } 1 .. 500_000;
    print $memory->resident_items(\@writes), "\n";

    # And how many it holds once written on until every slab class is full,
    # with memcached started with -f 1.08 -C instead (the sizes of a sample,
    # each standing for 250 items): the forecast cmrx-dict report makes.
    my @sample = map { [ 20, 180 + $_ % 400, 2, 250 ] } 1 .. 2000;
    printf "%d items, %d with -f 1.08 -C\n", scalar $memory->forecast_items(\@sample),
        scalar $memory->with_settings(growth_factor => 1.08, cas => 0)->forecast_items(\@sample);

    # The classes and limits of a running server, as its stats say:
    #   Cache::Memcached::RustXS::Dict::SlabModel->from_stats(\%stats_settings, \@chunk_sizes_in_use)
    #   Cache::Memcached::RustXS::Dict::SlabModel->from_server($dict_server)

=head1 DESCRIPTION

What a cache holds is what fits its memory, and memcached does not store
bytes: it stores items in slab chunks. An item is a 48-byte header, 8 bytes
of CAS (unless the server runs with C<-C>), the key and a NUL, the value and
its C<\r\n>, and 4 bytes of client flags when they are not 0 (every
compressed value: both Perl clients flag it with 2). It takes the smallest
chunk that holds it, from classes that grow by C<-f> (1.25) from 96 bytes,
8-byte aligned, up to C<slab_chunk_max> (half a page). So a value that
shrinks without crossing a class boundary frees nothing, and one that crosses
several frees a lot. C<cmrx-dict> ranks dictionaries and levels by this
memory, with each value's own key, rather than by compressed bytes.

The figures are memcached 1.6's on a 64-bit host. The test
F<t/46-slab-model.t> fills a real memcached (C<-m 64>) past its memory and
checks the server's own C<curr_items> and chunk sizes against this model.

=head1 METHODS

=over 4

=item new(%options)

A model of a server with these settings; each defaults to memcached 1.6's:
C<growth_factor> (C<-f>, 1.25), C<chunk_size> (C<-n>, 48: the data room of
the smallest item), C<item_size_max> (C<-I>, 1 MiB), C<slab_chunk_max>
(512 KiB), C<slab_page_size> (1 MiB: memory goes to classes a page at a
time), C<cas> (1; 0 for a server run with C<-C>), C<slab_reassign> (1: each page
counts a whole page against C<-m>; 0: only its chunks), C<memory_limit>
(C<-m>, 64 MiB). C<chunk_sizes> gives the classes outright instead of computing
them. It croaks on an unknown option and on a value out of range.

=item from_stats(\%settings, \@chunk_sizes_in_use)

A model of the server whose C<stats settings> are C<%settings> (its
C<growth_factor>, C<chunk_size>, C<item_size_max>, C<slab_chunk_max>,
C<maxbytes>, C<cas_enabled> and C<slab_reassign>; missing ones take the defaults). The classes
are computed from them, as memcached does; when the chunk sizes of the
classes in use (from C<stats slabs>) include one the computation does not
give (a server started with C<-o slab_sizes>), the server's list is used
instead.

=item from_server($server)

C<from_stats> with the stats of a L<Cache::Memcached::RustXS::Dict::NodeReader>;
of a L<Cache::Memcached::RustXS::Dict::Pool>, C<pool> of each node's.

=item pool(@models)

The nodes of a pool as one model. Clients spread the keys over the nodes
evenly, so each node is written the same mix of items and fills its own
memory: C<forecast_items> is the sum of the nodes' forecasts, each with its
own settings and C<-m> (nodes alike are forecast once), and
C<memory_limit> is theirs together; the classes and the rest are the first
node's. (A model of every node's classes merged would have classes no
node has.) C<classes_from> says how many nodes, and whether alike.

=item chunk_sizes

The chunk sizes of the classes, ascending.

=item top_gap

C<slab_chunk_max> over the largest class below it: at most C<-f> when
the classes grow all the way to it, more when memcached's 63 classes run
out first (C<-f 1.08> ends at 13,800 bytes, so an item of 14 KB takes a
512 KB chunk unless C<slab_chunk_max> is lowered too).

=item item_header

The 48 bytes of an item's header: the smallest class is this plus C<-n>.

=item with_settings(%settings)

A copy of the model with these settings changed (the classes computed
afresh).

=item item_chunks($key_length, $value_length, $flags)

The chunks the item takes, C<{ chunk size =E<gt> count }>: one, or for an
item over C<slab_chunk_max> a header chunk and the chunks of its value (each
with a 48-byte head, the last of the smallest class that holds the rest), as
memcached 1.6 allocates them; C<undef> over C<item_size_max>.

=item forecast_items(\@items)

How many items the server holds once written past its memory, over and
over, with items of these sizes, C<[$key_length, $value_length, $flags,
$times]> (C<$times> of each in a row, 1 if not given; it may be a fraction:
a sampled value standing for that many of the cache's): memcached gives a
class a page when it has no free chunk while C<-m> has room (a class with no
page gets its first one regardless), and once memory is out each class
evicts its own. In list context also the rounds of writes it takes until
every class is full. The test F<t/63-memory-forecast.t> checks it against
real servers started with other settings.

=item standard_chunk_sizes

The chunk sizes memcached 1.6 makes of the model's C<growth_factor>,
C<chunk_size> and C<slab_chunk_max> (what C<chunk_sizes> is unless the
classes were given or the server's C<stats slabs> differ).

=item classes_from

Where the classes come from: C<computed> (the defaults or C<new>'s
settings), C<given> (C<chunk_sizes>), C<stats settings>, or C<stats slabs>.

=item settings

The settings in use, as a hash reference.

=item memory_limit, item_size_max

Those two settings.

=item item_size($key_length, $value_length, $flags)

The bytes of the item, before rounding up to a chunk.

=item item_memory($key_length, $value_length, $flags)

The memory the item takes: the chunk it is stored in; C<undef> for an item
over C<item_size_max>, which memcached refuses. An item larger than the
largest chunk is counted as whole largest chunks and the smallest chunk
holding the rest (memcached chains such items; the small headers of the
chain are not counted).

=item chunk_for($item_size)

The memory of an item of that many bytes.

=item resident_items(\@items, memory_limit => BYTES)

How many items a server of C<memory_limit> bytes (by default the model's)
holds after the items C<[$key_length, $value_length, $flags]> are written
in this order, each to a new key, and none expires: memcached hands its
memory to classes a page at a time as they first need it; once all pages
are handed out, a full class evicts its own oldest item for each new one.
The test of this module checks the figure against a real server's
C<curr_items> (it is exact while C<slab_automove> has not yet moved pages
between classes, which it does only after minutes of uneven evictions).
Items over C<item_size_max> are not counted.

=back

=head1 DIFFERENCES FROM MEMCACHED

The header sizes are memcached 1.6's on 64-bit hosts (32-bit hosts have a
smaller header); extstore, custom C<-o slab_sizes> given only through
C<new>, and the page moves of C<slab_automove> are not modelled. The
forecast is of pages handed out as memory fills; a node that has been full
for a while has had C<slab_automove> (on by default) move some pages
between classes by the age of their items, which changes its items by a
few percent either way (in F<bench/memory.pl>'s fills of minutes through
the clients, Fast's gzip held 1.0 to 2.0 % fewer than forecast and the
set's values as forecast: F<bench/README.md>).

=head1 SEE ALSO

L<cmrx-dict>, L<Cache::Memcached::RustXS::Dict::NodeReader>, memcached's
F<doc/protocol.txt> (C<stats slabs>, C<stats settings>).

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
