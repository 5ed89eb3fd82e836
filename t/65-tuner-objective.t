#!/usr/bin/perl
# The tuner's one objective: the items memcached holds. Every candidate is
# measured by what a memcached of the node's settings (memcached's defaults
# here) holds of the held-out values as the set writes them -- the
# advisor's forecast -- so frames that land in the same slab chunks cost
# the same whatever their bytes, and one that moves values down a class
# saves more than its bytes say. Candidates that tie on the forecast go
# cheaper first: the smaller dictionary, then the lower level. No
# memcached, no timing: the memory model's standard slab classes, the
# speed limits lifted.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use CMRXDev::Corpus qw(corpus_values);
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Dict::SettingsAdvisor qw(written_items forecast);
use Cache::Memcached::RustXS::Dict::Tune qw(tune stored_memory);

my $model = Cache::Memcached::RustXS::Dict::SlabModel->new;    # memcached's defaults, -m 64

# ---- the memory of a frame size: the forecast's ----------------------------------

{
    # Ten values of 1000 bytes under 12-byte keys; frames of 500 and of 510
    # bytes: both items take the 600-byte chunk (with CAS and flags, 575 and
    # 585 bytes), so they cost the same; frames of 400 bytes take the
    # 480-byte chunk and hold more.
    my @pairs = map { [ sprintf('prefix:%05d', $_), 'x' x 1000 ] } 1 .. 10;
    my ($at500, $at510, $at400) = map { my $n = $_; stored_memory($model, \@pairs, [ ($n) x 10 ]) } 500, 510, 400;
    is $model->item_memory(12, 500, 2), $model->item_memory(12, 510, 2), 'frames of 500 and 510 bytes: one slab chunk';
    is $at500->{items}, $at510->{items}, "... so a memcached holds as many of either ($at500->{items})";
    is $at500->{memory}, $at510->{memory}, "... and they take the same memory ($at500->{memory}), though 100 bytes apart";
    cmp_ok $at400->{items}, '>', $at500->{items}, "frames of 400 bytes, a class down: more items ($at400->{items})";
    my $items = written_items([ map { $_->[0] } @pairs ], [ map { $_->[1] } @pairs ], [ (400) x 10 ]);
    is $at400->{items}, forecast($model, $items), "... the advisor's forecast of the values as written";
    is $at400->{memory}, int(64 * 1048576 * 10 / $at400->{items} + 0.5),
        '... and the memory: -m over the items held, times the values';
    my $raw = stored_memory($model, \@pairs, [ (900) x 10 ]);
    is $raw->{bytes}, 10_000, 'a frame over 0.8 of its value: the value is stored raw, as the clients do';
}

# ---- on the corpus: ties go cheaper first ---------------------------------------------

# A cover dictionary of 64 KiB at levels 12, 15 and 19 on two families:
# where a higher level writes fewer bytes into the same slab chunks, the
# forecast ties and the lower level is taken; where the lower level's
# frames cost a chunk more on some value, the forecast says so.
my $corpus = corpus_values('bench/data/values');
for my $family (qw(gh news)) {
    my @samples = sort { $a->[0] cmp $b->[0] } @{ $corpus->{$family} };
    my $tuned = tune(samples => \@samples, keys => 100 * @samples, sizes => [65536], levels => [ 12, 15, 19 ],
                     methods => ['cover'], compress_time => 0, decompress_time => 0);
    my %at = map { ($_->{level} => $_) } @{ $tuned->{candidates} };
    my $c = $tuned->{choice};
    ok $c && !(grep { $_->{items} > $c->{items} } values %at),
        "$family: the choice holds the most items forecast (" . ($c ? "level $c->{level}, $c->{items}" : 'none') . ')';
    my @tied = grep { $_ != $c && $_->{items} == $c->{items} } values %at;
    ok !(grep { $_->{level} < $c->{level} } @tied), '... and no lower level ties with it';
    SKIP: {
        skip "$family: no level ties with the choice on these values", 3 unless @tied;
        my ($higher) = sort { $b->{level} <=> $a->{level} } @tied;
        cmp_ok $higher->{bytes}, '<', $c->{bytes},
            "... level $higher->{level} writes fewer bytes ($higher->{bytes} against $c->{bytes})";
        is $higher->{cost}, $c->{cost}, '... yet costs the same: the same items forecast';
        like $higher->{verdict}, qr/\Aas many items forecast, and a larger dictionary or a higher level\z/,
            "... and says why it was not chosen";
    }
}

# Sizes tie as levels do: at one level, of two sizes holding the same
# items, the smaller goes first.
{
    my @samples = sort { $a->[0] cmp $b->[0] } @{ $corpus->{gh} };
    my $tuned = tune(samples => \@samples, sizes => [ 2048, 4096 ], levels => [3], methods => ['samples'],
                     compress_time => 0, decompress_time => 0);
    my @c = @{ $tuned->{candidates} };
    my $first = $c[0];
    ok !(grep { $_->{items} > $first->{items} } @c), 'sizes: the first holds the most items';
    ok !(grep { $_->{items} == $first->{items} && $_->{size} < $first->{size} } @c),
        '... and no smaller size holds as many';
}

done_testing;
