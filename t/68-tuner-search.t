#!/usr/bin/perl
# The tuner searches where the choice can change (a coarse pass over sizes
# at one level, refined around the best, then every level of the best
# dictionaries): on every family of bench/data, counted over a node's keys
# and not, it chooses what the exhaustive search (every size of every
# method at every level) chooses, or a candidate whose forecast items are
# within 1 % of that one's. No timing decides: the speed limits are lifted.
use strict;
use warnings;

use lib 'dev/lib';
use Test::More;
use CMRXDev::Corpus qw(corpus_values);
use Cache::Memcached::RustXS::Dict::Tune qw(tune);

my $corpus = corpus_values($CMRXDev::Corpus::DIR);
my %spent = (refined => 0, exhaustive => 0);
for my $family (sort keys %$corpus) {
    my @samples = sort { $a->[0] cmp $b->[0] } @{ $corpus->{$family} };
    for my $keys (undef, 100 * @samples) {
        my %choice;
        for my $search (qw(exhaustive refined)) {
            local $Cache::Memcached::RustXS::Dict::Tune::EXHAUSTIVE = $search eq 'exhaustive' ? 1 : 0;
            my $t0 = _cpu();
            my $tuned = tune(samples => \@samples, keys => $keys, compress_time => 0, decompress_time => 0);
            $spent{$search} += _cpu() - $t0;
            $choice{$search} = $tuned->{choice};
        }
        my ($e, $r) = @choice{qw(exhaustive refined)};
        my $what = "$family, " . (defined $keys ? "$keys keys" : 'keys not counted');
        if (!$e) {
            ok !$r, "$what: no choice either way";
            next;
        }
        ok $r, "$what: a choice" or next;
        my $name = sub { "$_[0]{method} $_[0]{size} level $_[0]{level}" };
        my $same = $name->($e) eq $name->($r);
        ok $same || $r->{items} >= 0.99 * $e->{items},
            "$what: " . ($same ? 'the same choice, ' . $name->($r)
                               : sprintf('%s holds %d items forecast, %s (exhaustive) %d', $name->($r), $r->{items},
                                         $name->($e), $e->{items}));
    }
}
# What each took is told, not tested (bench/ measures speed).
note sprintf 'CPU: the search %.1f s, the exhaustive one %.1f s', $spent{refined}, $spent{exhaustive};

done_testing;

sub _cpu { my @t = times; return $t[0] + $t[1] }
