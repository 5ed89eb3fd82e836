#!/usr/bin/perl
# A pool is one population: the same keys held by one node and by a pool
# of two (each key on the node its MD5 names, as a client hashes keys over
# a pool) give dictionary sets that hold within 1 % as many items, as the
# forecast of a memcached on memcached's defaults says for every value as
# each set writes it. The sample is every key, as a pool's must be the
# same population as one node's: what may differ is how the pool is
# listed, sampled, fetched, counted and modelled. train --all and report
# on the pool say how many keys and values each node gave. Real memcached;
# the speed limits lifted, the tuning cut to a few sizes and levels.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use Digest::MD5 ();
use File::Spec ();
use File::Temp ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Dict::SettingsAdvisor qw(written_items forecast);
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::DictSets qw(run_dict json_of by_prefix @AT_ONCE @FIXED_TUNING);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set);

my @servers = CMRXTest::Memcached->start_optional(count => 3);
plan skip_all => CMRXTest::Memcached->unavailable unless @servers;
plan skip_all => 'JSON::PP is needed for --json' unless eval { require JSON::PP; 1 };
my ($node, @pool) = map { $_->address } @servers;

my $TMP = File::Temp::tempdir(CLEANUP => 1);
my @FAMILIES = qw(gh npm);
my $COPIES = 3;
my @TUNING = ((map { ('--prefix', $_) } @FAMILIES), '--max-size', 32768, '--levels', '3,9,15', @AT_ONCE);
my @FIXED = ('--prefix', 'gh', @FIXED_TUNING, @AT_ONCE);

# Every value of the families under $COPIES keys each.
my $corpus = corpus_values('bench/data/values');
my @items = map { my $f = $_; map { my $v = $_; map { [ "$v->[0]:$_", $v->[1] ] } 1 .. $COPIES } @{ $corpus->{$f} } }
            @FAMILIES;
for my $item (@items) {
    my $on = $pool[ unpack('N', Digest::MD5::md5($item->[0])) % @pool ];
    raw_set($_, $item->[0], 0, $item->[1]) or die "set $item->[0] on $_ failed" for $node, $on;
}

# The items a memcached on memcached's defaults holds of every value of
# the families as the set in $dir writes them (one writer per prefix).
my $model = Cache::Memcached::RustXS::Dict::SlabModel->new;
sub items_held {
    my ($dir) = @_;
    my @written;
    for my $family (@FAMILIES) {
        my $methods = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => "$family:");
        my @pairs = @{ $corpus->{$family} };
        my @frames = map { my ($value, $frame) = ($_->[1]); $methods->[0]->(\$value, \$frame) ? length $frame : undef }
                     @pairs;
        push @written, @{ written_items([ map { "$_->[0]:1" } @pairs ], [ map { $_->[1] } @pairs ], \@frames,
                                        threshold => 64) };
    }
    return forecast($model, \@written);
}

my %set;
for my $source ([ 'one node', $node ], [ 'a pool of two', @pool ]) {
    my ($name, @addresses) = @$source;
    my $dir = File::Spec->catfile($TMP, scalar @addresses);
    my ($st, $out, $err) = run_dict([ 'train', '--all', (map { ('--server', $_) } @addresses), @TUNING,
                                      '--out-dir', $dir, '--json' ]);
    is $st, 0, "train --all on $name: exit 0" or diag $err;
    my $p = by_prefix(json_of($out));
    is $p->{"$_:"}{action}, 'added', "... $_: gets a dictionary" for @FAMILIES;
    $set{$name} = { dir => $dir, prefixes => $p, items => items_held($dir) };
}
my ($one, $two) = map { $set{$_}{items} } 'one node', 'a pool of two';
cmp_ok abs($two - $one), '<=', 0.01 * $one,
    sprintf "the pool's set holds within 1 %% of one node's: %d items against %d (%.2f %%)", $two, $one, 100 * $two / $one;

# ---- what each node gave --------------------------------------------------------------

my $p = $set{'a pool of two'}{prefixes};
for my $family (@FAMILIES) {
    my $d = $p->{"$family:"};
    my ($keys, $values) = (0, 0);
    $keys += $_ for @{ $d->{keys_by_node} || [] };
    $values += $_ for @{ $d->{values_by_node} || [] };
    is $keys, $COPIES * @{ $corpus->{$family} }, "$family: the nodes' keys add up to the prefix's";
    ok !(grep { !$_ } @{ $d->{values_by_node} || [0] }), "... each node gave values (@{ $d->{values_by_node} || [] })";
    is $values, $d->{samples}, "... and they add up to the values tuned on ($values)";
}
my ($st, $out, $err) = run_dict([ 'train', '--all', (map { ('--server', $_) } @pool), @FIXED,
                                  '--out-dir', File::Spec->catfile($TMP, 'text') ]);
is $st, 0, 'train --all on the pool, as text: exit 0' or diag $err;
like $out, qr/^Nodes \(keys listed \/ values sampled, of each prefix\)\n.*\Q$pool[0]\E +\Q$pool[1]\E *\n/ms,
    '... a table of the nodes';
my $gh = $p->{'gh:'};
like $out, qr/^  gh: +$gh->{keys_by_node}[0] \/ $gh->{values_by_node}[0] +$gh->{keys_by_node}[1] \/ $gh->{values_by_node}[1] *$/m,
    "... gh:'s keys and values on each node";

($st, $out, $err) = run_dict([ 'report', (map { ('--server', $_) } @pool), '--prefix', 'gh', @FIXED_TUNING ]);
is $st, 0, 'report on the pool: exit 0' or diag $err;
like $out, qr/^Nodes \(keys listed \/ values sampled, of each prefix\)\n.*^  gh +\d+ \/ \d+ +\d+ \/ \d+ *$/ms,
    "... says what each node gave";

done_testing;
