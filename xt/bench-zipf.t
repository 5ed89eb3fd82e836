#!/usr/bin/perl
# The benchmarks' Zipf draws: zipf_rank_guided, which bench/app.pl's
# workers use because it is cheap, gives the rank of zipf_rank's binary
# search for every number it is given -- random ones, each partial sum
# exactly, just below one, 0 and the last -- over small and large key
# spaces and three exponents, so that a guided run draws the keys that
# bench/hitrate.pl's sequence would.
use strict;
use warnings;

use lib 'bench/lib', 'dev/lib';
use Test::More;
use CMRXBench::Memory qw(zipf_cdf zipf_rank zipf_guide zipf_rank_guided);

srand 25;
for my $s (0.8, 0.99, 1.2) {
    for my $n (1, 2, 7, 1_000, 30_000) {
        my $cdf   = zipf_cdf($n, $s);
        my $guide = zipf_guide($cdf);
        is scalar @$guide, $n, "Zipf($s) over $n: a slice for each rank";
        my @u = ((map { rand $cdf->[-1] } 1 .. 20_000), 0, @$cdf,
                 map { $_ * (1 - 1e-12) } @$cdf[ 0 .. ($n > 100 ? 99 : $n - 1) ]);
        my @differ = grep { zipf_rank($cdf, $_) != zipf_rank_guided($cdf, $guide, $_) } @u;
        is scalar @differ, 0, "Zipf($s) over $n: the guided draw is the binary search's for " . @u . ' numbers'
            or diag "first: $differ[0]";
    }
}

done_testing;
