#!/usr/bin/perl
# Cache::Memcached::RustXS::Dict::SlabModel against real memcached servers: the
# chunk each item lands in (stats slabs), with and without flags and CAS,
# with other growth factors; and how many items a 64 MB server keeps when
# it is filled past its memory (its own curr_items), one size and the mix
# of the corpus's JSON values, raw and gzipped.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use Compress::Zlib ();
use CMRXTest::Memcached;
use CMRXDev::Corpus qw(corpus_values);
use Cache::Memcached::RustXS::Dict::SlabModel;
use Cache::Memcached::RustXS::Dict::NodeReader;

my $MODEL = 'Cache::Memcached::RustXS::Dict::SlabModel';

# ---- without a server --------------------------------------------------------

my $m = $MODEL->new;
is join(' ', ($m->chunk_sizes)[0 .. 15]), '96 120 152 192 240 304 384 480 600 752 944 1184 1480 1856 2320 2904',
    "memcached 1.6's standard classes";
is +($m->chunk_sizes)[-1], 512 * 1024, '... up to slab_chunk_max';
is $m->item_size(30, 600, 2), 48 + 8 + 31 + 602 + 4, 'item size: header, CAS, key and NUL, value and CRLF, flags';
is $m->item_size(30, 600, 0), 48 + 8 + 31 + 602, '... no flag bytes when the flags are 0';
is $m->item_memory(30, 600, 2), 752, '... in a 752-byte chunk';
is $m->item_memory(30, 400, 2), 600, 'a 400-byte value: the 600-byte class';
is $m->item_memory(1, 1024 * 1024, 0), undef, 'over item_size_max: not storable';
is $m->chunk_for(600 * 1024), 512 * 1024 + $m->chunk_for(88 * 1024), 'larger than the largest chunk: whole ones and the rest';
is $MODEL->new(cas => 0)->item_size(10, 10, 0), 48 + 11 + 12, 'cas => 0: no CAS bytes';
my $custom = $MODEL->new(chunk_sizes => [ 200, 100, 400 ]);
is join(' ', $custom->chunk_sizes), '100 200 400', 'chunk_sizes given: sorted';
is $custom->classes_from, 'given', '... and said so';
is $MODEL->new(memory_limit => 2 * 1024 * 1024)->resident_items([ ([ 10, 100, 0 ]) x 100_000 ]),
    2 * int(1048576 / 192), 'two pages of 192-byte chunks';
for my $bad ([ growth_factor => 1 ], [ chunk_size => 0 ], [ item_size_max => 'big' ], [ chunk_sizes => [] ],
             [ bogus => 1 ]) {
    ok !eval { $MODEL->new(@$bad); 1 }, "new(@$bad[0] => ...) croaks";
}
my $from = $MODEL->from_stats({ growth_factor => '1.5', chunk_size => 64, item_size_max => 2097152,
                                slab_chunk_max => 524288, maxbytes => 1 << 30, cas_enabled => 'no' }, []);
is join(' ', ($from->chunk_sizes)[0 .. 3]), '112 168 256 384', 'from_stats: -f 1.5 -n 64';
is $from->memory_limit, 1 << 30, '... maxbytes';
is $from->item_size(1, 1, 0), 48 + 2 + 3, '... cas_enabled no';
my $odd = $MODEL->from_stats({}, [ 100, 250 ]);
is join(' ', $odd->chunk_sizes), '100 250 524288', 'classes in use the computation does not know: the server wins';
is $odd->classes_from, 'stats slabs', '... and says so';

# ---- against memcached -------------------------------------------------------

my $server = CMRXTest::Memcached->start_optional;
SKIP: {
    skip(CMRXTest::Memcached->unavailable, 12) unless $server;    # two tests per case and per fill
    undef $server;
    my @cases = (
        [ 'default',      [] ],
        [ '-f 1.5 -n 64', [ '-f', '1.5', '-n', '64' ] ],
        [ '-C (no CAS)',  [ '-C' ] ],
    );
    for my $case (@cases) {
        my ($name, $args) = @$case;
        my $s = CMRXTest::Memcached->start(args => $args);
        my $conn = connect_to($s);
        my $model = $MODEL->from_stats($conn->stats('settings'), []);
        # One item per size, the sizes chosen so that each of the first 20
        # classes gets one item exactly at its upper edge and one a byte
        # over it (the next class), with flags 0 and 2.
        my (@want, $n);
        my @sizes = ($model->chunk_sizes)[0 .. 19];
        my $key_len = 12;
        for my $flags (0, 2) {
            for my $chunk (@sizes) {
                my $value_len = $chunk - $model->item_size($key_len, 0, $flags);
                next if $value_len < 1;
                for my $len ($value_len, $value_len + 1) {
                    my $key = sprintf 'k%011d', ++$n;
                    set($conn, $key, $flags, 'v' x $len);
                    push @want, $model->item_memory($key_len, $len, $flags);
                }
            }
        }
        my %count;
        $count{$_}++ for @want;
        my $slabs = $conn->slab_classes;
        my %got = map { ($_->{chunk_size} => $_->{used_chunks}) } @$slabs;
        is_deeply \%got, \%count, "$name: every item is in the chunk the model says (stats slabs)";
        my @classes = sort { $a <=> $b } map { $_->{chunk_size} } @$slabs;
        my %modelled = map { ($_ => 1) } $model->chunk_sizes;
        is join(' ', grep { !$modelled{$_} } @classes), '', "$name: the server's classes are the model's";
    }

    # Filled past -m 64: one size, then the corpus's JSON values raw and
    # gzipped (as Fast's default compress_methods store them), each value
    # written again and again to new keys, interleaved.
    my $corpus = corpus_values('bench/data/values');
    my @json = map { @{ $corpus->{$_} } } qw(gh npm compat);
    my @fills = (
        [ 'one size (200 B values, flags 2)', sub { [ sprintf('one:%07d', $_[0]), 'x' x 200, 2 ] }, 600_000 ],
        [ 'JSON values, raw', sub {
              my ($k, $v) = @{ $json[ $_[0] % @json ] };
              [ "$k:$_[0]", $v, 0 ] }, 120_000 ],
        [ 'JSON values, gzipped', sub {
              my ($k, $v) = @{ $json[ $_[0] % @json ] };
              [ "$k:$_[0]", gzipped($v), 2 ] }, 300_000 ],
    );
    for my $fill (@fills) {
        my ($name, $item, $count) = @$fill;
        my $s = CMRXTest::Memcached->start(args => [ '-m', '64' ]);
        my $conn = connect_to($s);
        my $model = $MODEL->from_stats($conn->stats('settings'), []);
        my @written;
        my $batch = '';
        for my $i (1 .. $count) {
            my ($key, $value, $flags) = @{ $item->($i) };
            $batch .= "set $key $flags 0 " . length($value) . " noreply\r\n$value\r\n";
            push @written, [ length $key, length $value, $flags ];
            if (length $batch > 1 << 16) { $conn->send($batch); $batch = '' }
        }
        $conn->send($batch);
        my $st = $conn->stats;
        cmp_ok $st->{evictions}, '>', 0, "$name: filled past its memory ($st->{evictions} evictions)";
        is $st->{curr_items}, $model->resident_items(\@written),
            "$name: curr_items ($st->{curr_items}) is what the model says";
    }
}

done_testing;

# ---- helpers -----------------------------------------------------------------

my %GZ;
sub gzipped { $GZ{ $_[0] } ||= Compress::Zlib::memGzip($_[0]) }

# A connection through cmrx-dict's reader of memcached, whose stats and
# slab_classes the tests read the server with.
sub connect_to {
    my ($s) = @_;
    return Cache::Memcached::RustXS::Dict::NodeReader->connect($s->address, timeout => 10);
}

sub set {
    my ($conn, $key, $flags, $value) = @_;
    $conn->send("set $key $flags 0 " . length($value) . "\r\n$value\r\n");
    my $line = $conn->read_line;
    die "set $key: $line\n" unless $line eq 'STORED';
}
