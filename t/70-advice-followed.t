#!/usr/bin/perl
# The advice of cmrx-dict report, followed as an operator would: a node on
# memcached's defaults holding real JSON values (bench/data's, each under
# many keys), report on it; a node restarted with the options the advice
# names (a new memcached on a free loopback port, the same -m), refilled
# with the same keys; train --all on it; then that node filled past its
# memory with its values as the set writes them holds at least the items
# the advice forecast. The report says what to do after the restart.
# Real memcached; the speed limits lifted, the tuning cut to a few sizes
# and levels.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use Cache::Memcached::RustXS::Dict::NodeReader ();
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Dict::SettingsAdvisor qw(stored_item);
use Cache::Memcached::RustXS::Zstd ();
use CMRXDev::Corpus qw(corpus_halves);
use CMRXDev::NodeFill qw(fill_node);
use CMRXTest::DictSets qw(run_dict json_of by_prefix @AT_ONCE @NO_LIMITS);
use CMRXTest::Memcached;

plan skip_all => 'JSON::PP is needed for --json' unless eval { require JSON::PP; 1 };
my $MEMORY = 32;    # -m of both nodes
my @defaults = CMRXTest::Memcached->start_optional(count => 1, args => [ '-m', $MEMORY ]);
plan skip_all => CMRXTest::Memcached->unavailable unless @defaults;

my @FAMILIES = qw(gh npm compat);
my $COPIES = 20;
my @TUNING = ('--max-size', 32768, '--levels', '3,9,15', @NO_LIMITS);
my ($values) = corpus_halves(@FAMILIES);
# The node's keys: each value under $COPIES keys, the value's key and a
# counter of 7 digits (the fill past memory writes keys of the same length).
my @population = map { my $v = $_; map { [ sprintf('%s:%07d', $v->[0], $_), $v->[1] ] } 1 .. $COPIES }
                 map { @{ $values->{$_} } } @FAMILIES;
sub fill_population {
    my ($address) = @_;
    my @todo = @population;
    return fill_node($address, sub { shift @todo });
}

# ---- report on the node on memcached's defaults -----------------------------------

fill_population($defaults[0]->address);
my ($st, $out, $err) = run_dict([ 'report', '--server', $defaults[0]->address, @TUNING, '--json' ]);
is $st, 0, 'report on a node on memcached\'s defaults: exit 0' or diag $err;
my $advice = json_of($out)->{memcached_settings};
my $node = $advice->{nodes}[0];
ok $node->{change}, "the advice names other options: $node->{best}{options} (+" . sprintf('%.1f', 100 * $node->{gain}) . ' %)'
    or BAIL_OUT('no advice to follow');
my ($options, $forecast) = @{ $node->{best} }{qw(options items)};
like $advice->{procedure}, qr/train on a restarted, refilled node \(cmrx-dict train --all --server/,
    'the procedure says to train on the restarted node';
like $advice->{procedure}, qr/Cache::Memcached::RustXS::Operations, "Changing them:\s+one node at a time"/,
    '... and points to the operations guide\'s steps';
($st, $out, $err) = run_dict([ 'report', '--server', $defaults[0]->address, @TUNING, '--prefix', 'gh' ]);
like $out, qr/^ +advice: start it with .*\n(?:.*\n)*^Then train on a restarted, refilled node/m,
    '... as text, after the advice';
$defaults[0]->stop;

# ---- restarted with the advised options, refilled, trained on -----------------------------

my @args = split ' ', $options;
my @advised = CMRXTest::Memcached->start_optional(count => 1, args => [ '-m', $MEMORY, @args ]);
ok @advised, "a node started with -m $MEMORY $options" or BAIL_OUT(CMRXTest::Memcached->unavailable);
my $address = $advised[0]->address;
fill_population($address);
my $dir = File::Spec->catfile(File::Temp::tempdir(CLEANUP => 1), 'set');
($st, $out, $err) = run_dict([ 'train', '--all', '--server', $address, @TUNING, @AT_ONCE, '--out-dir', $dir, '--json' ]);
is $st, 0, 'train --all on the restarted node: exit 0' or diag $err;
my $p = by_prefix(json_of($out));
is scalar(grep { ($p->{"$_:"}{action} || '') eq 'added' } @FAMILIES), scalar @FAMILIES, '... a dictionary for each family';

# ---- a node with those options filled past its memory, as the set writes -----------------
#
# A fresh one: the refill above, written raw, left pages in the classes of
# raw values, which memcached gives back only slowly (slab_automove); the
# forecast is of a node whose memory went to the values as written.

# The node's values as the set's writers store them (a writer per prefix,
# compress_threshold 64, a frame kept at most 0.8 of its value).
my %stored;
for my $family (@FAMILIES) {
    my $methods = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => "$family:");
    for my $v (@{ $values->{$family} }) {
        my ($value, $frame) = ($v->[1]);
        my $n = $methods->[0]->(\$value, \$frame) ? length $frame : undef;
        my (undef, $length, $flags) = @{ stored_item(0, length $value, $n, 64, 0.8) };
        $stored{ $v->[0] } = [ $flags ? $frame : $value, $flags ];
    }
}
$advised[0]->stop;
my @fresh = CMRXTest::Memcached->start_optional(count => 1, args => [ '-m', $MEMORY, @args ]);
ok @fresh, "a fresh node started with -m $MEMORY $options" or BAIL_OUT(CMRXTest::Memcached->unavailable);
$address = $fresh[0]->address;
my $reader = Cache::Memcached::RustXS::Dict::NodeReader->connect($address);
my $model = Cache::Memcached::RustXS::Dict::SlabModel->from_server($reader);
# Written in rounds of every value (the node holds each under as many
# keys), each write under a key of its own, until every slab class is full.
my @round = map { [ $_->[0], @{ $stored{ $_->[0] } } ] } map { @{ $values->{$_} } } @FAMILIES;
my ($fill_forecast, $rounds) = $model->forecast_items([ map { [ length($_->[0]) + 8, length $_->[1], $_->[2] ] } @round ]);
my $n = 0;
fill_node($address, sub {
    return undef if $n >= ($rounds + 1) * @round;
    my $r = $round[ $n % @round ];
    return [ sprintf('%s:%07d', $r->[0], $n++), $r->[1], $r->[2] ];
});
my $stats = $reader->stats;
cmp_ok $stats->{evictions}, '>', 0, "filled past its memory ($n sets in " . ($rounds + 1) . ' rounds)';
cmp_ok $stats->{curr_items}, '>=', $forecast,
    "the set trained on the restarted node holds at least the advice's forecast: $stats->{curr_items} items "
  . sprintf('against %d (%+.1f %%; the model of this fill forecast %d)', $forecast,
            100 * ($stats->{curr_items} / $forecast - 1), $fill_forecast);

done_testing;
