#!/usr/bin/perl
# The tuner takes a larger dictionary, or a higher level, only when what it
# saves exceeds what the held-out estimate can tell apart: one standard
# error of the value-by-value difference of the two candidates' held-out
# memory. An advantage within that spread keeps the smaller candidate; one
# beyond it takes the larger; on the corpus, two levels of one dictionary
# that store the held-out values in the same memory give the lower level.
# No memcached, no timing: the memory model's standard slab classes, the
# speed limits lifted.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use CMRXDev::Corpus qw(corpus_values);
use Cache::Memcached::RustXS::Dict::Tune qw(tune advantage_and_spread smallest_within_spread);

# Candidates as the tuner ranks them, best (least cost) first: their
# held-out memory value by value, the cost over 1000 keys of 10 held-out
# values.
my %TUNED = (keys => 1000, held_out => 10);
sub candidate {
    my ($size, $level, @per_value) = @_;
    my $memory = 0;
    $memory += $_ for @per_value;
    return { method => 'fastcover', size => $size, level => $level, per_value => \@per_value,
             memory => $memory, cost => $memory * $TUNED{keys} / $TUNED{held_out} };
}

{
    # The larger saves 48 bytes (a slab chunk) on three values of ten and
    # takes 48 more on two: 48 in all, less than the standard error of
    # that sum.
    my $larger  = candidate(65536, 9, 400, 400, 352, 448, 400, 352, 400, 352, 448, 400);
    my $smaller = candidate(16384, 9, (400) x 10);
    my ($advantage, $spread) = advantage_and_spread($larger, $smaller, \%TUNED);
    is $advantage, 4800, 'the advantage: the cost the larger saves over the keys (48 bytes of 10 values, 1000 keys)';
    cmp_ok $spread, '>', $advantage, "... within the estimate's spread ($spread)";
    is smallest_within_spread([ $larger, $smaller ], \%TUNED), $smaller, '... so the smaller candidate is kept';

    # Every value 12 bytes less: 120 in all, the same each time.
    my $steady = candidate(65536, 9, (388) x 10);
    ($advantage, $spread) = advantage_and_spread($steady, $smaller, \%TUNED);
    is_deeply [ $advantage, $spread ], [ 12000, 0 ], 'an advantage the same on every value has no spread';
    is smallest_within_spread([ $steady, $smaller ], \%TUNED), undef, '... so the larger is taken';

    # A higher level pays as a larger dictionary does.
    my $higher = candidate(16384, 19, 400, 400, 352, 448, 400, 352, 400, 352, 448, 400);
    is smallest_within_spread([ $higher, $smaller ], \%TUNED), $smaller, 'a higher level within the spread: the lower kept';

    # Of several within the spread, the smallest dictionary, then the
    # lowest level.
    my $small_low  = candidate(16384, 3, (400) x 10);
    my $small_high = candidate(16384, 19, (400) x 10);
    my $tiny = candidate(2048, 9, (448) x 10);
    is smallest_within_spread([ $larger, $small_high, $small_low, $tiny ], \%TUNED), $small_low,
        'several within the spread: the smallest, lowest of them (one beyond it is not taken)';
    is smallest_within_spread([ $smaller, $larger ], \%TUNED), undef, 'the best already smallest: nothing to change';
}

# ---- on the corpus -----------------------------------------------------------------

# api's values with one dictionary at two levels: zstd stores them in the
# same memcached chunks at 15 as at 19 (19 saves bytes, no chunk), the two
# cost alike, and the tuner takes level 15 where it used to take the higher
# level for its fewer bytes.
{
    my $corpus = corpus_values('bench/data/values');
    my @samples = sort { $a->[0] cmp $b->[0] } @{ $corpus->{api} };
    my $tuned = tune(samples => \@samples, keys => 100 * @samples, sizes => [65536], levels => [ 15, 19 ],
                     methods => ['cover'], compress_time => 0, decompress_time => 0);
    my ($at15, $at19) = map { my $l = $_; grep { $_->{level} == $l } @{ $tuned->{candidates} } } 15, 19;
    is $at15->{cost}, $at19->{cost}, "api: a cover dictionary at levels 15 and 19 costs the same ($at15->{cost})";
    cmp_ok $at19->{bytes}, '<', $at15->{bytes}, "... though level 19 writes fewer bytes ($at19->{bytes} against $at15->{bytes})";
    is $tuned->{choice}{level}, 15, '... and the tuner takes the lower level';
    like $at19->{verdict}, qr/\Alarger, and less memory by 0, within the estimate's spread \(\d+\)\z/,
        "... saying why not the higher ($at19->{verdict})";
}

done_testing;
