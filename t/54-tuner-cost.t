#!/usr/bin/perl
# One tuner, with the dictionary's cost inside it, against a real memcached
# whose key counts the tuner takes: a prefix of a hundred-odd keys gets a
# small dictionary that pays for itself over them (where the candidate
# storing least, counted without its own bytes, would not); a prefix whose
# values no dictionary helps, and one of too few keys for any size to pay,
# are refused, saying why; plain report and single-prefix train use the
# same tuner and name its choice. No timing decides: the runs lift the
# speed limits (bench/ measures speed). Memory is the forecast of the items
# a memcached of the server's settings holds (Dict::SettingsAdvisor's forecast).
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use Cache::Memcached::RustXS::Dict::NodeReader ();
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Dict qw(held_out_split);
use Cache::Memcached::RustXS::Dict::Measure ();
use Cache::Memcached::RustXS::Dict::Tune ();
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::DictSets qw(run_dict json_of by_prefix @NO_LIMITS @AT_ONCE);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set);

my $server = CMRXTest::Memcached->start_or_skip;
my $ADDR = $server->address;
plan skip_all => 'JSON::PP is needed for --json' unless eval { require JSON::PP; 1 };

my $TMP = File::Temp::tempdir(CLEANUP => 1);

# ---- the cache -----------------------------------------------------------------------

# npm: the corpus's 137 JSON documents (keys npm:NAME), each under one key:
# a small prefix, as perf: was; noise: 40 values of random bytes, which no
# dictionary helps; few: 10 short JSON records, too few keys for any
# dictionary to pay for itself.
my $corpus = corpus_values('bench/data/values');
my @npm = @{ $corpus->{npm} };
srand 54;
my @noise = map { my $i = $_; [ sprintf('noise:%03d', $i), join '', map { chr int rand 256 } 1 .. 600 + $i ] } 1 .. 40;
my @PLANS = qw(free pro team enterprise);
my @few = map { [ sprintf('few:%02d', $_),
                  sprintf '{"id":%d,"name":"user%d","email":"user%d@example.com","plan":"%s","tags":["t%d","t%d"],'
                        . '"score":%d,"active":%s}', $_, $_ * 7, $_ * 7, $PLANS[ $_ % 4 ], $_ % 5, $_ % 3,
                          ($_ * 37) % 1000, ($_ % 3 ? 'true' : 'false') ] } 1 .. 10;
for my $item (@npm, @noise, @few) {
    raw_set($ADDR, $item->[0], 0, $item->[1]) or die "set $item->[0] failed";
}

# ---- train --all: the small prefix gets a small dictionary ----------------------------

my $dir = File::Spec->catfile($TMP, 'set');
my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--server', $ADDR, '--out-dir', $dir, '--json' ]);
is $st, 0, 'train --all --server: exit 0' or diag $err;
my $p = by_prefix(json_of($out));

my $n = $p->{'npm:'};
is $n->{keys}, 137, 'npm: the server counts its 137 keys';
is $n->{cost_model}, 'keys', '... and the tuner counts them';
is $n->{action}, 'added', '... npm: gets a dictionary, not a refusal' or diag "why: " . ($n->{why} || '');
my $c = $n->{choice} || {};
my $entry = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir)->current('npm:');
ok $entry && $entry->{size} <= 16384, "... a small one: $c->{method} $c->{size}, "
                                     . ($entry ? $entry->{size} : '?') . ' bytes, level ' . ($c->{level} || '?');
my $saved = ($n->{baseline}{cost} || 0) - ($c->{keys_memory} || 0);
ok $entry && $saved > $entry->{size},
    "... that pays for itself: over the 137 keys it saves $saved bytes of memcached memory, more than its "
  . ($entry ? $entry->{size} : '?');
is $c->{cost}, $c->{keys_memory} + $c->{cost_bytes}, '... its cost: the memory over the keys plus the dictionary';
my @cands = @{ $n->{candidates} || [] };
ok !(grep { $_->{cost} < $c->{cost} } @cands), '... the least of every candidate';
# Every candidate's memory is the forecast's: the server's -m over the
# items it would hold of the held-out values as the set writes them, times
# those values.
my $limit = Cache::Memcached::RustXS::Dict::SlabModel->from_server(Cache::Memcached::RustXS::Dict::NodeReader->connect($ADDR))
                                                  ->memory_limit;
is_deeply [ grep { !$_->{items} || $_->{memory} != int($limit * $n->{held_out} / $_->{items} + 0.5) } @cands ], [],
    "... every candidate measured by the items a memcached of the server's -m holds (the choice: $c->{items})";
ok !(grep { $_->{cost} == $c->{cost} && ($_->{dictionary_bytes} < $c->{dictionary_bytes}
                                         || $_->{dictionary_bytes} == $c->{dictionary_bytes} && $_->{level} < $c->{level}) }
     @cands), '... and no cheaper candidate (smaller, or as small and lower) costs as little';
my ($least_memory) = sort { $a->{memory} <=> $b->{memory} } @cands;
ok $least_memory->{memory} < $c->{memory} && $least_memory->{cost_bytes} > $least_memory->{cost} - $c->{cost},
    "... where the candidate storing least ($least_memory->{method} $least_memory->{size}: $least_memory->{memory} "
  . "against $c->{memory}) costs more with its $least_memory->{cost_bytes} bytes";
ok $least_memory->{cost_bytes} > $n->{baseline}{cost} - $least_memory->{keys_memory},
    '... and would not have paid for itself: the old choice, refused';

# ---- refusals ------------------------------------------------------------------------

is $p->{'noise:'}{action}, 'none', 'noise: (random bytes) gets no dictionary';
like $p->{'noise:'}{why}, qr/would save only -?[0-9.]+ % of the memory without one/, '... because none helps';
is $p->{'few:'}{action}, 'none', 'few: (10 keys) gets no dictionary';
like $p->{'few:'}{why}, qr/no dictionary size pays for itself over its 10 keys/, '... because no size pays for itself';
is join(' ', grep { length } Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir)->prefixes), 'npm:', 'the set has npm: alone (among the prefixes; the whole-cache entry apart)';

# ---- the sizes tried -------------------------------------------------------------------

# None larger than the training values (a dictionary asked of too few
# samples comes out worse, not smaller), but the samples method also at
# the next size up, which holds them all: on the training values of the
# corpus's JSON halves (as t/47 trains on them) and of a handful.
for my $family (qw(gh npm compat)) {
    my ($half) = held_out_split([ sort { $a->[0] cmp $b->[0] } @{ $corpus->{$family} } ], $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT);
    my ($train) = held_out_split($half, $Cache::Memcached::RustXS::Dict::Tune::HOLD_OUT);
    my $bytes = 0;
    $bytes += length $_->[1] for @$train;
    my $sizes = Cache::Memcached::RustXS::Dict::Tune::candidate_sizes(training_bytes => $bytes);
    my @fastcover = @{ $sizes->{fastcover} };
    ok @fastcover && !(grep { $_ > $bytes } @fastcover),
        "$family: no fastcover or cover size above the $bytes training bytes (@fastcover)";
    my @over = grep { $_ > $bytes } @{ $sizes->{samples} };
    ok @over <= 1 && "@{ $sizes->{samples} }" eq join(' ', @fastcover, @over),
        "... and no samples size beyond the one that holds them all (@{ $sizes->{samples} })";
}
is_deeply Cache::Memcached::RustXS::Dict::Tune::candidate_sizes(training_bytes => 1500, max_size => 8192),
          { samples => [2048], fastcover => [2048] }, 'a handful of values: the smallest size alone';

# ---- plain report and single-prefix train: the same tuner -------------------------------

# run_dict lifts the speed limits of the set commands alone: these runs
# give @NO_LIMITS themselves.

# The choice on npm's even half (report's and train's training half), as
# the tuner makes it here.
my @sorted = sort { $a->[0] cmp $b->[0] } @npm;
my ($even) = held_out_split(\@sorted, $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT);
my $memory = Cache::Memcached::RustXS::Dict::SlabModel->from_server(Cache::Memcached::RustXS::Dict::NodeReader->connect($ADDR));
my $want = Cache::Memcached::RustXS::Dict::Tune::tune(samples => $even, keys => 137, memory => $memory,
                                                      compress_time => 0, decompress_time => 0)->{choice};
my $want_s = "$want->{method} $want->{size} level $want->{level}";

($st, $out, $err) = run_dict([ 'report', '--server', $ADDR, '--prefix', 'npm', '--json', @NO_LIMITS ]);
is $st, 0, 'report --json: exit 0' or diag $err;
my $d = (json_of($out)->{prefixes} || [ {} ])->[0]{held_out}{zstd_dict} || {};
is "$d->{method} $d->{size} level $d->{level}", $want_s, "report: npm's dictionary is the tuner's choice ($want_s)";
is $d->{keys_counted}, 137, '... with the 137 keys counted';
cmp_ok $d->{dictionary_bytes}, '<=', 16384, "... a small one ($d->{dictionary_bytes} bytes)";

($st, $out, $err) = run_dict([ 'report', '--server', $ADDR, '--prefix', 'npm', @NO_LIMITS ]);
is $st, 0, 'report: exit 0' or diag $err;
like $out, qr/^Dictionaries tuned on the even half\b.*^  npm +\Q$want->{method}\E +$want->{size} +\d+ +$want->{level} +137$/ms,
    '... the text names it';

my $file = File::Spec->catfile($TMP, 'npm.dict');
($st, $out, $err) = run_dict([ 'train', '--server', $ADDR, '--prefix', 'npm', '--out', $file, @NO_LIMITS ]);
is $st, 0, 'train --prefix: exit 0' or diag $err;
like $out, qr/^  tuned: \Q$want->{method}\E, $want->{size} bytes asked, for zstd level $want->{level} /m,
    "train: names the tuner's choice";
my ($bytes) = $out =~ /^Wrote .*: a zstd dictionary of (\d+) bytes/m;
ok defined $bytes && $bytes == -s $file, "... and writes it ($bytes bytes)";
cmp_ok -s $file, '<=', 16384, '... small, as the keys are few';

done_testing;
