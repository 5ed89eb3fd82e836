#!/usr/bin/perl
# A cache holds one value under many keys. The held-out split never puts
# copies of one value on both sides (the tuner would judge a candidate on
# values it was trained on), so a set trained on a live node whose values
# are each stored under many keys holds what a set trained on a file of
# the same distinct values holds: within 1 %, as the forecast of a
# memcached on memcached's defaults says for held-back values (the other
# half of the corpus) as each set writes them. Real memcached; the speed limits lifted, the tuning cut to a
# few sizes and levels.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use Digest::MD5 ();
use File::Spec ();
use File::Temp ();
use Cache::Memcached::RustXS::Dict qw(held_out_split distinct_values);
use Cache::Memcached::RustXS::Dict::Measure ();
use Cache::Memcached::RustXS::Dict::Tune ();
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Dict::SettingsAdvisor qw(written_items forecast);
use Cache::Memcached::RustXS::Zstd ();
use CMRXDev::Corpus qw(corpus_values corpus_halves);
use CMRXTest::DictSets qw(run_dict json_of by_prefix write_dump @AT_ONCE %FIXED_TUNING);
use CMRXTest::Memcached;
use CMRXDev::NodeFill qw(fill_node);

my $corpus = corpus_values('bench/data/values');
my @FAMILIES = qw(gh npm);
my $COPIES = 3;
# Every value of the families under $COPIES keys each, as a cache holds
# them (in key order the copies of a value are neighbours).
my @items = map { my $f = $_; map { my $v = $_; map { [ "$v->[0]:$_", $v->[1] ] } 1 .. $COPIES } @{ $corpus->{$f} } }
            @FAMILIES;
# The live node holds each under $NODE_COPIES keys: enough keys that a
# dictionary's own bytes weigh little against them (from files, which
# count no keys, they weigh nothing).
my $NODE_COPIES = 100;
my ($train_half, $held_back) = corpus_halves(@FAMILIES);
my @distinct = @{ distinct_values([ map { @{ $train_half->{$_} } } @FAMILIES ]) };

# ---- the split ------------------------------------------------------------------------

{
    is_deeply [ held_out_split([ 1 .. 9 ], 4) ], [ [ 1, 2, 3, 5, 6, 7, 9 ], [ 4, 8 ] ],
        'without copies: every 4th item held out, as before';
    my ($train, $held) = held_out_split([qw(a a b c c c d a e f d)], 2);
    is_deeply [ $train, $held ], [ [qw(a a c c c a e)], [qw(b d f d)] ],
        'with copies: every 2nd distinct value held out, each copy on its first copy\'s side';
    my @gh = grep { $_->[0] =~ /\Agh:/ } @items;
    my ($t, $h) = held_out_split(\@gh, $Cache::Memcached::RustXS::Dict::Tune::HOLD_OUT, sub { $_[0][1] });
    my %trained = map { (Digest::MD5::md5($_->[1]) => 1) } @$t;
    is scalar(grep { $trained{ Digest::MD5::md5($_->[1]) } } @$h), 0, 'gh with copies: no held-out value is trained on';
    # The distinct values in order of first appearance: every 4th is held.
    my @first = @{ distinct_values(\@gh) };
    my %held_value = map { (Digest::MD5::md5($first[$_][1]) => 1) } grep { $_ % 4 == 3 } 0 .. $#first;
    is scalar @$h, scalar(grep { $held_value{ Digest::MD5::md5($_->[1]) } } @gh),
        '... and every copy of a held-out value is held out (' . scalar(@$h) . ' copies of ' . keys(%held_value) . ' values)';
    is scalar @{ distinct_values($t) }, @first - keys %held_value,
        'distinct_values: each training value once (' . (@first - keys %held_value) . ')';
    my $tuned = Cache::Memcached::RustXS::Dict::Tune::tune(samples => \@gh, %FIXED_TUNING,
                                                           compress_time => 0, decompress_time => 0);
    my %held = map { (Digest::MD5::md5($_->[1]) => 1) } @{ $tuned->{held} };
    is scalar(grep { $held{ Digest::MD5::md5($_->[1]) } } @gh), scalar @{ $tuned->{held} },
        'tune: every copy of a held-out value is held out';
    is $tuned->{trained_on}, @{ distinct_values(\@gh) } - keys %held, '... and it trains on each other value once';

    my @values = map { $_->[1] } @gh;
    my $m = Cache::Memcached::RustXS::Dict::Measure::measure_held_out(\@values);
    my %on = (train => {}, held => {});
    my ($mt, $mh) = held_out_split(\@values, $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT);
    $on{train}{ Digest::MD5::md5($_) } = 1 for @$mt;
    is scalar(grep { $on{train}{ Digest::MD5::md5($_) } } @$mh), 0, "report's half split: no value on both sides";
    is $m->{values}, scalar @$mh, '... and measure_held_out measures on that half';
}

# ---- the tuner: copies of each value against the distinct values ------------------------------

for my $family (@FAMILIES) {
    my @once = @{ distinct_values($train_half->{$family}) };
    my @thrice = map { my $v = $_; map { [ "$v->[0]:$_", $v->[1] ] } 1 .. $COPIES } @once;
    my %how = (max_size => 32768, levels => [ 3, 9, 15 ], compress_time => 0, decompress_time => 0);
    my ($with, $without) = map { Cache::Memcached::RustXS::Dict::Tune::tune(samples => $_, %how) } \@thrice, \@once;
    my ($a, $b) = map { my $c = $_->{choice}; $c ? "$c->{method} $c->{size} level $c->{level}" : 'none' } $with, $without;
    is $a, $b, "$family: tuned on $COPIES copies of each value, the choice of the distinct values ($b)";
    # items: what a memcached written past its memory with the held-out
    # values (in equal shares) holds of them, the tuner's forecast.
    my ($held_with, $held_without) = map { $_->{choice} ? $_->{choice}{items} : 0 } $with, $without;
    cmp_ok abs($held_with - $held_without), '<=', 0.01 * $held_without,
        "... and the items forecast of its held-out values within 1 % ($held_with, $held_without)";
}

# ---- a live node with copies against a file of the distinct values ------------------------

my @servers = CMRXTest::Memcached->start_optional(count => 1);
SKIP: {
    skip(CMRXTest::Memcached->unavailable, 3) unless @servers;
    skip 'JSON::PP is needed for --json', 3 unless eval { require JSON::PP; 1 };
    my $node = $servers[0]->address;
    my @on_node = map { my $v = $_; map { [ sprintf('%s:%03d', $v->[0], $_), $v->[1] ] } 1 .. $NODE_COPIES } @distinct;
    fill_node($node, sub { shift @on_node });
    my $TMP = File::Temp::tempdir(CLEANUP => 1);
    my $file = File::Spec->catfile($TMP, 'distinct.values');
    write_dump($file, @distinct);
    my @TUNING = ((map { ('--prefix', $_) } @FAMILIES), '--max-size', 32768, '--levels', '3,9,15', @AT_ONCE);

    my $model = Cache::Memcached::RustXS::Dict::SlabModel->new;
    my %set;
    for my $source ([ 'a live node with copies', '--server', $node ], [ 'a file of the distinct values', $file ]) {
        my ($name, @from) = @$source;
        my $dir = File::Spec->catfile($TMP, $name =~ /live/ ? 'node' : 'file');
        my ($st, $out, $err) = run_dict([ 'train', '--all', @from, @TUNING, '--out-dir', $dir, '--json' ]);
        is $st, 0, "train --all from $name: exit 0" or diag $err;
        my $p = by_prefix(json_of($out));
        # The items of the held-back values as the set writes them (one
        # writer per prefix), in a memcached on memcached's defaults.
        my @written;
        for my $family (@FAMILIES) {
            my $methods = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => "$family:");
            my @pairs = @{ $held_back->{$family} };
            my @frames = map { my ($value, $frame) = ($_->[1]); $methods->[0]->(\$value, \$frame) ? length $frame : undef }
                         @pairs;
            push @written, @{ written_items([ map { "$_->[0]:1" } @pairs ], [ map { $_->[1] } @pairs ], \@frames,
                                            threshold => 64) };
        }
        $set{$name} = { items => forecast($model, \@written),
                        choice => join(', ', map { my $c = $p->{"$_:"}{choice} || {}; "$_: " . join(' ', map { defined $c->{$_} ? $c->{$_} : '-' } qw(method size level)) } @FAMILIES) };
    }
    my ($live, $files) = map { $set{$_}{items} } 'a live node with copies', 'a file of the distinct values';
    # At least: a node counts its keys, and a dictionary's own bytes over
    # them may choose another size than files, which count none.
    cmp_ok $live, '>=', 0.99 * $files,
        sprintf "the live node's set holds at least 99 %% of the file's: %d items against %d (%.2f %%; %s | %s)",
                $live, $files, 100 * $live / $files, map { $set{$_}{choice} } sort keys %set;
}

done_testing;
